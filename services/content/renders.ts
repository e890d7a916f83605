import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { UniqueViolationError, ForeignKeyViolationError } from 'objection';
import type { Logger } from '../../config/logger';
import { Render } from '../../db/models';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { aspectRatioLabel } from '../../domain/orientation';
import type { Storage } from '../../storage';
import { fileUrl } from '../../storage/signedUrls';
import { contentItem, type ContentItem, type ContentRow } from './contentViews';
import type { SniffedKind, UploadImageMime } from './fileSignatures';
import { uploadBytesTotal } from '../platform/metrics';
import { ProjectService } from './projects';
import { publishEventQuietly } from '../platform/events';
import { removeStoredFiles, type StoredFileRef } from './storedFiles';
import { UploadInspector } from './uploadInspector';
import { claimUpload, markUploadStored, releaseUpload } from './uploadIntents';
import { IMAGE_HEADER_BYTES, imageDimensions, makeRenderCopies, previewPathOf, thumbnailInline, thumbnailPathOf, type ImageDimensions, type RenderCopies } from './renderThumbnails';
import { webhookLinks } from '../integrations/webhookEvents';
import { recordWebhookEvent } from '../integrations/webhookOutbox';

export const RENDERS_BUCKET = 'renders' as const;
export const ACCEPTED_TYPES_TEXT = 'JPEG, PNG, GIF, WebP';
/** Room for the multipart framing and the small fields around the file. */
const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

/** One file part of a multipart upload, as the multipart reader hands it over. */
export interface IncomingFile {
  stream: Readable;
  fileName: string;
  declaredMime: string;
  /** The request's Content-Length, if any: the best guess of the file's size for the too-large message. */
  requestBytes?: number;
}

/** An upload written to storage but not yet recorded: complete() records it, discard() removes it. */
export interface StagedRender {
  file: StoredFileRef;
  fileName: string;
  mime: UploadImageMime;
  size: number;
  checksum: string;
  /** The file's first IMAGE_HEADER_BYTES (its header: dimensions, orientation), kept while it streamed. */
  header: Buffer;
  /** Its upload intent was written (services/content/uploadIntents.ts): recording it gives the claim up. */
  claimed?: boolean;
}

export interface ProcessingInfo {
  width: number;
  height: number;
  aspectRatio: string;
  fileSize: number;
  mimeType: string;
  checksum: string;
  thumbnailUrl: string | null;
  duplicate: boolean;
}

export interface RenderUploadResult {
  success: true;
  duplicate: boolean;
  url: string;
  render: ContentItem;
  processingInfo: ProcessingInfo;
}

export interface RenderUploadDeps {
  storage: Storage;
  projects: ProjectService;
  logger?: Logger;
  /** MAX_UPLOAD_BYTES unless a test or benchmark says otherwise. */
  maxBytes?: number;
  /** Told after a render was added to a project (the library drops its cached listing). */
  onProjectChanged?: (projectId: string) => void;
  /**
   * Starts the worker's thumbnail of a render recorded without one (services/content/renderThumbnailJobs.ts). A failure is
   * logged: the hourly storage maintenance makes the thumbnails still missing.
   */
  deferThumbnail?: (renderId: string) => Promise<void>;
  /** Largest upload whose thumbnail is made in the request: INLINE_THUMBNAIL_MAX_BYTES unless a test says otherwise. */
  inlineThumbnailMaxBytes?: number;
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

/** A display name from the client's file name: no folders, no control characters, the stored type's extension. */
function displayName(fileName: string, extension: string): string {
  // eslint-disable-next-line no-control-regex
  const base = path.basename(fileName.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 200);
  return base || `render.${extension}`;
}

/**
 * The render upload pipeline: stream to storage while hashing, counting and typing by content; then read the real
 * dimensions from the file's header, make the thumbnail of a small image (a worker makes a large one's after the
 * row is written) and record the row. A failure at any step removes whatever was stored.
 */
export class RenderUploadService {
  private readonly maxBytes: number;

  constructor(private readonly deps: RenderUploadDeps) {
    this.maxBytes = deps.maxBytes ?? MAX_UPLOAD_BYTES;
  }

  /**
   * Refuses at once a request whose declared length alone is over the limit (plus room for the form's other parts),
   * before any of it is read. Requests without a length are measured while they stream.
   */
  assertRequestSize(contentLength: number | undefined): void {
    if (contentLength !== undefined && Number.isFinite(contentLength) && contentLength > this.maxBytes + MULTIPART_ALLOWANCE_BYTES) {
      throw new DomainError(413, 'FILE_TOO_LARGE', MSG.fileTooLarge(megabytes(contentLength)));
    }
  }

  /** Streams one file into the renders bucket. When the project id is already known it is checked first, before a byte is stored. */
  async stage(workspaceId: string, incoming: IncomingFile, knownProjectId?: string): Promise<StagedRender> {
    if (knownProjectId !== undefined) await this.deps.projects.findOwned(workspaceId, knownProjectId);
    const inspector = new UploadInspector({
      maxBytes: this.maxBytes,
      accept: (kind) => this.refusal(kind, incoming),
      keepHeaderBytes: IMAGE_HEADER_BYTES,
      tooLarge: (seen) => new DomainError(413, 'FILE_TOO_LARGE', MSG.fileTooLarge(megabytes(Math.max(seen, incoming.requestBytes ?? 0)))),
    });
    incoming.stream.on('error', (err) => inspector.destroy(err));
    incoming.stream.pipe(inspector);
    const kind = await inspector.detected;
    if (kind.kind !== 'image') throw new Error('unreachable: refused kinds fail the inspector');
    const file: StoredFileRef = { bucket: RENDERS_BUCKET, path: `${workspaceId}/${randomUUID()}.${kind.extension}` };
    await this.storeClaimed(workspaceId, file, inspector);
    uploadBytesTotal.inc({ kind: 'render' }, inspector.size);
    return { file, fileName: displayName(incoming.fileName, kind.extension), mime: kind.mime, size: inspector.size, checksum: inspector.checksum(), header: inspector.header(), claimed: true };
  }

  /**
   * Stores `body` at `file` under an upload intent: claimed before the put, marked stored once the object is visible
   * (a process killed before the row leaves the claim, which the abandoned-upload sweep acts on). A put that failed
   * stored nothing: its claim goes.
   */
  private async storeClaimed(workspaceId: string, file: StoredFileRef, body: Readable | Buffer): Promise<void> {
    const knex = Render.knex();
    await claimUpload(knex, file, workspaceId);
    try {
      await this.deps.storage.objects.put(file.bucket, file.path, body);
    } catch (err) {
      await releaseUpload(knex, file).catch((e: unknown) => this.deps.logger?.warn({ err: e }, 'could not give up the claim of an upload that stored nothing'));
      throw err;
    }
    try {
      await markUploadStored(knex, file);
    } catch (err) {
      // not recorded as stored, the sweep would wait a day: the upload fails and its file goes now
      await removeStoredFiles(this.deps.storage.objects, [file], this.deps.logger);
      throw err;
    }
  }

  /** Records a staged upload in the user's project; the same bytes already in the project answer as a duplicate. */
  async complete(workspaceId: string, projectId: string, staged: StagedRender): Promise<RenderUploadResult> {
    const recorded = await this.record(workspaceId, projectId, staged);
    if (!recorded.duplicate) {
      this.deps.onProjectChanged?.(projectId);
      await publishEventQuietly(Render.knex(), workspaceId, { kind: 'content', change: 'added', contentKind: 'render', projectId, itemId: recorded.render.id }, this.deps.logger);
      // not awaited: the answer does not wait on Temporal (nor fails with it); a start that never happens is made up
      // for by the storage maintenance run
      if (!recorded.render.thumbnailPath) void this.deferThumbnail(recorded.render.id);
    }
    return this.result(recorded.render, recorded.duplicate);
  }

  private async deferThumbnail(renderId: string): Promise<void> {
    try {
      if (!this.deps.deferThumbnail) throw new Error('no thumbnail worker is configured');
      await this.deps.deferThumbnail(renderId);
    } catch (err) {
      this.deps.logger?.warn({ err, renderId }, 'could not start the thumbnail of a render; the storage maintenance will make it');
    }
  }

  /** Dimensions, the thumbnail and preview of a small image, and the row; on any failure nothing it stored stays behind. */
  private async record(workspaceId: string, projectId: string, staged: StagedRender): Promise<{ render: Render; duplicate: boolean }> {
    const stored: StoredFileRef[] = [staged.file];
    try {
      await this.deps.projects.findOwned(workspaceId, projectId);
      const existing = await Render.query().findOne({ project_id: projectId, checksum: staged.checksum });
      if (existing) {
        await this.discard(staged);
        return { render: existing, duplicate: true };
      }
      const { width, height, copies } = await this.inspectImage(staged);
      let thumbnailPath: string | null = null;
      let previewPath: string | null = null;
      if (copies) {
        thumbnailPath = thumbnailPathOf(staged.file.path);
        previewPath = previewPathOf(staged.file.path);
        stored.push({ bucket: staged.file.bucket, path: thumbnailPath });
        await this.deps.storage.objects.put(staged.file.bucket, thumbnailPath, copies.thumbnail);
        stored.push({ bucket: staged.file.bucket, path: previewPath });
        await this.deps.storage.objects.put(staged.file.bucket, previewPath, copies.preview);
      }
      // the row, its render.uploaded event and the end of the upload's claim in one transaction
      const render = await Render.transaction(async (trx) => {
        if (staged.claimed) await releaseUpload(trx, staged.file, { recording: true });
        const row = await Render.query(trx).insertAndFetch({
          projectId,
          workspaceId,
          fileUrl: fileUrl(staged.file.bucket, staged.file.path),
          fileName: staged.fileName,
          fileSize: staged.size,
          width,
          height,
          aspectRatio: aspectRatioLabel(width, height),
          checksum: staged.checksum,
          thumbnailPath,
          previewPath,
          storageBucket: staged.file.bucket,
          storagePath: staged.file.path,
          storageMime: staged.mime,
          storageSize: staged.size,
        });
        await recordWebhookEvent(trx, {
          workspaceId,
          type: 'render.uploaded',
          resourceId: row.id,
          data: { workspaceId, projectId, renderId: row.id, fileName: row.fileName, fileSize: staged.size, width, height, href: webhookLinks.content(workspaceId, row.id) },
        });
        return row;
      });
      return { render, duplicate: false };
    } catch (err) {
      await removeStoredFiles(this.deps.storage.objects, stored, this.deps.logger);
      if (err instanceof UniqueViolationError) {
        // the same bytes landed concurrently: answer with the row that won
        const winner = await Render.query().findOne({ project_id: projectId, checksum: staged.checksum });
        if (winner) return { render: winner, duplicate: true };
      }
      if (err instanceof ForeignKeyViolationError) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
      throw err;
    }
  }

  /**
   * The staged file moved into another account's folder (`<workspaceId>/...`): for a multipart upload whose projectId
   * came after the file and named another workspace than the one the file was staged for. The folder is the owning
   * account's, which removes it with its data.
   */
  async restage(staged: StagedRender, workspaceId: string): Promise<StagedRender> {
    const file: StoredFileRef = { bucket: staged.file.bucket, path: `${workspaceId}/${path.posix.basename(staged.file.path)}` };
    const { objects } = this.deps.storage;
    await this.storeClaimed(workspaceId, file, await objects.read(staged.file.bucket, staged.file.path));
    await this.discard(staged);
    return { ...staged, file, claimed: true };
  }

  /** Removes a staged upload's file; its claim goes once the file is gone (else the abandoned-upload sweep removes it). */
  async discard(staged: StagedRender): Promise<void> {
    try {
      await this.deps.storage.objects.remove(staged.file.bucket, [staged.file.path]);
    } catch (err) {
      this.deps.logger?.warn({ err, bucket: staged.file.bucket }, 'could not remove a staged upload; the abandoned-upload sweep will');
      return;
    }
    if (staged.claimed) await releaseUpload(Render.knex(), staged.file).catch((err: unknown) => this.deps.logger?.warn({ err }, 'could not give up the claim of a removed upload'));
  }

  private refusal(kind: SniffedKind, incoming: IncomingFile): Error | null {
    if (kind.kind === 'image') return null;
    if (kind.kind === 'video' || incoming.declaredMime.toLowerCase().startsWith('video/')) {
      return new DomainError(400, 'VIDEO_NOT_SUPPORTED', MSG.videoUploadsNotSupported);
    }
    return new DomainError(400, 'INVALID_FILE_TYPE', `File "${displayName(incoming.fileName, 'bin')}" has invalid type. Accepted types: ${ACCEPTED_TYPES_TEXT}`);
  }

  /**
   * Real dimensions (EXIF orientation applied) from the header kept while the file streamed, and for a small image
   * its webp thumbnail and preview; a larger one gets them from a worker (services/content/renderThumbnails.ts). The
   * stored file is read back only when the header alone does not tell the dimensions, or for the small one's copies.
   */
  private async inspectImage(staged: StagedRender): Promise<{ width: number; height: number; copies: RenderCopies | null }> {
    const unreadable = new DomainError(400, 'INVALID_IMAGE', `File "${staged.fileName}" is not a readable image`);
    const format = staged.mime.slice('image/'.length);
    const wholeFileKept = staged.header.length >= staged.size;
    let dims: ImageDimensions | null = await imageDimensions(staged.header, format);
    if (!dims && wholeFileKept) throw unreadable;
    const inline = dims !== null && thumbnailInline(staged.size, dims, this.deps.inlineThumbnailMaxBytes);
    if (dims && !inline) return { ...dims, copies: null };
    if (dims && wholeFileKept) {
      const copies = await makeRenderCopies(staged.header).catch(() => {
        throw unreadable;
      });
      return { ...dims, copies };
    }
    const local = await this.deps.storage.objects.localFile(staged.file.bucket, staged.file.path);
    try {
      dims ??= await imageDimensions(local.path, format);
      if (!dims) throw unreadable;
      if (!thumbnailInline(staged.size, dims, this.deps.inlineThumbnailMaxBytes)) return { ...dims, copies: null };
      const copies = await makeRenderCopies(local.path).catch(() => {
        throw unreadable;
      });
      return { ...dims, copies };
    } finally {
      await local.release();
    }
  }

  private async result(render: Render, duplicate: boolean): Promise<RenderUploadResult> {
    // the same item shape as the library's listing (rows read as PostgreSQL returns them)
    const row = (await Render.knex()<ContentRow>(Render.tableName).where({ id: render.id }).first()) as ContentRow;
    const item = contentItem(this.deps.storage, 'renders', row);
    return {
      success: true,
      duplicate,
      url: item.signed_url ?? render.fileUrl,
      render: item,
      processingInfo: {
        width: render.width ?? 0,
        height: render.height ?? 0,
        aspectRatio: render.aspectRatio,
        fileSize: render.fileSize,
        mimeType: render.storageMime ?? 'application/octet-stream',
        checksum: render.checksum ?? '',
        thumbnailUrl: item.data.thumbnail_url,
        duplicate,
      },
    };
  }
}
