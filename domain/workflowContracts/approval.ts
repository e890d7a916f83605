/**
 * The approval workflow's contract (id `approval-<approvalId>`): input, decision updates, status query, failure types.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import type { WorkspaceInput } from './workspaceInput';
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type ApprovalStatus = 'pending' | 'approving' | 'rejecting' | 'approved' | 'rejected' | 'expired';

/** `workspaceId`: the workspace the work is for and paid by (DESIGN.md "Teams (workspaces)"). */
export interface ApprovalWorkflowInput extends WorkspaceInput {
  approvalId: string;
  /** Length of the approval window in ms (config APPROVAL_WINDOW, resolved by the activity that created the item). */
  windowMs: number;
}

/**
 * Who decides, in which workspace. `userId` is the acting user (recorded as the actor of the consume row and of the
 * release); `workspaceId` the workspace the request acts in (checked against the item's workspace by the validator).
 * Updates sent before the rename name it `accountId`; updates sent before workspaces carry neither: their `userId` was
 * the owner, which is also the id of a personal workspace, so the validator checks it in its place and old histories
 * replay unchanged (decisionWorkspaceId).
 */
export interface ApprovalDecision {
  userId: string;
  workspaceId?: string;
  /** The workspace under its old name, in updates recorded before the rename. Never written. */
  accountId?: string;
  /** A rejection with a request for changes keeps the watermarked preview: the next version is compared with it. */
  keepPreview?: boolean;
  /**
   * A guest of a review link decides (issue 43): `userId` is then the member who made the link (the actor the ledger
   * records), and the decision counts as the link's one approval under the item's policy, whoever of its guests gives it.
   */
  guest?: GuestDecider;
}

/** The guest of a review link who decides, as they named themselves on the link's page. */
export interface GuestDecider {
  reviewLinkId: string;
  name: string;
  email: string;
}

/** Whose approval a decision is, for "one approval per person": the member, or the review link of a guest. */
export function approverKey(decision: Pick<ApprovalDecision, 'userId' | 'guest'>): string {
  return decision.guest ? `link:${decision.guest.reviewLinkId}` : decision.userId;
}

export function decisionWorkspaceId(decision: ApprovalDecision): string {
  return decision.workspaceId ?? decision.accountId ?? decision.userId;
}

export interface ApprovalDecisionResult {
  /** `pending`: the approval was recorded and the item's policy waits for more (domain/approvalPolicy.ts) */
  status: 'approved' | 'rejected' | 'pending';
  contentId: string | null;
  /** Set when this rejection is the 4th in a row (REJECTION_STREAK_WARNING). */
  warning: string | null;
  code: string | null;
}

export const approveUpdate = defineUpdate<ApprovalDecisionResult, [ApprovalDecision]>('approve');
export const rejectUpdate = defineUpdate<ApprovalDecisionResult, [ApprovalDecision]>('reject');
export const approvalStatusQuery = defineQuery<ApprovalStatus>('approvalStatus');

export const APPROVAL_NOT_PENDING = 'APPROVAL_NOT_PENDING';
export const APPROVAL_NOT_OWNER = 'APPROVAL_NOT_OWNER';
