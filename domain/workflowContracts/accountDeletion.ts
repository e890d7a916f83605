/**
 * The account deletion workflow's contract (id `account-deletion-<userId>`): input, state query, result.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery } from '@temporalio/workflow';
import type { SoleOwnedWorkspace } from '../accountData';

export interface AccountDeletionInput {
  userId: string;
}

export type AccountDeletionStep = 'marking' | 'refused' | 'cancelling_workflows' | 'ending_approvals' | 'removing_files' | 'removing_rows' | 'deleted';

export interface AccountDeletionState {
  step: AccountDeletionStep;
  progress: number;
}

export interface AccountDeletionResult {
  cancelledWorkflows: number;
  endedApprovals: number;
  removedFiles: number;
  deletedUser: boolean;
  /**
   * Set when the first step found the user the only owner of a workspace with other members (a race with the API's
   * own check): nothing was deleted and the account's deletion mark was taken back.
   */
  refused?: SoleOwnedWorkspace[];
  /** The user's personal workspace stayed, handed over to the member its ownership was transferred to. */
  keptPersonalWorkspace?: boolean;
}

export const accountDeletionStateQuery = defineQuery<AccountDeletionState>('accountDeletionState');
