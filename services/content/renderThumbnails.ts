/**
 * Render thumbnails and previews: a small webp (`thumbs/<path without extension>.webp`) and a larger one for the item
 * dialog (`previews/<path without extension>.webp`) beside each uploaded render in the same bucket, and the render's
 * dimensions read from its header. Both are derived copies: the original stays as uploaded (up to 150 MB), and no
 * picture in the library loads it.
 *
 * Making them means decoding the whole image (a 7200x7200 PNG has no shrink-on-load), so the upload makes them in the
 * request only for small files (INLINE_THUMBNAIL_MAX_BYTES and INLINE_THUMBNAIL_MAX_PIXELS); larger ones are recorded
 * without them and a worker adds them afterwards (workflows/renderThumbnail.ts, id `render-thumbnail-<renderId>`),
 * then tells the browser through a content event. The hourly storage maintenance (workflows/storageMaintenance.ts)
 * makes those a crash left without them, and the previews of renders stored before previews existed.
 */
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { Logger } from '../../config/logger';
import { ObjectExistsError, type Storage } from '../../storage';
import { publishEventQuietly } from '../platform/events';
import { removeStoredFiles, storedFileOf, type StoredFileRef } from './storedFiles';

export const THUMBNAIL_SIDE = 480;
/** The preview the item dialog shows: at most this many pixels each way (a 2x screen's dialog), webp at PREVIEW_QUALITY. */
export const PREVIEW_SIDE = 2048;
export const PREVIEW_QUALITY = 82;
/** Uploads up to this size get their thumbnail within the request (tests and clients see `thumbnailUrl` at once). */
export const INLINE_THUMBNAIL_MAX_BYTES = 8 * 1024 * 1024;
/** ... and up to this many pixels (a small file can still be a huge image to decode). */
export const INLINE_THUMBNAIL_MAX_PIXELS = 16_000_000;
/** The first bytes of an upload kept for reading its header (dimensions, EXIF orientation) without reading it back. */
export const IMAGE_HEADER_BYTES = 256 * 1024;
/** Renders still without a thumbnail or preview this long after their upload are made by the maintenance run. */
export const MISSING_THUMBNAIL_GRACE_MS = 2 * 60 * 1000;
/** ... up to this old: an image no worker could read is not retried forever (the library shows the image itself). */
export const MISSING_THUMBNAIL_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export function thumbnailPathOf(filePath: string): string {
  return `thumbs/${filePath.replace(/\.[a-z]+$/, '')}.webp`;
}

export function previewPathOf(filePath: string): string {
  return `previews/${filePath.replace(/\.[a-z]+$/, '')}.webp`;
}

export interface ImageDimensions {
  width: number;
  height: number;
}

/**
 * Width and height as shown (EXIF orientation applied) from the image's header only, if `input` is of `format`;
 * null when it is not, or is not readable as one.
 */
export async function imageDimensions(input: string | Buffer, format: string): Promise<ImageDimensions | null> {
  const meta = await sharp(input).metadata().catch(() => null);
  if (!meta || meta.format !== format || !meta.width || !meta.height) return null;
  return { width: meta.autoOrient?.width ?? meta.width, height: meta.autoOrient?.height ?? meta.height };
}

/** Whether the upload's thumbnail and preview are made in the request rather than by a worker. */
export function thumbnailInline(size: number, dims: ImageDimensions, maxBytes = INLINE_THUMBNAIL_MAX_BYTES): boolean {
  return size <= maxBytes && dims.width * dims.height <= INLINE_THUMBNAIL_MAX_PIXELS;
}

/** A webp of at most THUMBNAIL_SIDE each way, upright; fails for an image that cannot be decoded. */
export function makeThumbnail(input: string | Buffer): Promise<Buffer> {
  return sharp(input, { animated: false, sequentialRead: true })
    .autoOrient()
    .resize({ width: THUMBNAIL_SIDE, height: THUMBNAIL_SIDE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 78 })
    .toBuffer();
}

export interface RenderCopies {
  /** A webp of at most PREVIEW_SIDE each way, upright. */
  preview: Buffer;
  /** A webp of at most THUMBNAIL_SIDE each way, upright. */
  thumbnail: Buffer;
}

/**
 * The preview and the thumbnail of an image, which is decoded once: the thumbnail is made from the preview (a 2048 px
 * webp decodes in milliseconds). Fails for an image that cannot be decoded.
 */
export async function makeRenderCopies(input: string | Buffer): Promise<RenderCopies> {
  const preview = await sharp(input, { animated: false, sequentialRead: true })
    .autoOrient()
    .resize({ width: PREVIEW_SIDE, height: PREVIEW_SIDE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: PREVIEW_QUALITY })
    .toBuffer();
  return { preview, thumbnail: await makeThumbnail(preview) };
}

/**
 * Stores `copy` at `path` under the no-overwrite rule. An object already there is the same copy made from the same
 * (never replaced) render by an earlier try that stopped before recording it, so it is kept as it is.
 */
async function storeOnce(storage: Storage, ref: StoredFileRef, copy: Buffer): Promise<void> {
  try {
    await storage.objects.put(ref.bucket, ref.path, copy);
  } catch (err) {
    if (!(err instanceof ObjectExistsError)) throw err;
  }
}

interface RenderRow {
  id: string;
  workspace_id: string;
  project_id: string;
  storage_bucket: string | null;
  storage_path: string | null;
  thumbnail_path: string | null;
  preview_path: string | null;
  file_url: string | null;
}

export type ThumbnailOutcome = 'made' | 'present' | 'gone' | 'no-file';

export interface RenderThumbnailDeps {
  knex: Knex;
  storage: Storage;
  logger?: Logger;
}

/**
 * Makes and records the thumbnail and preview of one render, once: a render that has both already, or is gone, is
 * left alone; one that has only its thumbnail (stored before previews existed) gets its preview. A render deleted
 * while they were being made takes them with it. Tells the owner's browsers (a content event) so the library shows
 * them.
 */
export async function addRenderThumbnail(deps: RenderThumbnailDeps, renderId: string): Promise<ThumbnailOutcome> {
  const { knex, storage } = deps;
  const row = await knex<RenderRow>('renders').where({ id: renderId }).first();
  if (!row) return 'gone';
  if (row.thumbnail_path && row.preview_path) return 'present';
  const file = storedFileOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, fileUrl: row.file_url });
  if (!file) return 'no-file';
  const thumb: StoredFileRef = { bucket: file.bucket, path: thumbnailPathOf(file.path) };
  const preview: StoredFileRef = { bucket: file.bucket, path: previewPathOf(file.path) };
  const local = await storage.objects.localFile(file.bucket, file.path);
  let copies: RenderCopies;
  try {
    copies = await makeRenderCopies(local.path);
  } finally {
    await local.release();
  }
  const made: Record<string, string> = {};
  const stored: StoredFileRef[] = [];
  if (!row.thumbnail_path) {
    await storeOnce(storage, thumb, copies.thumbnail);
    stored.push(thumb);
    made.thumbnail_path = thumb.path;
  }
  if (!row.preview_path) {
    await storeOnce(storage, preview, copies.preview);
    stored.push(preview);
    made.preview_path = preview.path;
  }
  // each column is set only where still empty: a concurrent run that recorded it first keeps its (identical) path
  const updated = await knex('renders')
    .where({ id: renderId })
    .update({
      thumbnail_path: knex.raw('coalesce(thumbnail_path, ?)', [made.thumbnail_path ?? null]),
      preview_path: knex.raw('coalesce(preview_path, ?)', [made.preview_path ?? null]),
      updated_at: knex.fn.now(),
    })
    .returning(['id']);
  if (updated.length === 0) {
    // deleted meanwhile: its removal did not know of these copies
    await removeStoredFiles(storage.objects, stored, deps.logger);
    return 'gone';
  }
  await publishEventQuietly(knex, row.workspace_id, { kind: 'content', change: 'updated', contentKind: 'render', projectId: row.project_id, itemId: row.id }, deps.logger);
  return 'made';
}

/**
 * Ids of renders still without their thumbnail or preview, oldest first: those uploaded between
 * MISSING_THUMBNAIL_MAX_AGE_MS and MISSING_THUMBNAIL_GRACE_MS ago without a thumbnail, and, whatever their age, those
 * with a thumbnail but no preview (stored before previews existed: their image was readable once). With `workspaceId`,
 * that workspace's only.
 */
export async function rendersMissingThumbnails(
  knex: Knex,
  options: { workspaceId?: string; limit?: number; now?: number } = {},
): Promise<string[]> {
  const { workspaceId, limit = 500, now = Date.now() } = options;
  const renders = workspaceId === undefined ? knex<RenderRow>('renders') : knex<RenderRow>('renders').where({ workspace_id: workspaceId });
  const rows = await renders
    .select('id')
    .whereNotNull('storage_path')
    .where('created_at', '<', new Date(now - MISSING_THUMBNAIL_GRACE_MS))
    .where((q) =>
      q
        .where((missing) => missing.whereNull('thumbnail_path').where('created_at', '>', new Date(now - MISSING_THUMBNAIL_MAX_AGE_MS)))
        .orWhere((noPreview) => noPreview.whereNotNull('thumbnail_path').whereNull('preview_path')),
    )
    .orderBy('created_at', 'asc')
    .limit(limit);
  return rows.map((r) => r.id);
}
