/**
 * Upload intents (the `upload_intents` table): an upload claims the object it is about to store before the put, marks
 * when the put finished (the object became visible), and gives the claim up in the transaction that records the render,
 * or once a refused upload's object is removed. So no stored object is ever without a row that claims it:
 *
 * - a process killed between the put and the render row (the chaos soak killed an API there: issue 41 item 9) leaves
 *   the intent with its object; the invariant checker counts such an object as claimed while the sweep is not yet due;
 * - the abandoned-upload sweep (every 5 minutes, workflows/storageMaintenance.ts) removes an object whose intent is
 *   older than ABANDONED_UPLOAD_AFTER_MS (the put-to-row step takes seconds), and its thumbnail and preview, then the
 *   intent; an intent whose put never finished (killed while the file streamed: nothing was stored) after a day.
 *
 * The sweep and the recording transaction each delete the intent first, and only the one that deleted it acts: an
 * upload whose intent the sweep took refuses to record (UPLOAD_EXPIRED), so a swept object is never recorded.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { DomainError } from '../../domain/errors';
import type { ObjectStorage } from '../../storage';
import { derivedRenderPaths } from './orphanedObjects';
import type { StoredFileRef } from './storedFiles';

/** An object stored this long ago that its upload never recorded was abandoned. */
export const ABANDONED_UPLOAD_AFTER_MS = 10 * 60 * 1000;
/** An intent whose put never finished (nothing was stored) is dropped after this. */
export const UNFINISHED_UPLOAD_AFTER_MS = 24 * 60 * 60 * 1000;
/** How often the sweep runs (the `abandoned-uploads` schedule). */
export const ABANDONED_UPLOAD_SWEEP_EVERY_MS = 5 * 60 * 1000;
const SWEEP_BATCH = 200;

type Db = Knex | Knex.Transaction;

/** Claims `ref` for an upload of `workspaceId`, before anything is stored there. */
export async function claimUpload(db: Db, ref: StoredFileRef, workspaceId: string): Promise<void> {
  await db('upload_intents').insert({ bucket: ref.bucket, path: ref.path, workspace_id: workspaceId });
}

/** The put finished: the object is visible from now, and the sweep counts its age from here. */
export async function markUploadStored(db: Db, ref: StoredFileRef): Promise<void> {
  await db('upload_intents').where({ bucket: ref.bucket, path: ref.path }).update({ stored_at: db.fn.now() });
}

/** Gives up the claim: the object was removed (a refused or failed upload), or is about to be recorded (`recording`). */
export async function releaseUpload(db: Db, ref: StoredFileRef, options: { recording?: boolean } = {}): Promise<void> {
  const released = await db('upload_intents').where({ bucket: ref.bucket, path: ref.path }).del();
  if (options.recording && released === 0) {
    throw new DomainError(409, 'UPLOAD_EXPIRED', 'The upload took too long to be saved and was removed. Please upload the file again.');
  }
}

export interface AbandonedUploadSweep {
  /** bucket/path of every object removed (each with its thumbnail and preview, when it had them) */
  removed: string[];
  /** intents dropped whose object was recorded after all, or was never stored */
  released: number;
}

/** The files an intent stands for: the object, and for a render its thumbnail and preview (made beside it). */
function claimedPaths(ref: StoredFileRef): string[] {
  return ref.bucket === 'renders' ? [ref.path, ...derivedRenderPaths(ref.path)] : [ref.path];
}

/** Removes what abandoned uploads left (see the header). */
export async function sweepAbandonedUploads(deps: { knex: Knex; objects: ObjectStorage; logger?: Logger }, options: { now?: number } = {}): Promise<AbandonedUploadSweep> {
  const now = options.now ?? Date.now();
  const storedBefore = new Date(now - ABANDONED_UPLOAD_AFTER_MS);
  const startedBefore = new Date(now - UNFINISHED_UPLOAD_AFTER_MS);
  const removed: string[] = [];
  let released = 0;
  for (;;) {
    const due = (await deps.knex('upload_intents')
      .where('stored_at', '<', storedBefore)
      .orWhere((q) => q.whereNull('stored_at').andWhere('created_at', '<', startedBefore))
      .orderBy('created_at')
      .limit(SWEEP_BATCH)
      .select('id', 'bucket', 'path')) as Array<{ id: string; bucket: StoredFileRef['bucket']; path: string }>;
    for (const intent of due) {
      // taken first: an upload recording it at this moment finds it gone and refuses (releaseUpload)
      const taken = await deps.knex('upload_intents').where({ id: intent.id }).del();
      if (taken === 0) continue;
      const recorded = await deps.knex('renders').where({ storage_bucket: intent.bucket, storage_path: intent.path }).first('id');
      if (recorded) {
        released += 1;
        continue;
      }
      await deps.objects.remove(intent.bucket, claimedPaths(intent));
      removed.push(`${intent.bucket}/${intent.path}`);
    }
    if (due.length < SWEEP_BATCH) break;
  }
  if (removed.length) deps.logger?.info({ removed: removed.length }, 'removed what abandoned uploads stored');
  return { removed, released };
}

/**
 * The paths the intents claim, for the invariant checker: each intent's object (and a render's thumbnail and preview)
 * while its sweep is not overdue (stored less than the abandon age, plus one sweep period, before `before`). An
 * object whose intent is overdue is reported: the sweep should have removed it.
 */
export async function pathsClaimedByUploads(db: Db, before: Date): Promise<StoredFileRef[]> {
  const overdue = new Date(before.getTime() - ABANDONED_UPLOAD_AFTER_MS - ABANDONED_UPLOAD_SWEEP_EVERY_MS);
  const rows = (await db('upload_intents')
    .whereNull('stored_at')
    .orWhere('stored_at', '>', overdue)
    .select('bucket', 'path')) as Array<{ bucket: StoredFileRef['bucket']; path: string }>;
  return rows.flatMap((row) => claimedPaths(row).map((path) => ({ bucket: row.bucket, path })));
}
