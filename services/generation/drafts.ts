/**
 * Enhance Renders' draft projects (spec 001 sections 3-5 and 7): list, create, upload, register images, read,
 * remove an image, restore a version, commit into a real project, delete. Every call is scoped to the owner
 * (another user's draft or image is simply not found). Files live in the `drafts` bucket under
 * `<workspaceId>/<draftId>/`: uploads in `uploads/`, attachments in `references/`, a job's versions in `<imageId>/`.
 * Uploads are counted and swept (./draftUploads.ts): one takes its slot before its bytes are stored and keeps its
 * file only once add-images (or, for a reference, a dispatch) registers it.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { Logger } from '../../config/logger';
import { Draft, DraftImage } from '../../db/models';
import type { StoredFile } from '../../domain/approvals';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';
import {
  DRAFT_LIMITS,
  DRAFTS_BUCKET,
  ENHANCE_MSG,
  draftFolder,
  restoreVersion,
  type DraftImageMetadata,
  type DraftVersion,
} from '../../domain/enhanceRenders';
import { DomainError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { fileUrl, parseFileUrl, type Storage } from '../../storage';
import type { ProjectService } from '../content/projects';
import { recordLineage } from '../content/lineage';
import type { IncomingFile, RenderUploadResult, RenderUploadService } from '../content/renders';
import { ACCEPTED_TYPES_TEXT } from '../content/renders';
import { removeStoredFiles } from '../content/storedFiles';
import { UploadInspector } from '../content/uploadInspector';
import { lockAccountUploads } from '../content/uploadLimits';
import { uploadOutlastedSlot, type DraftUploads, type DraftUploadPurpose } from './draftUploads';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

export type { DraftUploadPurpose } from './draftUploads';

export interface DraftSummary {
  id: string;
  name: string;
  status: string;
  created_at: string;
  updated_at: string;
  image_count: number;
  thumbnail_url: string | null;
}

export interface DraftVersionView extends DraftVersion {
  /** A signed link to this version (the stored `url` is the stable, unsigned address). */
  signed_url: string;
}

export interface DraftImageView {
  id: string;
  draft_id: string;
  name: string;
  /** Stable address of the uploaded original (what add-images was given). */
  source_url: string;
  /** A signed link to the current version, for display and download. */
  resolved_url: string | null;
  metadata: {
    storage: StoredFile;
    previous_url: string | null;
    history: DraftVersionView[];
    width?: number;
    height?: number;
    mime?: string;
  };
  order_index: number;
  source_type: string;
  /** The unfinished job on this image, if any (the card shows 'Processing…'). */
  job: { id: string; status: string; mode: string; model_id: string; workflow_id: string } | null;
  /** `dismissed`: the user dismissed its failure (the card shows a failure with Retry until then). */
  last_job: { id: string; status: string; mode: string; error: string | null; dismissed: boolean } | null;
  created_at: string;
  updated_at: string;
}

export interface DraftUploadResult {
  success: true;
  /** A signed link to the stored file; pass it (or `file_url`) to add-images or as a job reference. */
  url: string;
  file_url: string;
  storage: StoredFile & { mime: string; size: number; width: number; height: number; name: string };
}

export interface NewDraftImage {
  source_type?: string;
  source_url: string;
  name?: string;
  order_index?: number;
  metadata?: Record<string, unknown>;
}

export interface DraftServiceDeps {
  knex: Knex;
  storage: Storage;
  projects: ProjectService;
  uploads: RenderUploadService;
  /** The draft upload slots and their sweep. */
  draftUploads: DraftUploads;
  logger?: Logger;
  /** Running jobs of a removed image or deleted draft are cancelled through it (best effort). */
  temporal?: () => Promise<Client>;
  maxUploadBytes?: number;
}

function draftNotFound(): DomainError {
  return new DomainError(404, 'DRAFT_NOT_FOUND', ENHANCE_MSG.draftNotFound);
}

function imageNotFound(): DomainError {
  return new DomainError(404, 'DRAFT_IMAGE_NOT_FOUND', ENHANCE_MSG.imageNotFound);
}

function limitReached(): DomainError {
  // a full draft is a state the request conflicts with (409, as the API document says); too many in one request is a bad request (400)
  return new DomainError(409, 'DRAFT_IMAGE_LIMIT', ENHANCE_MSG.limitReached);
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

/** A display name from the client's file name: no folders, no control characters. */
function displayName(fileName: string, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const base = path.basename(fileName.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 200);
  return base || fallback;
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

export function cleanDraftName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new DomainError(400, 'VALIDATION_ERROR', ENHANCE_MSG.draftNameRequired);
  if (trimmed.length > DRAFT_LIMITS.draftNameMaxLength) throw new DomainError(400, 'VALIDATION_ERROR', `Draft name must be at most ${DRAFT_LIMITS.draftNameMaxLength} characters`);
  return trimmed;
}

/** Whether `file` is one of the user's draft files (under `<workspaceId>/`, or `<workspaceId>/<draftId>/` when given). */
export function isOwnDraftFile(file: { bucket: string; path: string } | null, workspaceId: string, draftId?: string): file is StoredFile {
  if (!file || file.bucket !== DRAFTS_BUCKET) return false;
  const prefix = draftId ? `${draftFolder(workspaceId, draftId)}/` : `${workspaceId}/`;
  return file.path.startsWith(prefix);
}

export class DraftService {
  private readonly maxBytes: number;

  constructor(private readonly deps: DraftServiceDeps) {
    this.maxBytes = deps.maxUploadBytes ?? MAX_UPLOAD_BYTES;
  }

  /** The user's draft (any status) or 404; `forUpdate` locks its row in `trx`. */
  async findOwned(workspaceId: string, draftId: string, trx?: Knex.Transaction, options: { activeOnly?: boolean; forUpdate?: boolean } = {}): Promise<Draft> {
    if (!UUID.test(draftId)) throw draftNotFound();
    let query = Draft.query(trx ?? this.deps.knex).findOne({ id: draftId, workspace_id: workspaceId });
    if (options.forUpdate) query = query.forUpdate();
    const draft = await query;
    if (!draft || (options.activeOnly && draft.status !== 'active')) throw draftNotFound();
    return draft;
  }

  /** Active drafts, most recently changed first, with their image count and first image as thumbnail. */
  async list(workspaceId: string): Promise<DraftSummary[]> {
    const drafts = await Draft.query(this.deps.knex).where({ workspace_id: workspaceId, status: 'active' }).orderBy([{ column: 'updated_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    if (drafts.length === 0) return [];
    const images = await DraftImage.query(this.deps.knex)
      .whereIn('draft_id', drafts.map((d) => d.id))
      .orderBy([{ column: 'order_index' }, { column: 'created_at' }])
      .select('draft_id', 'metadata');
    const count = new Map<string, number>();
    const thumbnail = new Map<string, string>();
    for (const image of images) {
      count.set(image.draftId, (count.get(image.draftId) ?? 0) + 1);
      const storage = (image.metadata as Partial<DraftImageMetadata>).storage;
      if (!thumbnail.has(image.draftId) && storage) thumbnail.set(image.draftId, this.deps.storage.urls.sign(DRAFTS_BUCKET, storage.path));
    }
    return drafts.map((d) => ({
      id: d.id,
      name: d.name,
      status: d.status,
      created_at: iso(d.createdAt),
      updated_at: iso(d.updatedAt),
      image_count: count.get(d.id) ?? 0,
      thumbnail_url: thumbnail.get(d.id) ?? null,
    }));
  }

  async create(workspaceId: string, name: string): Promise<DraftSummary> {
    const draft = await Draft.query(this.deps.knex).insertAndFetch({ workspaceId, name: cleanDraftName(name), status: 'active' });
    return { id: draft.id, name: draft.name, status: draft.status, created_at: iso(draft.createdAt), updated_at: iso(draft.updatedAt), image_count: 0, thumbnail_url: null };
  }

  /** The draft and its images in order, each with signed links and its running job. */
  async get(workspaceId: string, draftId: string): Promise<{ draft: DraftSummary; images: DraftImageView[] }> {
    const draft = await this.findOwned(workspaceId, draftId);
    const images = await this.imageViews(draft.id);
    return {
      draft: {
        id: draft.id,
        name: draft.name,
        status: draft.status,
        created_at: iso(draft.createdAt),
        updated_at: iso(draft.updatedAt),
        image_count: images.length,
        thumbnail_url: images[0]?.resolved_url ?? null,
      },
      images,
    };
  }

  async imageViews(draftId: string, onlyIds?: string[]): Promise<DraftImageView[]> {
    // jobs before images: a job seen finished has already saved its version (one transaction), so the images read
    // next show it; the other order could pair an old version with a finished job. Only each image's newest job:
    // a job starts only when none is unfinished on the image, so an unfinished one is always the newest. One probe
    // per image (at most 4) on draft_jobs_image_newest, so the read does not grow with the draft's history
    const jobs = (await this.deps.knex('draft_images as i')
      .where('i.draft_id', draftId)
      .joinRaw(
        `cross join lateral (select j.id, j.draft_image_id, j.status, j.mode, j.model_id, j.workflow_id, j.error, j.failure_dismissed_at
           from draft_jobs j where j.draft_image_id = i.id and j.draft_id = i.draft_id order by j.created_at desc, j.id desc limit 1) j`,
      )
      .select('j.id', 'j.draft_image_id', 'j.status', 'j.mode', 'j.model_id', 'j.workflow_id', 'j.error', 'j.failure_dismissed_at')) as Array<{
      id: string;
      draft_image_id: string;
      status: string;
      mode: string;
      model_id: string;
      workflow_id: string;
      error: string | null;
      failure_dismissed_at: Date | null;
    }>;
    let query = DraftImage.query(this.deps.knex).where({ draft_id: draftId });
    if (onlyIds) query = query.whereIn('id', onlyIds);
    const images = await query.orderBy([{ column: 'order_index' }, { column: 'created_at' }, { column: 'id' }]);
    return images.map((image) => {
      const last = jobs.find((j) => j.draft_image_id === image.id);
      const running = last && (last.status === 'pending' || last.status === 'processing') ? last : undefined;
      return {
        ...this.imageView(image),
        job: running ? { id: running.id, status: running.status, mode: running.mode, model_id: running.model_id, workflow_id: running.workflow_id } : null,
        last_job: last ? { id: last.id, status: last.status, mode: last.mode, error: last.error, dismissed: last.failure_dismissed_at !== null } : null,
      };
    });
  }

  private imageView(image: DraftImage): Omit<DraftImageView, 'job' | 'last_job'> {
    const metadata = image.metadata as unknown as DraftImageMetadata;
    const sign = (file: StoredFile) => this.deps.storage.urls.sign(DRAFTS_BUCKET, file.path);
    const history = (metadata.history ?? []).map((v) => ({ ...v, signed_url: sign(v.storage) }));
    return {
      id: image.id,
      draft_id: image.draftId,
      name: image.name,
      source_url: image.sourceUrl,
      resolved_url: metadata.storage ? sign(metadata.storage) : null,
      metadata: {
        storage: metadata.storage,
        previous_url: history[1]?.signed_url ?? null,
        history,
        width: metadata.width,
        height: metadata.height,
        mime: metadata.mime,
      },
      order_index: image.orderIndex,
      source_type: image.sourceType,
      created_at: iso(image.createdAt),
      updated_at: iso(image.updatedAt),
    };
  }

  /** Refuses at once a request whose declared length alone is over the limit. */
  assertRequestSize(contentLength: number | undefined): void {
    if (contentLength !== undefined && Number.isFinite(contentLength) && contentLength > this.maxBytes + MULTIPART_ALLOWANCE_BYTES) {
      throw new DomainError(413, 'FILE_TOO_LARGE', MSG.fileTooLarge(megabytes(contentLength)));
    }
  }

  /**
   * Before a byte is stored: the draft is the user's and active, and the upload gets a slot of its limits (a full
   * draft: 409 DRAFT_IMAGE_LIMIT; see ./draftUploads.ts). Returns the slot's id.
   */
  private async takeUploadSlot(workspaceId: string, draftId: string | undefined, purpose: DraftUploadPurpose): Promise<string> {
    if (!draftId) throw new DomainError(400, 'DRAFT_REQUIRED', ENHANCE_MSG.openDraftFirst);
    return this.deps.knex.transaction(async (trx) => {
      const draft = await this.findOwned(workspaceId, draftId, trx, { activeOnly: true });
      return this.deps.draftUploads.reserve(trx, workspaceId, draft.id, purpose);
    });
  }

  /**
   * Streams one image into the draft's folder, typed by its first bytes (JPEG, PNG, GIF, WebP) and counted against
   * the upload limit, then checks sharp can read it. Not yet an image of the draft: add-images registers it (a
   * reference: a dispatch that uses it); until then it holds a slot, and the sweep removes it when it waits too long.
   */
  async upload(workspaceId: string, draftId: string, purpose: DraftUploadPurpose, incoming: IncomingFile): Promise<DraftUploadResult> {
    const slot = await this.takeUploadSlot(workspaceId, draftId, purpose);
    try {
      return await this.storeUpload(workspaceId, draftId, purpose, incoming, slot);
    } catch (err) {
      await this.deps.draftUploads.release(slot).catch((cleanup: unknown) => this.deps.logger?.warn({ err: cleanup, uploadId: slot }, 'could not give back a draft upload slot'));
      throw err;
    }
  }

  private async storeUpload(workspaceId: string, draftId: string, purpose: DraftUploadPurpose, incoming: IncomingFile, slot: string): Promise<DraftUploadResult> {
    const inspector = new UploadInspector({
      maxBytes: this.maxBytes,
      accept: (kind) => {
        if (kind.kind === 'image') return null;
        if (kind.kind === 'video' || incoming.declaredMime.toLowerCase().startsWith('video/')) return new DomainError(400, 'VIDEO_NOT_SUPPORTED', MSG.videoUploadsNotSupported);
        return new DomainError(400, 'INVALID_FILE_TYPE', `File "${displayName(incoming.fileName, 'upload')}" has invalid type. Accepted types: ${ACCEPTED_TYPES_TEXT}`);
      },
      tooLarge: (seen) => new DomainError(413, 'FILE_TOO_LARGE', MSG.fileTooLarge(megabytes(Math.max(seen, incoming.requestBytes ?? 0)))),
    });
    incoming.stream.on('error', (err) => inspector.destroy(err));
    incoming.stream.pipe(inspector);
    const kind = await inspector.detected;
    if (kind.kind !== 'image') throw new Error('unreachable: refused kinds fail the inspector');
    const folder = purpose === 'image' ? 'uploads' : 'references';
    const file: StoredFile = { bucket: DRAFTS_BUCKET, path: `${draftFolder(workspaceId, draftId)}/${folder}/${slot}.${kind.extension}` };
    if (!(await this.deps.draftUploads.placed(slot, file.path))) {
      inspector.destroy();
      throw uploadOutlastedSlot();
    }
    await this.deps.storage.objects.put(DRAFTS_BUCKET, file.path, inspector);
    try {
      const size = await this.readableImage(file, kind.mime, incoming.fileName);
      if (!(await this.deps.draftUploads.stored(slot, inspector.size))) throw uploadOutlastedSlot();
      return {
        success: true,
        url: this.deps.storage.urls.sign(DRAFTS_BUCKET, file.path),
        file_url: fileUrl(DRAFTS_BUCKET, file.path),
        storage: { ...file, mime: kind.mime, size: inspector.size, width: size.width, height: size.height, name: displayName(incoming.fileName, `render.${kind.extension}`) },
      };
    } catch (err) {
      await removeStoredFiles(this.deps.storage.objects, [file], this.deps.logger);
      throw err;
    }
  }

  /** Removes a stored upload the request did not keep (a later form field was refused), and its slot. */
  async discardUpload(stored: DraftUploadResult): Promise<void> {
    await removeStoredFiles(this.deps.storage.objects, [{ bucket: stored.storage.bucket, path: stored.storage.path }], this.deps.logger);
    await this.deps.draftUploads.releaseFile(stored.storage).catch((err: unknown) => this.deps.logger?.warn({ err }, 'could not give back a draft upload slot'));
  }

  private async readableImage(file: StoredFile, mime: string, fileName: string): Promise<{ width: number; height: number }> {
    const unreadable = new DomainError(400, 'INVALID_IMAGE', `File "${displayName(fileName, 'upload')}" is not a readable image`);
    const local = await this.deps.storage.objects.localFile(file.bucket, file.path);
    try {
      const meta = await sharp(local.path).metadata().catch(() => {
        throw unreadable;
      });
      if (meta.format !== mime.slice('image/'.length) || !meta.width || !meta.height) throw unreadable;
      return { width: meta.autoOrient?.width ?? meta.width, height: meta.autoOrient?.height ?? meta.height };
    } finally {
      await local.release();
    }
  }

  /**
   * Registers uploaded files as the draft's images, all or none: each `source_url` must be an upload of this draft
   * (signed or not) not yet registered, and the draft may hold at most 4 images. The first version of each image is
   * its upload; order_index and name come from the request (defaults: after the last, the file name).
   */
  async addImages(workspaceId: string, draftId: string, images: NewDraftImage[]): Promise<DraftImageView[]> {
    if (images.length === 0) throw new DomainError(400, 'VALIDATION_ERROR', 'images must list at least one image');
    const ids = await this.deps.knex.transaction(async (trx) => {
      // the account's upload lock first, as an upload taking a slot does: the draft's count cannot move meanwhile
      await lockAccountUploads(trx, 'draftUploads', workspaceId);
      const draft = await this.findOwned(workspaceId, draftId, trx, { activeOnly: true, forUpdate: true });
      const existing = await DraftImage.query(trx).where({ draft_id: draft.id }).select('id', 'source_url', 'order_index');
      if (existing.length + images.length > DRAFT_LIMITS.maxImagesPerDraft) throw limitReached();
      const files = images.map((image) => {
        const file = this.deps.storage.urls.parse(image.source_url);
        if (!isOwnDraftFile(file, workspaceId, draft.id) || !file.path.startsWith(`${draftFolder(workspaceId, draft.id)}/uploads/`)) {
          throw new DomainError(400, 'INVALID_SOURCE_URL', 'source_url must be a file uploaded to this draft (POST /api/enhance-set/drafts/upload)');
        }
        return file;
      });
      const paths = new Set<string>();
      for (const file of files) {
        if (paths.has(file.path) || existing.some((e) => parseFileUrl(e.sourceUrl)?.path === file.path)) {
          throw new DomainError(409, 'DRAFT_IMAGE_EXISTS', 'That upload is already an image of this draft');
        }
        paths.add(file.path);
      }
      // the uploads become images (kept); one the sweep is removing is waited for, then found gone by the stat below
      await this.deps.draftUploads.registerImages(trx, draft.id, [...paths]);
      let nextIndex = existing.reduce((max, e) => Math.max(max, e.orderIndex + 1), 0);
      const inserted: string[] = [];
      for (const [i, image] of images.entries()) {
        const file = files[i];
        const stat = await this.deps.storage.objects.stat(DRAFTS_BUCKET, file.path);
        if (!stat) throw new DomainError(400, 'INVALID_SOURCE_URL', 'The uploaded file was not found. Upload it again.');
        const ext = file.path.split('.').pop() ?? 'jpg';
        const mime = ext === 'jpg' ? 'image/jpeg' : `image/${ext}`;
        const size = await this.readableImage(file, mime, image.name ?? file.path);
        const url = fileUrl(DRAFTS_BUCKET, file.path);
        const first: DraftVersion = { url, storage: file, created_at: new Date().toISOString(), source: 'upload' };
        const metadata: DraftImageMetadata = { storage: file, previous_url: null, history: [first], width: size.width, height: size.height, mime };
        const orderIndex = image.order_index !== undefined ? image.order_index : nextIndex;
        nextIndex = Math.max(nextIndex, orderIndex + 1);
        const row = await DraftImage.query(trx).insertAndFetch({
          draftId: draft.id,
          name: displayName(image.name ?? '', path.basename(file.path)),
          sourceUrl: url,
          resolvedUrl: url,
          sourceType: image.source_type?.trim() || 'uploaded',
          orderIndex,
          metadata: metadata as unknown as Record<string, unknown>,
        });
        inserted.push(row.id);
      }
      await Draft.query(trx).patch({ updatedAt: new Date() }).where({ id: draft.id });
      return inserted;
    });
    return this.imageViews(draftId, ids);
  }

  /** Removes the image, every stored version of it, and cancels a job still running on it. */
  async removeImage(workspaceId: string, draftId: string, imageId: string): Promise<void> {
    if (!UUID.test(imageId)) throw imageNotFound();
    const { metadata, running } = await this.deps.knex.transaction(async (trx) => {
      const draft = await this.findOwned(workspaceId, draftId, trx, { forUpdate: true });
      const image = await DraftImage.query(trx).findOne({ id: imageId, draft_id: draft.id }).forUpdate();
      if (!image) throw imageNotFound();
      const jobs = (await trx('draft_jobs').where({ draft_image_id: image.id }).whereIn('status', ['pending', 'processing']).pluck('workflow_id')) as string[];
      await DraftImage.query(trx).deleteById(image.id);
      await Draft.query(trx).patch({ updatedAt: new Date() }).where({ id: draft.id });
      return { metadata: image.metadata as unknown as DraftImageMetadata, running: jobs };
    });
    await this.cancelWorkflows(running);
    const files = new Map<string, StoredFile>();
    for (const version of metadata.history ?? []) files.set(version.storage.path, version.storage);
    if (metadata.storage) files.set(metadata.storage.path, metadata.storage);
    await removeStoredFiles(this.deps.storage.objects, [...files.values()], this.deps.logger);
    await this.deps.draftUploads.forget(draftId, [...files.keys()]);
  }

  /** Makes a version of the image's history current again (undo and redo swap the two newest). */
  async restoreVersion(workspaceId: string, draftId: string, imageId: string, versionUrl: string): Promise<DraftImageView> {
    if (!UUID.test(imageId)) throw imageNotFound();
    const wanted = this.deps.storage.urls.parse(versionUrl);
    await this.deps.knex.transaction(async (trx) => {
      const draft = await this.findOwned(workspaceId, draftId, trx);
      const image = await DraftImage.query(trx).findOne({ id: imageId, draft_id: draft.id }).forUpdate();
      if (!image) throw imageNotFound();
      const metadata = image.metadata as unknown as DraftImageMetadata;
      const version = wanted ? metadata.history.find((v) => v.storage.path === wanted.path && v.storage.bucket === wanted.bucket) : undefined;
      const restored = version ? restoreVersion(metadata, version.url) : null;
      if (!restored) throw new DomainError(404, 'DRAFT_VERSION_NOT_FOUND', ENHANCE_MSG.versionNotFound);
      await DraftImage.query(trx)
        .patch({ metadata: restored as unknown as Record<string, unknown>, resolvedUrl: restored.history[0].url })
        .where({ id: image.id });
      await Draft.query(trx).patch({ updatedAt: new Date() }).where({ id: draft.id });
    });
    const [view] = await this.imageViews(draftId, [imageId]);
    return view;
  }

  /**
   * "Move to projects": a new project holding a copy of each image's current version as a render (real copies through
   * the render upload pipeline: content check, dimensions, thumbnail), then the draft is marked committed and leaves
   * the list. Deleting the draft later leaves the project intact. Any failure removes the half-made project.
   */
  async commit(workspaceId: string, draftId: string, newProjectName: string | null): Promise<{ projectId: string; projectName: string; renders: number }> {
    const draft = await this.findOwned(workspaceId, draftId, undefined, { activeOnly: true });
    const images = await DraftImage.query(this.deps.knex).where({ draft_id: draft.id }).orderBy([{ column: 'order_index' }, { column: 'created_at' }]);
    const project = await this.deps.projects.create(workspaceId, { name: newProjectName?.trim() || draft.name });
    let renders = 0;
    try {
      for (const image of images) {
        const metadata = image.metadata as unknown as DraftImageMetadata;
        const stream = await this.deps.storage.objects.read(metadata.storage.bucket, metadata.storage.path);
        const ext = metadata.storage.path.split('.').pop() ?? 'jpg';
        const base = image.name.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'render';
        const staged = await this.deps.uploads.stage(workspaceId, { stream, fileName: `${base}.${ext}`, declaredMime: metadata.mime ?? '' }, project.id);
        let result: RenderUploadResult;
        try {
          result = await this.deps.uploads.complete(workspaceId, project.id, staged);
        } catch (err) {
          await this.deps.uploads.discard(staged);
          throw err;
        }
        // the render carries on the draft image's chain: made from it, by the run that made its current version
        const jobId = metadata.history?.[0]?.job_id;
        const run = jobId ? ((await this.deps.knex('draft_jobs').where({ id: jobId, workspace_id: workspaceId }).first('workflow_id')) as { workflow_id: string | null } | undefined) : undefined;
        await recordLineage(this.deps.knex, { workspaceId, itemKind: 'render', itemId: String(result.render.data.id), sources: [{ kind: 'draft_image', id: image.id }], workflowId: run?.workflow_id ?? null });
        renders += 1;
      }
      const updated = await Draft.query(this.deps.knex)
        .patch({ status: 'committed', committedProjectId: project.id })
        .where({ id: draft.id, workspace_id: workspaceId, status: 'active' });
      if (updated !== 1) throw new DomainError(409, 'DRAFT_ALREADY_COMMITTED', 'This draft was already moved to a project');
    } catch (err) {
      await this.deps.projects.remove(workspaceId, [project.id]).catch((cleanup: unknown) => this.deps.logger?.warn({ err: cleanup, projectId: project.id }, 'could not remove a half-made project'));
      throw err;
    }
    return { projectId: project.id, projectName: project.name, renders };
  }

  /** Deletes the draft (images and jobs cascade), cancels its running jobs and removes its folder. */
  async remove(workspaceId: string, draftId: string): Promise<void> {
    const running = await this.deps.knex.transaction(async (trx) => {
      const draft = await this.findOwned(workspaceId, draftId, trx, { forUpdate: true });
      const jobs = (await trx('draft_jobs').where({ draft_id: draft.id }).whereIn('status', ['pending', 'processing']).pluck('workflow_id')) as string[];
      await Draft.query(trx).deleteById(draft.id);
      return jobs;
    });
    await this.cancelWorkflows(running);
    try {
      await this.deps.storage.objects.removePrefix(DRAFTS_BUCKET, draftFolder(workspaceId, draftId));
    } catch (err) {
      this.deps.logger?.warn({ err, draftId }, 'could not remove the files of a deleted draft');
    }
  }

  private async cancelWorkflows(workflowIds: string[]): Promise<void> {
    if (workflowIds.length === 0 || !this.deps.temporal) return;
    try {
      const client = await this.deps.temporal();
      await Promise.allSettled(workflowIds.map((id) => client.workflow.getHandle(id).cancel()));
    } catch (err) {
      this.deps.logger?.warn({ err, count: workflowIds.length }, 'could not cancel draft jobs');
    }
  }
}

