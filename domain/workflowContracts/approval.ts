/**
 * The approval workflow's contract (id `approval-<approvalId>`): input, decision updates, status query, failure types.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type ApprovalStatus = 'pending' | 'approving' | 'rejecting' | 'approved' | 'rejected' | 'expired';

export interface ApprovalWorkflowInput {
  approvalId: string;
  userId: string;
  /** Length of the approval window in ms (config APPROVAL_WINDOW, resolved by the activity that created the item). */
  windowMs: number;
}

export interface ApprovalDecision {
  userId: string;
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
