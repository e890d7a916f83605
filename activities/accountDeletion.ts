/**
 * Activities of the account deletion workflow (workflows/accountDeletion.ts). Each one is safe to run again
 * after a crash: they read what is left from the database and storage and act only on that, so a retried step
 * finds its work done and does nothing twice. Rows go last, so until then they still name every file.
 *
 * Workspaces (DESIGN.md "Teams (workspaces)"; services/accounts/accountWorkspaces.ts): the account's personal
 * workspace goes with it, everything in it, unless its ownership was transferred to another member: then it stays
 * as a team workspace, and only what is the user's own goes (their exports, memberships, sessions). In workspaces
 * shared with others, the user's running jobs are cancelled (their own clean-up releases the credits they hold),
 * while what they made for the workspace stays: approved content, pending items, and their ledger rows, which then
 * read 'deleted account'.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { ACCOUNT_DATA_MESSAGES, EXPORT_BUCKET, exportFolder, type SoleOwnedWorkspace } from '../domain/accountData';
import { releaseReservation } from '../services/billing/credits';
import { listUserFiles, userFolders } from '../services/accounts/userData';
import { soleOwnedSharedWorkspaces, workspacesGoingWithAccount } from '../services/accounts/accountWorkspaces';
import { isBucket, type Bucket } from '../storage';
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

  /**
   * The ids of the workflows the deletion ends: every generation job, unsettled reservation and export of the
   * workspace that goes with the account, the user's own running jobs in every other workspace (started by them,
   * `created_by`, or holding a reservation they made, `metadata.actorId`), their exports and their onboarding.
   */
  async function runningWorkflowIds(userId: string): Promise<string[]> {
    const ids = new Set<string>();
    const going = await workspacesGoingWithAccount(knex, userId);
    const ofAccount = (q: Knex.QueryBuilder) =>
      q.where((w) => {
        w.where({ created_by: userId });
        if (going.length) w.orWhereIn('workspace_id', going);
      });
    const jobs = await ofAccount(knex('video_generation_jobs')).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const edits = await ofAccount(knex('ai_image_edits')).whereIn('status', ACTIVE_JOB).whereNotNull('workflow_id').pluck('workflow_id');
    const assemblies = await ofAccount(knex('assembly_jobs')).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const drafts = await ofAccount(knex('draft_jobs')).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    const exports = await knex('data_exports').where({ workspace_id: userId }).whereIn('status', ACTIVE_JOB).pluck('workflow_id');
    // an image edit writes its row only at its end: its running reservation names it from the start
    const reservations = await knex('credit_reservations')
      .where({ status: 'active' })
      .where((w) => {
        w.whereRaw("metadata->>'actorId' = ?", [userId]);
        if (going.length) w.orWhereIn('workspace_id', going);
      })
      .pluck('idempotency_key');
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
    /**
     * No sign-in from now on and no session left: set once (the API sets it too, before it starts the workflow).
     * First checks again, under the lock the API takes, that the user is not the only owner of a workspace with
     * other members (an invitation accepted or an ownership change since the API's check): then it takes the mark
     * back and answers the refusal, and the workflow ends without deleting anything.
     */
    async markAccountForDeletion({ userId }: { userId: string }): Promise<{ exists: boolean; refused?: SoleOwnedWorkspace[] }> {
      return knex.transaction(async (trx) => {
        const user = await trx('users').where({ id: userId }).forUpdate().first('id');
        if (!user) return { exists: false };
        const blocking = await soleOwnedSharedWorkspaces(trx, userId, { lock: true });
        if (blocking.length > 0) {
          await trx('users').where({ id: userId }).update({ deletion_requested_at: null });
          logger.warn({ userId, workspaces: blocking.map((w) => w.id) }, 'account deletion refused: only owner of a shared workspace');
          return { exists: true, refused: blocking };
        }
        await trx('users').where({ id: userId }).update({ deletion_requested_at: trx.raw('coalesce(deletion_requested_at, now())') });
        await trx('sessions').where({ user_id: userId }).delete();
        // nobody joins a workspace that is going with the account (its files go before its rows): its open
        // invitations are revoked now, under the same workspace locks an acceptance takes
        const going = await workspacesGoingWithAccount(trx, userId);
        if (going.length) {
          await trx('workspace_invitations').whereIn('workspace_id', going).whereNull('accepted_at').whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
        }
        return { exists: true };
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

    /**
     * Ends the approval workflow of every pending item of the workspace that goes with the account and gives back the
     * credits it holds; the items read as expired. Items in a workspace that stays are the workspace's: they wait for
     * its other members.
     */
    async endUserApprovals({ userId }: { userId: string }): Promise<{ ended: number }> {
      return heartbeating(async (ctx) => {
        const going = await workspacesGoingWithAccount(knex, userId);
        const pending = (await knex('pending_approvals').whereIn('workspace_id', going).where({ status: 'pending' }).select('id', 'workflow_id')) as Array<{ id: string; workflow_id: string }>;
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

    /**
     * Removes every file the rows of the workspaces going with the account name and every folder that only holds
     * their files, in every bucket, and the user's export zips (also of a personal workspace that stays).
     */
    async removeUserFiles({ userId }: { userId: string }): Promise<{ removed: number }> {
      return heartbeating(async (ctx) => {
        const going = await workspacesGoingWithAccount(knex, userId);
        const files: Array<{ bucket: Bucket; path: string }> = [];
        for (const workspaceId of going) files.push(...(await listUserFiles(knex, workspaceId, { includeExports: true, approvals: 'all' })));
        const zips = (await knex('data_exports').where({ workspace_id: userId }).whereNotNull('storage_path').select('storage_bucket', 'storage_path')) as Array<{ storage_bucket: string; storage_path: string }>;
        for (const zip of zips) if (isBucket(zip.storage_bucket) && !files.some((f) => f.bucket === zip.storage_bucket && f.path === zip.storage_path)) files.push({ bucket: zip.storage_bucket, path: zip.storage_path });
        const byBucket = new Map<Bucket, string[]>();
        for (const file of files) byBucket.set(file.bucket, [...(byBucket.get(file.bucket) ?? []), file.path]);
        // failures propagate: the step is retried rather than leaving a file behind
        for (const [bucket, paths] of byBucket) {
          await storage.objects.remove(bucket, paths);
          ctx.heartbeat();
        }
        for (const workspaceId of going) for (const folder of await userFolders(knex, workspaceId)) await storage.objects.removePrefix(folder.bucket, folder.prefix);
        await storage.objects.removePrefix(EXPORT_BUCKET, exportFolder(userId));
        return { removed: files.length };
      });
    },

    /**
     * Deletes the users row; its foreign keys cascade to the sessions, the memberships and the personal workspace
     * (workspaces.personal_user_id), whose account row (profiles) cascades to its projects, content, jobs, approvals,
     * ledger, reservations, purchases, drafts and exports. A personal workspace whose ownership was transferred is
     * handed over first (personal_user_id cleared), so the cascade leaves it and its content; the user's exports in
     * it go. Ledger rows the user wrote in workspaces that stay keep their amounts, without the name of who wrote
     * them ('deleted account'); jobs and items they started there lose their `created_by` (set null), and their
     * reservations there the `actorId` and `releasedBy` in their metadata (kept as null).
     */
    async deleteUserRows({ userId }: { userId: string }): Promise<{ deleted: boolean; keptPersonalWorkspace: boolean }> {
      return knex.transaction(async (trx) => {
        const going = await workspacesGoingWithAccount(trx, userId);
        const personal = (await trx('workspaces').where({ personal_user_id: userId }).first('id')) as { id: string } | undefined;
        const kept = Boolean(personal) && !going.includes(String(personal?.id));
        if (personal && kept) {
          await trx('workspaces').where({ id: personal.id }).update({ personal_user_id: null, updated_at: trx.fn.now() });
          await trx('data_exports').where({ workspace_id: userId }).delete();
        }
        // a workspace that stays never loses its last owner: should one have lost its other owner since the check
        // (a race), its longest-standing member of the highest role becomes owner
        await trx.raw(
          `update workspace_members m set role = 'owner', updated_at = now()
             from (select distinct on (o.workspace_id) o.workspace_id, o.user_id
                     from workspace_members o
                     join workspace_members mine on mine.workspace_id = o.workspace_id and mine.user_id = :userId and mine.role = 'owner'
                    where o.user_id <> :userId
                      and not exists (select 1 from workspace_members x where x.workspace_id = o.workspace_id and x.role = 'owner' and x.user_id <> :userId)
                    order by o.workspace_id, array_position(array['admin', 'member', 'viewer'], o.role), o.created_at, o.user_id) heir
            where m.workspace_id = heir.workspace_id and m.user_id = heir.user_id`,
          { userId },
        );
        // the account row of a workspace that stays names a remaining owner, not the deleted user (a team
        // workspace's carries its creator's e-mail; a personal one handed over its user's e-mail and name)
        const user = (await trx('users').where({ id: userId }).first('email')) as { email: string } | undefined;
        if (user) {
          await trx.raw(
            `update profiles p set email = heir.email, name = case when p.id = :userId then w.name else p.name end, updated_at = now()
               from workspaces w,
                    lateral (select u.email from workspace_members m join users u on u.id = m.user_id
                              where m.workspace_id = w.id and m.role = 'owner' and m.user_id <> :userId
                              order by m.created_at, u.email limit 1) heir
              where p.id = w.id and (p.email = :email or p.id = :userId)
                and w.id::text not in (select jsonb_array_elements_text(:going::jsonb))`,
            { userId, email: user.email, going: JSON.stringify(going) },
          );
        }
        await trx('credit_transactions')
          .where({ created_by: userId })
          .modify((q) => {
            if (going.length) q.whereNotIn('workspace_id', going);
          })
          .update({ created_by: null, created_by_email: 'deleted account' });
        // reservations of workspaces that stay keep who started their job in their metadata (the consume's fallback
        // for the ledger row, spend per member's "generated"): the id goes, as the ledger's and the jobs' do, and
        // the key stays with null, so the charge still counts for a deleted account rather than its approver
        for (const key of ['actorId', 'releasedBy']) {
          await trx('credit_reservations')
            .whereRaw('metadata->>? = ?', [key, userId])
            .update({ metadata: trx.raw(`jsonb_set(metadata, array[?], 'null'::jsonb)`, [key]) });
        }
        // the invitations the user accepted name their e-mail: they go with the account (the membership they made
        // goes anyway); open invitations to the address stay the inviting workspace's
        await trx('workspace_invitations').where({ accepted_by: userId }).delete();
        // team workspaces only the user was in go with their content (the personal one cascades from the users row)
        const teams = going.filter((id) => id !== personal?.id);
        if (teams.length) await trx('workspaces').whereIn('id', teams).delete();
        const deleted = await trx('users').where({ id: userId }).delete();
        return { deleted: deleted > 0, keptPersonalWorkspace: kept };
      });
    },
  };
}

export type AccountDeletionActivities = ReturnType<typeof createAccountDeletionActivities>;
