/**
 * Ending a workspace's running work: the runs a removed member started in it (their reservations go back to the
 * workspace's balance), or every run of a workspace that is being deleted.
 *
 * Runs are cancelled, as the Activity view's and the clip view's cancel do (services/generation/videoGeneration.ts)
 * and as account deletion does (activities/accountDeletion.ts): the workflow's own clean-up then releases its
 * reservation, removes its working files and marks its row cancelled. A run that has not closed within the wait is
 * left to finish its clean-up on its own (the cancellation is recorded in its history, so it will).
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';

type Db = Knex | Knex.Transaction;

const ACTIVE_JOB = ['pending', 'processing'];
/** The job tables whose rows name the workspace (`workspace_id`) and the member who started them (`created_by`). */
const JOB_TABLES = ['video_generation_jobs', 'assembly_jobs', 'draft_jobs', 'ai_image_edits'] as const;
/** Reservations are keyed by the id of the workflow that made them (clip-…, image-edit-…). */
const GENERATION_WORKFLOW_ID = /^(clip|image-edit|assembly|draft)-[0-9A-Za-z-]+$/;
/** How long a removal or deletion waits for the cancelled runs to close (their clean-up included). */
export const CANCEL_WAIT_MS = 15_000;

function isGone(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /not found|already completed|already been completed|workflow execution already/i.test(message);
}

/**
 * The workflow ids of the workspace's running jobs (and of runs that may still hold one of its reservations); only
 * those `startedBy` started when given. Without it (the whole workspace), running data exports too.
 */
export async function runningWorkflowIds(db: Db, workspaceId: string, startedBy?: string): Promise<string[]> {
  const ids = new Set<string>();
  for (const table of JOB_TABLES) {
    const query = db(table).where({ workspace_id: workspaceId }).whereIn('status', ACTIVE_JOB).whereNotNull('workflow_id');
    if (startedBy) query.andWhere({ created_by: startedBy });
    for (const id of await query.pluck('workflow_id')) ids.add(String(id));
  }
  if (!startedBy) {
    for (const id of await db('data_exports').where({ workspace_id: workspaceId }).whereIn('status', ACTIVE_JOB).whereNotNull('workflow_id').pluck('workflow_id')) ids.add(String(id));
  }
  // a running image edit has no row until it ends: its active reservation names its workflow (and its starter,
  // `actorId` in the metadata); one whose run is over (an item waiting for approval) is skipped by cancelRuns
  const reservations = db('credit_reservations').where({ workspace_id: workspaceId, status: 'active' });
  if (startedBy) reservations.andWhereRaw("metadata->>'actorId' = ?", [startedBy]);
  for (const key of await reservations.pluck('idempotency_key')) if (GENERATION_WORKFLOW_ID.test(String(key))) ids.add(String(key));
  return [...ids];
}

/** Requests the cancellation of each run; false for a run that is closed or unknown. */
async function cancelRun(client: Client, workflowId: string): Promise<boolean> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return false;
    await handle.cancel();
    return true;
  } catch (err) {
    if (isGone(err)) return false;
    throw err;
  }
}

/**
 * Cancels the runs and waits (up to `waitMs`) for them to close, so their reservations are back when this returns.
 * Returns how many were cancelled and whether every one of them closed within the wait.
 */
export async function cancelRuns(
  client: Client,
  workflowIds: readonly string[],
  options: { waitMs?: number; logger?: Pick<Logger, 'warn'> } = {},
): Promise<{ cancelled: string[]; closed: boolean }> {
  const cancelled: string[] = [];
  await Promise.all(
    workflowIds.map(async (id) => {
      try {
        if (await cancelRun(client, id)) cancelled.push(id);
      } catch (err) {
        options.logger?.warn({ err, workflowId: id }, 'could not cancel a workflow');
      }
    }),
  );
  if (cancelled.length === 0) return { cancelled, closed: true };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), options.waitMs ?? CANCEL_WAIT_MS)));
  const allClosed = Promise.all(cancelled.map((id) => client.workflow.getHandle(id).result().catch(() => undefined))).then(() => true as const);
  const closed = await Promise.race([allClosed, timeout]);
  clearTimeout(timer);
  return { cancelled, closed };
}

/** Terminates a run that did not close after its cancellation (the workspace is going: nothing of it is kept). */
export async function terminateRun(client: Client, workflowId: string, reason: string): Promise<void> {
  try {
    await client.workflow.getHandle(workflowId).terminate(reason);
  } catch (err) {
    if (!isGone(err)) throw err;
  }
}
