/**
 * Activities of the account deletion workflow (workflows/accountDeletion.ts). Each one is safe to run again
 * after a crash: they read what is left from the database and storage and act only on that, so a retried step
 * finds its work done and does nothing twice. Rows go last, so until then they still name every file.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ACCOUNT_DATA_MESSAGES } from '../domain/accountData';
import { releaseReservation } from '../services/billing/credits';
import { listUserFiles, userFolders } from '../services/accounts/userData';
import type { Bucket } from '../storage';
import type { ActivityDeps } from './deps';

const ACTIVE_JOB = ['pending', 'processing'];
/** Reservations are keyed by the id of the workflow that made them (clip-…, image-edit-…). */
const GENERATION_WORKFLOW_ID = /^(clip|image-edit|assembly|draft)-[0-9A-Za-z-]+$/;

export interface AccountDeletionActivityOptions {
  /** How often the waiting activities heartbeat (ms). */
  heartbeatIntervalMs?: number;
  /** Most passes over the job tables while new runs keep appearing (a start that raced the deletion mark). */
  maxPasses?: number;
}

function isGone(err: unknown): boolean {
  // closed, or never existed: either way nothing of it runs any more
  if (err instanceof WorkflowNotFoundError) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /not found|already completed|already been completed|workflow execution already/i.test(message);
}

export function createAccountDeletionActivities(deps: Pick<ActivityDeps, 'knex' | 'storage' | 'logger'>, options: AccountDeletionActivityOptions = {}) {
  const { knex, storage, logger } = deps;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5_000;
  const maxPasses = options.maxPasses ?? 5;

  /** The ids of the user's workflows that may still run: generation jobs, unsettled reservations, exports, onboarding. */
  async function runningWorkflowIds(userId: string): Promise<string[]> {
    const ids = new Set<string>();
    const jobs = await knex('video_generation_jobs').where({ user_id: userId }).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const edits = await knex('ai_image_edits').where({ user_id: userId }).whereIn('status', ACTIVE_JOB).whereNotNull('workflow_id').pluck('workflow_id');
    const assemblies = await knex('assembly_jobs').where({ user_id: userId }).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const drafts = await knex('draft_jobs').where({ user_id: userId }).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const exports = await knex('data_exports').where({ user_id: userId }).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    // an image edit writes its row only at its end: its running reservation names it from the start
    const reservations = await knex('credit_reservations').where({ profile_id: userId, status: 'active' }).pluck('idempotency_key');
    for (const id of [...jobs, ...edits, ...assemblies, ...drafts, ...exports]) ids.add(String(id));
    for (const key of reservations) if (GENERATION_WORKFLOW_ID.test(String(key))) ids.add(String(key));
    const user = await knex('users').where({ id: userId }).first('id');
    if (user) ids.add(`onboarding-${userId}`);
    return [...ids];
  }

  /** Requests the cancellation and waits for the run to close (its clean-up included); a closed or unknown run is skipped. */
  async function cancelAndWait(client: Client, workflowId: string): Promise<boolean> {
    const handle = client.workflow.getHandle(workflowId);
    try {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') return false;
      await handle.cancel();
    } catch (err) {
      if (isGone(err)) return false;
      throw err;
    }
    // the run's own outcome (cancelled, failed, completed) does not matter here, only that it closed
    await handle.result().catch(() => undefined);
    return true;
  }

  function heartbeating<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
    const ctx = Context.current();
    ctx.heartbeat();
    const timer = setInterval(() => ctx.heartbeat(), heartbeatIntervalMs);
    return fn(ctx).finally(() => clearInterval(timer));
  }

  return {
    /** No sign-in from now on and no session left: set once (the API sets it too, before it answers). */
    async markAccountForDeletion({ userId }: { userId: string }): Promise<{ exists: boolean }> {
      return knex.transaction(async (trx) => {
        const marked = await trx('users').where({ id: userId }).update({ deletion_requested_at: trx.raw('coalesce(deletion_requested_at, now())') });
        await trx('sessions').where({ user_id: userId }).delete();
        return { exists: marked > 0 };
      });
    },

    /**
     * Cancels the user's running generation, export and onboarding workflows and waits for each to close, so
     * their own clean-up gives back their reservations and removes their files. Passes repeat while new runs
     * appear (one admitted just before the mark), up to `maxPasses`.
     */
    async cancelUserWorkflows({ userId }: { userId: string }): Promise<{ cancelled: number }> {
      return heartbeating(async (ctx) => {
        const seen = new Set<string>();
        let cancelled = 0;
        for (let pass = 0; pass < maxPasses; pass += 1) {
          const fresh = (await runningWorkflowIds(userId)).filter((id) => !seen.has(id));
          if (fresh.length === 0) break;
          for (const id of fresh) seen.add(id);
          const results = await Promise.all(fresh.map((id) => cancelAndWait(ctx.client, id)));
          cancelled += results.filter(Boolean).length;
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Account deletion step cancelled');
        }
        logger.info({ userId, cancelled }, 'account deletion: user workflows ended');
        return { cancelled };
      });
    },

    /** Ends the approval workflow of every pending item and gives back the credits it holds; the items read as expired. */
    async endUserApprovals({ userId }: { userId: string }): Promise<{ ended: number }> {
      return heartbeating(async (ctx) => {
        const pending = (await knex('pending_approvals').where({ user_id: userId, status: 'pending' }).select('id', 'workflow_id')) as Array<{ id: string; workflow_id: string }>;
        let ended = 0;
        for (const item of pending) {
          try {
            // terminated first: no approve can land between the release and the end of the run
            await ctx.client.workflow.getHandle(item.workflow_id).terminate(ACCOUNT_DATA_MESSAGES.accountBeingDeleted);
          } catch (err) {
            if (!isGone(err)) throw err;
          }
          const released = await knex.transaction(async (trx) => {
            // the lock order of every credit writer: profile, then the item
            await trx('profiles').where({ id: userId }).forUpdate().first('id');
            const row = await trx('pending_approvals').where({ id: item.id }).forUpdate().first('status', 'reservation_id');
            if (!row || row.status !== 'pending') return false;
            if (row.reservation_id) await releaseReservation(trx, { reservationId: row.reservation_id, reason: 'account deleted' });
            await trx('pending_approvals').where({ id: item.id }).update({ status: 'expired', decided_at: trx.fn.now() });
            return true;
          });
          if (released) ended += 1;
        }
        return { ended };
      });
    },

    /** Removes every file the user's rows name and every folder that only holds the user's files, in every bucket. */
    async removeUserFiles({ userId }: { userId: string }): Promise<{ removed: number }> {
      return heartbeating(async (ctx) => {
        const files = await listUserFiles(knex, userId, { includeExports: true, approvals: 'all' });
        const byBucket = new Map<Bucket, string[]>();
        for (const file of files) byBucket.set(file.bucket, [...(byBucket.get(file.bucket) ?? []), file.path]);
        // failures propagate: the step is retried rather than leaving a file behind
        for (const [bucket, paths] of byBucket) {
          await storage.objects.remove(bucket, paths);
          ctx.heartbeat();
        }
        for (const folder of await userFolders(knex, userId)) await storage.objects.removePrefix(folder.bucket, folder.prefix);
        return { removed: files.length };
      });
    },

    /**
     * Deletes the users row; its foreign keys cascade to the profile, sessions, projects, content, jobs, approvals,
     * ledger, reservations, purchases, drafts and exports. Ledger entries this user wrote on other profiles (as an
     * admin) stay, without the name of who wrote them.
     */
    async deleteUserRows({ userId }: { userId: string }): Promise<{ deleted: boolean }> {
      return knex.transaction(async (trx) => {
        await trx('credit_transactions').where({ created_by: userId }).whereNot({ profile_id: userId }).update({ created_by: null, created_by_email: 'deleted account' });
        const deleted = await trx('users').where({ id: userId }).delete();
        return { deleted: deleted > 0 };
      });
    },
  };
}

export type AccountDeletionActivities = ReturnType<typeof createAccountDeletionActivities>;
