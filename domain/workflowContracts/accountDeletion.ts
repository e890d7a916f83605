/**
 * The account deletion workflow's contract (id `account-deletion-<userId>`): input, state query, result.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery } from '@temporalio/workflow';

export interface AccountDeletionInput {
  userId: string;
}

export type AccountDeletionStep = 'marking' | 'cancelling_workflows' | 'ending_approvals' | 'removing_files' | 'removing_rows' | 'deleted';

export interface AccountDeletionState {
  step: AccountDeletionStep;
  progress: number;
}

export interface AccountDeletionResult {
  cancelledWorkflows: number;
  endedApprovals: number;
  removedFiles: number;
  deletedUser: boolean;
}

export const accountDeletionStateQuery = defineQuery<AccountDeletionState>('accountDeletionState');
