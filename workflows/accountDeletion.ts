/**
 * Deletes one account (id `account-deletion-<userId>`), in an order where every step can run again after a
 * crash: mark the account (no sign-in, sessions ended; refused, with nothing deleted, when the user turns out to be
 * the only owner of a workspace with other members), cancel the user's running generation and export
 * workflows and wait for them to close (their own clean-up releases their reservations and files), end the
 * approval workflows of pending items (releasing what they hold), remove every stored file, then every row
 * (the users row last, its foreign keys cascade). Each activity retries until it succeeds.
 */
import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { type AccountDeletionInput, type AccountDeletionResult, type AccountDeletionState, type AccountDeletionStep, accountDeletionStateQuery } from '../domain/workflowContracts/accountDeletion';
export * from '../domain/workflowContracts/accountDeletion';

type Activities = ReturnType<typeof createActivities>;

// a deletion must finish: no attempt limit, the backoff caps at a minute
const records = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

// the long steps (waiting for the user's workflows, removing files) heartbeat, so a dead worker is noticed quickly
const waits = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function accountDeletionWorkflow(input: AccountDeletionInput): Promise<AccountDeletionResult> {
  const state: AccountDeletionState = { step: 'marking', progress: 0 };
  setHandler(accountDeletionStateQuery, () => state);
  const step = (next: AccountDeletionStep, progress: number): void => {
    state.step = next;
    state.progress = progress;
  };

  const marked = await records.markAccountForDeletion({ userId: input.userId });
  if (marked.refused?.length) {
    // the only owner of a workspace with other members (checked again here: the API's check raced a change)
    step('refused', 100);
    return { cancelledWorkflows: 0, endedApprovals: 0, removedFiles: 0, deletedUser: false, refused: marked.refused };
  }
  step('cancelling_workflows', 10);
  const { cancelled } = await waits.cancelUserWorkflows({ userId: input.userId });
  step('ending_approvals', 50);
  const { ended } = await waits.endUserApprovals({ userId: input.userId });
  step('removing_files', 70);
  const { removed } = await waits.removeUserFiles({ userId: input.userId });
  step('removing_rows', 90);
  const { deleted, keptPersonalWorkspace } = await records.deleteUserRows({ userId: input.userId });
  step('deleted', 100);
  return { cancelledWorkflows: cancelled, endedApprovals: ended, removedFiles: removed, deletedUser: deleted, ...(keptPersonalWorkspace ? { keptPersonalWorkspace } : {}) };
}
