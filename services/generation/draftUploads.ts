/**
 * Enhance Renders draft uploads are counted (draft_uploads): an upload takes its slot before a byte of it is stored,
 * and keeps its file only once it is registered, as a draft image by add-images or as a reference by a dispatch that
 * started a job with it. The slots (services/content/uploadLimits.ts):
 * - a draft's images: registered images plus image uploads waiting to be registered, at most 4 (the spec's limit,
 *   409 DRAFT_IMAGE_LIMIT with its text);
 * - a draft's waiting references: at most 6, the most attachments any model takes in one job (409 DRAFT_REFERENCE_LIMIT);
 * - an account's waiting uploads over all its drafts: DRAFT_UPLOADS_WAITING_PER_ACCOUNT (429 TOO_MANY_WAITING_DRAFT_UPLOADS).
 * Checked in the transaction that records the upload, under the account's lock, so they hold across API processes.
 * A sweep (every DRAFT_UPLOAD_SWEEP_EVERY_MS, in each API process) removes uploads left unregistered for
 * DRAFT_UPLOAD_MAX_AGE_MINUTES: their objects first, then their rows, with the rows locked meanwhile so a
 * registration waits for it and then finds the upload gone.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import type { StoredFile } from '../../domain/approvals';
import { DRAFT_LIMITS, DRAFTS_BUCKET } from '../../domain/enhanceRenders';
import { DomainError } from '../../domain/errors';
import type { Storage } from '../../storage';
import { uploadsSweptTotal } from '../platform/metrics';
import { PeriodicSweep } from '../platform/periodicSweep';
import { DRAFT_WAITING_REFERENCES_MAX, lockAccountUploads, UPLOAD_LIMIT_MSG, uploadLimitReached } from '../content/uploadLimits';

export type DraftUploadPurpose = 'image' | 'reference';

/** How often each API process looks for abandoned draft uploads: with the 30-minute default, gone within 35 minutes. */
export const DRAFT_UPLOAD_SWEEP_EVERY_MS = 5 * 60 * 1000;
const SWEEP_BATCH = 100;

export interface DraftUploadLimits {
  /** DRAFT_UPLOAD_MAX_AGE_MINUTES: an upload not registered this long after it started is removed. */
  maxAgeMinutes: number;
  /** DRAFT_UPLOADS_WAITING_PER_ACCOUNT */
  waitingPerAccount: number;
}

export interface DraftUploadsDeps {
  knex: Knex;
  storage: Storage;
  limits: DraftUploadLimits;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

interface WaitingRow {
  id: string;
  draft_id: string;
  purpose: DraftUploadPurpose;
}

export class DraftUploads {
  private sweep: PeriodicSweep | null = null;

  constructor(private readonly deps: DraftUploadsDeps) {}

  /**
   * Takes a slot for one upload into `draftId` (already found to be the user's and active) within `trx`, or refuses:
   * the caller has not read a byte of the file yet. Returns the upload's id (the stored file is named after it).
   */
  async reserve(trx: Knex.Transaction, workspaceId: string, draftId: string, purpose: DraftUploadPurpose): Promise<string> {
    const { limits } = this.deps;
    await lockAccountUploads(trx, 'draftUploads', workspaceId);
    const waiting = (await trx('draft_uploads').where({ workspace_id: workspaceId }).whereNull('registered_at').select('id', 'draft_id', 'purpose')) as WaitingRow[];
    const here = waiting.filter((w) => w.draft_id === draftId && w.purpose === purpose).length;
    if (purpose === 'image') {
      const row = (await trx('draft_images').where({ draft_id: draftId }).count<{ count: string }[]>('id as count'))[0];
      if (Number(row?.count ?? 0) + here >= DRAFT_LIMITS.maxImagesPerDraft) {
        throw uploadLimitReached('draft_images', 409, 'DRAFT_IMAGE_LIMIT', UPLOAD_LIMIT_MSG.draftImages);
      }
    } else if (here >= DRAFT_WAITING_REFERENCES_MAX) {
      throw uploadLimitReached('draft_references', 409, 'DRAFT_REFERENCE_LIMIT', UPLOAD_LIMIT_MSG.draftReferences(DRAFT_WAITING_REFERENCES_MAX, limits.maxAgeMinutes));
    }
    if (waiting.length >= limits.waitingPerAccount) {
      throw uploadLimitReached('draft_waiting_uploads', 429, 'TOO_MANY_WAITING_DRAFT_UPLOADS', UPLOAD_LIMIT_MSG.draftWaiting(limits.waitingPerAccount, limits.maxAgeMinutes));
    }
    const id = randomUUID();
    await trx('draft_uploads').insert({ id, workspace_id: workspaceId, draft_id: draftId, purpose, bucket: DRAFTS_BUCKET });
    return id;
  }

  /** The file's path, once its type is known and before it is written; false when the sweep has already taken the slot. */
  async placed(id: string, path: string): Promise<boolean> {
    return (await this.deps.knex('draft_uploads').where({ id }).update({ path })) === 1;
  }

  /**
   * The bytes are stored: true, or false when the upload outlasted its slot (the sweep removed the row meanwhile),
   * in which case the caller removes the file and refuses.
   */
  async stored(id: string, size: number): Promise<boolean> {
    return (await this.deps.knex('draft_uploads').where({ id }).update({ stored_at: this.deps.knex.fn.now(), size })) === 1;
  }

  /** A refused or failed upload gives its slot back (its file, if any, is the caller's to remove). */
  async release(id: string): Promise<void> {
    await this.deps.knex('draft_uploads').where({ id, registered_at: null }).del();
  }

  /** The same, by the stored file (an upload the request did not keep after all). */
  async releaseFile(file: StoredFile): Promise<void> {
    await this.deps.knex('draft_uploads').where({ bucket: file.bucket, path: file.path, registered_at: null }).del();
  }

  /**
   * Within add-images' transaction: the draft's uploads at `paths` become its images. Waits for a sweep holding one of
   * them; an upload the sweep removed is not marked (its file is gone, which the caller's stat then finds).
   */
  async registerImages(trx: Knex.Transaction, draftId: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    await trx('draft_uploads').where({ draft_id: draftId, bucket: DRAFTS_BUCKET }).whereIn('path', paths).whereNull('registered_at').update({ registered_at: trx.fn.now() });
  }

  /**
   * A dispatch is about to start jobs with these references: the user's waiting reference uploads among them are
   * registered (kept with the draft). Returns the ids it marked, for `unregister` when no job started. Files that
   * are no waiting upload (registered already, draft images, files from before uploads were counted) are untouched.
   */
  async registerReferences(workspaceId: string, files: StoredFile[]): Promise<string[]> {
    const paths = files.filter((f) => f.bucket === DRAFTS_BUCKET).map((f) => f.path);
    if (paths.length === 0) return [];
    const rows = (await this.deps.knex('draft_uploads')
      .where({ workspace_id: workspaceId, bucket: DRAFTS_BUCKET, purpose: 'reference' })
      .whereIn('path', paths)
      .whereNull('registered_at')
      .whereNotNull('stored_at')
      .update({ registered_at: this.deps.knex.fn.now() })
      .returning('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  async unregister(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.deps.knex('draft_uploads').whereIn('id', ids).update({ registered_at: null });
  }

  /** Forgets the upload rows of removed draft files (a removed image's upload). */
  async forget(draftId: string, paths: string[]): Promise<void> {
    if (paths.length > 0) await this.deps.knex('draft_uploads').where({ draft_id: draftId, bucket: DRAFTS_BUCKET }).whereIn('path', paths).del();
  }

  /**
   * Removes uploads left unregistered for DRAFT_UPLOAD_MAX_AGE_MINUTES, objects then rows, in batches; returns how
   * many. Rows are taken with SKIP LOCKED, so the sweeps of several API processes share the work. A batch whose
   * objects cannot be removed rolls back and is tried again by the next sweep.
   */
  async sweepUnregistered(): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = await this.deps.knex.transaction(async (trx) => {
        const rows = (await trx('draft_uploads')
          .whereNull('registered_at')
          .andWhere('created_at', '<', trx.raw("now() - ? * interval '1 minute'", [this.deps.limits.maxAgeMinutes]))
          .orderBy('created_at')
          .limit(SWEEP_BATCH)
          .forUpdate()
          .skipLocked()
          .select('id', 'bucket', 'path')) as Array<{ id: string; bucket: string; path: string | null }>;
        const paths = rows.flatMap((r) => (r.path && r.bucket === DRAFTS_BUCKET ? [r.path] : []));
        if (paths.length > 0) await this.deps.storage.objects.remove(DRAFTS_BUCKET, paths);
        if (rows.length > 0) await trx('draft_uploads').whereIn('id', rows.map((r) => r.id)).del();
        return rows.length;
      });
      removed += batch;
      if (batch < SWEEP_BATCH) break;
    }
    uploadsSweptTotal.inc({ kind: 'draft' }, removed);
    return removed;
  }

  /** The periodic sweep (and one now); the timer does not keep the process alive. */
  startSweeping(): void {
    this.sweep ??= new PeriodicSweep({ everyMs: DRAFT_UPLOAD_SWEEP_EVERY_MS, run: () => this.sweepUnregistered(), what: 'draft uploads that were never added to a draft', logger: this.deps.logger });
    this.sweep.start();
  }

  /** Stops the sweep; resolves once a sweep under way has ended. */
  async stopSweeping(): Promise<void> {
    await this.sweep?.stop();
  }
}

/** An upload that outlasted its slot: the sweep took it while its bytes were still arriving. */
export function uploadOutlastedSlot(): DomainError {
  return new DomainError(409, 'DRAFT_UPLOAD_EXPIRED', 'The upload took too long and was removed. Upload it again.');
}
