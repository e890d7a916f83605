/**
 * The approval workflow's contract (id `approval-<approvalId>`): input, decision updates, status query, failure types.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type ApprovalStatus = 'pending' | 'approving' | 'rejecting' | 'approved' | 'rejected' | 'expired';

export interface ApprovalWorkflowInput {
  approvalId: string;
  /** The account (workspace) the item belongs to: pending_approvals.user_id. */
  userId: string;
  /** Length of the approval window in ms (config APPROVAL_WINDOW, resolved by the activity that created the item). */
  windowMs: number;
}

/**
 * Who decides, in which workspace. `userId` is the acting user (recorded as the actor of the consume row and of the
 * release); `accountId` the workspace the request acts in (checked against the item's account by the validator).
 * Updates sent before workspaces carry no `accountId`: their `userId` was the owner, which is also the account of a
 * personal workspace, so the validator checks it in its place and old histories replay unchanged.
 */
export interface ApprovalDecision {
  userId: string;
  accountId?: string;
}

export interface ApprovalDecisionResult {
  status: 'approved' | 'rejected';
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
