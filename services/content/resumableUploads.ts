/**
 * Resumable render uploads over the tus protocol (https://tus.io), on @tus/server with its file store (local storage)
 * or S3 store (STORAGE_BACKEND=s3). A dropped connection or a reload resumes from the last byte the server holds.
 *
 * The rules are those of POST /api/upload/renders: the session's user, a project they own, at most 150 MB (declared up
 * front, so a too-large file is refused before a byte is sent), an image by its content, duplicates answered with the
 * existing render. When the last byte arrives the assembled file goes through RenderUploadService (type by content,
 * checksum, thumbnail, render row) and the tus copy is removed; the final PATCH answers the same JSON as the multipart
 * route. The API decides the workspace and the role before the tus server sees a request (api/routes/resumableUploads.ts:
 * `edit` in the project's workspace); the upload then belongs to that workspace (the account, `workspace_id`), so the
 * members who may edit there can resume, inspect or cancel it, and nobody else finds it. Unfinished uploads expire
 * after TUS_EXPIRATION_HOURS (24) and an hourly sweep removes their bytes.
 *
 * One account (a workspace, whose members share the budget: services/content/uploadLimits.ts) holds at most
 * TUS_MAX_UNFINISHED_UPLOADS unfinished uploads declaring at most TUS_MAX_UNFINISHED_MB in total: the creation (POST) beyond them answers 429 (count) or 413 (bytes),
 * checked and recorded in one transaction under the account's lock, so the limits hold across API processes. An
 * upload stops counting once it completes, fails, is cancelled (DELETE) or expires.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import { Server } from '@tus/server';
import type { Upload } from '@tus/utils';
import type { Knex } from 'knex';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { textInputProblem } from '../../domain/textInput';
import { s3BackendFor } from '../../storage';
import type { ContentServices } from './contentServices';
import type { RenderUploadResult } from './renders';
import { uploadsSweptTotal } from '../platform/metrics';
import { PeriodicSweep } from '../platform/periodicSweep';
import { lockAccountUploads, UPLOAD_LIMIT_MSG, uploadLimitReached } from './uploadLimits';

export const TUS_PATH = '/api/uploads/tus';
/** What the browser sends per PATCH (and the S3 store's part size): small enough to resend cheaply, at least S3's 5 MB. */
export const TUS_CHUNK_BYTES = 8 * 1024 * 1024;
export const TUS_SWEEP_EVERY_MS = 60 * 60 * 1000;
/** The tus store's bucket under S3_BUCKET_PREFIX (beside renders, images, clips, videos, drafts). */
export const TUS_S3_BUCKET = 'uploads';

export interface ResumableUploadDeps {
  config: Pick<AppConfig, 'storageBackend' | 's3' | 'storageDir' | 'publicUrl' | 'tusMaxUnfinishedUploads' | 'tusMaxUnfinishedBytes'> & { tusExpirationHours?: number };
  knex: Knex;
  services: ContentServices;
  logger: Pick<Logger, 'warn' | 'info' | 'debug'>;
  /** MAX_UPLOAD_BYTES unless a test says otherwise */
  maxBytes?: number;
}

interface UploadRow {
  id: string;
  workspace_id: string;
  project_id: string;
  file_name: string;
  size: string | number;
  status: 'uploading' | 'completed' | 'failed' | 'expired' | 'cancelled';
}

/** An upload that has not finished, as the project's upload area lists it (resume by picking the file again, or cancel). */
export interface UnfinishedUpload {
  /** its tus id: DELETE /api/uploads/tus/{id} cancels it */
  id: string;
  projectId: string;
  projectName: string;
  fileName: string;
  size: number;
  /** bytes the server holds */
  received: number;
  startedAt: string;
  expiresAt: string;
}

/** A refusal in the tus server's own shape, with the API's JSON body. */
function refusal(status: number, error: string, code?: string): { status_code: number; body: string } {
  return { status_code: status, body: JSON.stringify({ success: false, error, ...(code ? { code } : {}) }) };
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

/** The account (workspace) each request the API hands to the tus server acts in (ResumableUploads.handle). */
const requestWorkspaces = new WeakMap<IncomingMessage, string>();
/** The upload a creation request recorded, so a creation that fails after it does not keep counting. */
const createdBy = new WeakMap<IncomingMessage, string>();

function nodeRequestOf(req: unknown): IncomingMessage | undefined {
  const r = req as { runtime?: { node?: { req?: IncomingMessage } }; node?: { req?: IncomingMessage } };
  return r.runtime?.node?.req ?? r.node?.req;
}

export class ResumableUploads {
  readonly server: Server;
  readonly store: FileStore | S3Store;
  private readonly maxBytes: number;
  private readonly expirationMs: number;
  private sweep: PeriodicSweep | null = null;
  private bucketReady: Promise<void> | null = null;

  constructor(private readonly deps: ResumableUploadDeps) {
    this.maxBytes = deps.maxBytes ?? MAX_UPLOAD_BYTES;
    this.expirationMs = (deps.config.tusExpirationHours ?? 24) * 60 * 60 * 1000;
    this.store = this.createStore();
    this.server = new Server({
      path: TUS_PATH,
      datastore: this.store,
      relativeLocation: true,
      // the app's own pages only (no cross-origin tus clients); the cookie rides along
      allowedOrigins: [new URL(deps.config.publicUrl).origin],
      allowedCredentials: true,
      disableTerminationForFinishedUploads: true,
      namingFunction: () => randomBytes(16).toString('hex'),
      onIncomingRequest: (req, id) => this.authorize(req, id),
      onUploadCreate: async (req, upload) => {
        await this.created(req, upload);
        return {};
      },
      onUploadFinish: (req, upload) => this.finished(req, upload),
      onResponseError: async (req, err) => {
        await this.forgetFailedCreation(req, err).catch((cleanup: unknown) => this.deps.logger.warn({ err: cleanup }, 'could not mark a failed resumable upload'));
        if (err instanceof DomainError) return refusal(err.status, err.message, err.code);
        if (err instanceof Error && !('status_code' in err)) {
          this.deps.logger.warn({ err }, 'resumable upload failed');
          return refusal(500, 'Upload failed. Please try again.');
        }
        return undefined;
      },
    });
  }

  /**
   * Serves one tus request acting in the account `workspaceId` (the workspace), after the API checked the session and
   * the user's right to edit in that workspace.
   */
  async handle(req: IncomingMessage, res: ServerResponse, workspaceId: string): Promise<void> {
    requestWorkspaces.set(req, workspaceId);
    await this.server.handle(req, res);
  }

  /**
   * The workspace's unfinished uploads that have not expired (those that count towards its limits), or one project's,
   * oldest first, each with the bytes the store holds (a store that has lost an upload's bytes answers 0: picking the
   * file again starts it over).
   */
  async unfinished(workspaceId: string, projectId?: string): Promise<UnfinishedUpload[]> {
    const { knex } = this.deps;
    const query = knex('resumable_uploads as u')
      .join('projects as p', 'p.id', 'u.project_id')
      .where({ 'u.workspace_id': workspaceId, 'u.status': 'uploading' })
      .andWhere('u.created_at', '>', knex.raw("now() - ? * interval '1 millisecond'", [this.expirationMs]))
      .orderBy('u.created_at', 'asc')
      .select('u.id', 'u.project_id', 'p.name as project_name', 'u.file_name', 'u.size', 'u.created_at');
    if (projectId) query.where('u.project_id', projectId);
    const rows = (await query) as Array<{ id: string; project_id: string; project_name: string; file_name: string; size: string | number; created_at: Date }>;
    return Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        projectId: row.project_id,
        projectName: row.project_name,
        fileName: row.file_name,
        size: Number(row.size),
        received: await this.store.getUpload(row.id).then(
          (upload) => upload.offset,
          () => 0,
        ),
        startedAt: row.created_at.toISOString(),
        expiresAt: new Date(row.created_at.getTime() + this.expirationMs).toISOString(),
      })),
    );
  }

  /** The project an upload was created for (which names its workspace), or undefined for no such upload. */
  async projectOf(id: string): Promise<string | undefined> {
    return (await this.row(id))?.project_id;
  }

  /**
   * A creation refused after its row was recorded (the store could not create it, or creation-with-upload sent more
   * than Upload-Length): the upload is marked failed before the answer goes out, so it does not hold a slot.
   */
  private async forgetFailedCreation(req: unknown, err: unknown): Promise<void> {
    const node = nodeRequestOf(req);
    const created = node?.method === 'POST' ? createdBy.get(node) : undefined;
    if (!created) return;
    const { knex } = this.deps;
    const error = (err instanceof Error ? err.message : String((err as { body?: unknown })?.body ?? err)).slice(0, 500);
    const marked = await knex('resumable_uploads').where({ id: created, status: 'uploading' }).update({ status: 'failed', error, finished_at: knex.fn.now() });
    if (marked) await this.removeData(created);
  }

  /** The account (workspace) the request acts in. */
  private workspaceOf(req: unknown): string {
    const node = nodeRequestOf(req);
    const workspaceId = node ? requestWorkspaces.get(node) : undefined;
    if (!workspaceId) throw refusal(401, 'Authentication required');
    return workspaceId;
  }

  private createStore(): FileStore | S3Store {
    const { config } = this.deps;
    if (config.storageBackend === 's3') {
      return new S3Store({
        partSize: TUS_CHUNK_BYTES,
        expirationPeriodInMilliseconds: this.expirationMs,
        s3ClientConfig: {
          bucket: `${config.s3.bucketPrefix}${TUS_S3_BUCKET}`,
          endpoint: config.s3.endpoint || undefined,
          region: config.s3.region,
          forcePathStyle: config.s3.forcePathStyle,
          credentials: { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey },
        },
      });
    }
    const directory = path.join(config.storageDir, '.tus-uploads');
    // made here, before the first sweep lists it: the store's own mkdir runs unawaited from its constructor
    mkdirSync(directory, { recursive: true });
    return new FileStore({ directory, expirationPeriodInMilliseconds: this.expirationMs });
  }

  /** The S3 store's bucket, created when missing (once per process). */
  private ensureBucket(): Promise<void> {
    const { config } = this.deps;
    if (config.storageBackend !== 's3') return Promise.resolve();
    this.bucketReady ??= (async () => {
      const client = s3BackendFor(config.s3).client;
      const Bucket = `${config.s3.bucketPrefix}${TUS_S3_BUCKET}`;
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch {
        await client.send(new CreateBucketCommand({ Bucket })).catch((err: { name?: string }) => {
          if (err?.name !== 'BucketAlreadyOwnedByYou' && err?.name !== 'BucketAlreadyExists') throw err;
        });
      }
    })().catch((err: unknown) => {
      this.bucketReady = null;
      throw err;
    });
    return this.bucketReady;
  }

  private async row(id: string): Promise<UploadRow | undefined> {
    if (!/^[0-9a-f]{32}$/.test(id)) return undefined;
    return this.deps.knex<UploadRow>('resumable_uploads').where({ id }).first();
  }

  /** Every request about an existing upload: it is found only in its workspace (the account that created it). */
  private async authorize(req: { method: string }, id: string): Promise<void> {
    const workspaceId = this.workspaceOf(req);
    if (req.method === 'POST') {
      await this.ensureBucket();
      return;
    }
    const row = await this.row(id);
    if (!row || row.workspace_id !== workspaceId) throw refusal(404, 'Upload not found');
    if (row.status !== 'uploading') throw refusal(410, row.status === 'completed' ? 'This upload has already completed' : 'This upload is no longer available');
    if (req.method === 'DELETE') {
      // cancelled before the answer, so a creation right after it finds the slot free; the bytes go next (should
      // that fail, the store's expiry removes them)
      await this.deps.knex('resumable_uploads').where({ id, status: 'uploading' }).update({ status: 'cancelled', finished_at: this.deps.knex.fn.now() });
    }
  }

  /** A new upload: the declared size, type and name, and the project, are checked before a byte is accepted. */
  private async created(req: unknown, upload: Upload): Promise<void> {
    const workspaceId = this.workspaceOf(req);
    const meta = upload.metadata ?? {};
    if (upload.size === undefined) throw refusal(400, 'Upload-Length is required: the file size must be known when the upload starts');
    if (upload.size > this.maxBytes) throw new DomainError(413, 'FILE_TOO_LARGE', MSG.fileTooLarge(megabytes(upload.size)));
    if (upload.size === 0) throw refusal(400, 'The file is empty');
    const projectId = meta.projectId ?? '';
    if (!projectId) throw refusal(400, 'projectId is required');
    const fileName = (meta.filename ?? meta.name ?? '').trim();
    if (!fileName) throw refusal(400, 'filename is required');
    const problem = textInputProblem(fileName) ?? (fileName.length > 1000 ? 'is too long' : null);
    if (problem) throw refusal(400, `File name ${problem}`);
    const declared = (meta.filetype ?? meta.type ?? '').toLowerCase();
    if (declared.startsWith('video/')) throw new DomainError(400, 'VIDEO_NOT_SUPPORTED', MSG.videoUploadsNotSupported);
    await this.deps.services.projects.findOwned(workspaceId, projectId);
    await this.recordWithinLimits({ id: upload.id, workspace_id: workspaceId, project_id: projectId, file_name: fileName, size: upload.size });
    const node = nodeRequestOf(req);
    if (node) createdBy.set(node, upload.id);
  }

  /**
   * Records a new upload unless the account's unfinished ones are at TUS_MAX_UNFINISHED_UPLOADS (429) or would
   * declare more than TUS_MAX_UNFINISHED_MB with it (413). Under the account's lock: concurrent creations, in this or
   * another API process, are checked one after the other. Uploads past their expiry do not count (the sweep marks them).
   */
  private async recordWithinLimits(row: Omit<UploadRow, 'status'> & { size: number }): Promise<void> {
    const { config } = this.deps;
    const hours = config.tusExpirationHours ?? 24;
    await this.deps.knex.transaction(async (trx) => {
      await lockAccountUploads(trx, 'resumableUploads', row.workspace_id);
      const held = (await trx('resumable_uploads')
        .where({ workspace_id: row.workspace_id, status: 'uploading' })
        .andWhere('created_at', '>', trx.raw("now() - ? * interval '1 millisecond'", [this.expirationMs]))
        .first(trx.raw('count(*)::int as uploads'), trx.raw('coalesce(sum(size), 0)::bigint as bytes'))) as { uploads: number; bytes: string | number };
      if (held.uploads >= config.tusMaxUnfinishedUploads) {
        throw uploadLimitReached('tus_unfinished_uploads', 429, 'TOO_MANY_UNFINISHED_UPLOADS', UPLOAD_LIMIT_MSG.tusUploads(config.tusMaxUnfinishedUploads, hours));
      }
      if (Number(held.bytes) + row.size > config.tusMaxUnfinishedBytes) {
        throw uploadLimitReached('tus_unfinished_bytes', 413, 'UNFINISHED_UPLOAD_BYTES', UPLOAD_LIMIT_MSG.tusBytes(config.tusMaxUnfinishedBytes, Number(held.bytes), row.size, hours));
      }
      await trx('resumable_uploads').insert(row);
    });
  }

  /** The last byte arrived: the file goes through the render upload pipeline, then the tus copy is removed. */
  private async finished(req: unknown, upload: Upload): Promise<{ status_code: number; headers: Record<string, string>; body: string }> {
    const workspaceId = this.workspaceOf(req);
    const row = await this.row(upload.id);
    if (!row || row.workspace_id !== workspaceId) throw refusal(404, 'Upload not found');
    const { uploads } = this.deps.services;
    let result: RenderUploadResult;
    try {
      const stream = (await this.store.read(upload.id)) as Readable;
      const staged = await uploads.stage(workspaceId, { stream, fileName: row.file_name, declaredMime: upload.metadata?.filetype ?? '', requestBytes: Number(row.size) }, row.project_id);
      try {
        result = await uploads.complete(workspaceId, row.project_id, staged);
      } catch (err) {
        await uploads.discard(staged);
        throw err;
      }
    } catch (err) {
      await this.deps.knex('resumable_uploads').where({ id: upload.id }).update({ status: 'failed', error: err instanceof Error ? err.message.slice(0, 500) : String(err), finished_at: this.deps.knex.fn.now() });
      await this.removeData(upload.id);
      throw err;
    }
    await this.deps.knex('resumable_uploads').where({ id: upload.id }).update({ status: 'completed', render_id: result.render.data.id, finished_at: this.deps.knex.fn.now() });
    await this.removeData(upload.id);
    return { status_code: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(result) };
  }

  private async removeData(id: string): Promise<void> {
    await this.store.remove(id).catch((err: unknown) => this.deps.logger.warn({ err, uploadId: id }, 'could not remove the tus copy of an upload'));
  }

  /** Removes the bytes of unfinished uploads older than the expiry and marks their rows; returns how many went. */
  async sweepExpired(): Promise<number> {
    const removed = await this.server.cleanUpExpiredUploads();
    const expired = await this.deps.knex('resumable_uploads')
      .where({ status: 'uploading' })
      .andWhere('created_at', '<', new Date(Date.now() - this.expirationMs))
      .update({ status: 'expired', finished_at: this.deps.knex.fn.now() });
    uploadsSweptTotal.inc({ kind: 'tus' }, expired);
    return removed;
  }

  /** The hourly sweep (and one now); the timer does not keep the process alive. */
  startSweeping(): void {
    this.sweep ??= new PeriodicSweep({ everyMs: TUS_SWEEP_EVERY_MS, run: () => this.sweepExpired(), what: 'abandoned resumable uploads', logger: this.deps.logger });
    this.sweep.start();
  }

  /** Stops the sweep; resolves once a sweep under way has ended. */
  async stopSweeping(): Promise<void> {
    await this.sweep?.stop();
  }
}
