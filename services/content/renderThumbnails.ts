/**
 * Render thumbnails: a small webp beside each uploaded render (`thumbs/<path without extension>.webp` in the same
 * bucket), and the render's dimensions read from its header.
 *
 * A thumbnail means decoding the whole image (a 7200x7200 PNG has no shrink-on-load), so the upload makes it in the
 * request only for small files (INLINE_THUMBNAIL_MAX_BYTES and INLINE_THUMBNAIL_MAX_PIXELS); larger ones are recorded
 * without it and a worker adds it afterwards (workflows/renderThumbnail.ts, id `render-thumbnail-<renderId>`), then
 * tells the browser through a content event. The library shows the image itself until then. The hourly storage
 * maintenance (workflows/storageMaintenance.ts) makes those a crash left without a thumbnail.
 */
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { Logger } from '../../config/logger';
import { ObjectExistsError, type Storage } from '../../storage';
import { publishEventQuietly } from '../platform/events';
import { removeStoredFiles, storedFileOf, type StoredFileRef } from './storedFiles';

export const THUMBNAIL_SIDE = 480;
/** Uploads up to this size get their thumbnail within the request (tests and clients see `thumbnailUrl` at once). */
export const INLINE_THUMBNAIL_MAX_BYTES = 8 * 1024 * 1024;
/** ... and up to this many pixels (a small file can still be a huge image to decode). */
export const INLINE_THUMBNAIL_MAX_PIXELS = 16_000_000;
/** The first bytes of an upload kept for reading its header (dimensions, EXIF orientation) without reading it back. */
export const IMAGE_HEADER_BYTES = 256 * 1024;
/** Renders still without a thumbnail this long after their upload are made by the maintenance run. */
export const MISSING_THUMBNAIL_GRACE_MS = 2 * 60 * 1000;
/** ... up to this old: an image no worker could read is not retried forever (the library shows the image itself). */
export const MISSING_THUMBNAIL_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export function thumbnailPathOf(filePath: string): string {
  return `thumbs/${filePath.replace(/\.[a-z]+$/, '')}.webp`;
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

/** Whether the upload's thumbnail is made in the request rather than by a worker. */
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

/**
 * Stores `thumbnail` at `path` under the no-overwrite rule. An object already there is the same thumbnail made from
 * the same (never replaced) render by an earlier try that stopped before recording it, so it is kept as it is.
 */
async function storeOnce(storage: Storage, ref: StoredFileRef, thumbnail: Buffer): Promise<void> {
  try {
    await storage.objects.put(ref.bucket, ref.path, thumbnail);
  } catch (err) {
    if (!(err instanceof ObjectExistsError)) throw err;
  }
}

interface RenderRow {
  id: string;
  user_id: string;
  project_id: string;
  storage_bucket: string | null;
  storage_path: string | null;
  thumbnail_path: string | null;
  file_url: string | null;
}

export type ThumbnailOutcome = 'made' | 'present' | 'gone' | 'no-file';

export interface RenderThumbnailDeps {
  knex: Knex;
  storage: Storage;
  logger?: Logger;
}

/**
 * Makes and records the thumbnail of one render, once: a render that has one already, or is gone, is left alone.
 * A render deleted while its thumbnail was being made takes the thumbnail with it. Tells the owner's browsers
 * (a content event) so the library shows it.
 */
export async function addRenderThumbnail(deps: RenderThumbnailDeps, renderId: string): Promise<ThumbnailOutcome> {
  const { knex, storage } = deps;
  const row = await knex<RenderRow>('renders').where({ id: renderId }).first();
  if (!row) return 'gone';
  if (row.thumbnail_path) return 'present';
  const file = storedFileOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, fileUrl: row.file_url });
  if (!file) return 'no-file';
  const thumb: StoredFileRef = { bucket: file.bucket, path: thumbnailPathOf(file.path) };
  const local = await storage.objects.localFile(file.bucket, file.path);
  let thumbnail: Buffer;
  try {
    thumbnail = await makeThumbnail(local.path);
  } finally {
    await local.release();
  }
  await storeOnce(storage, thumb, thumbnail);
  const updated = await knex('renders').where({ id: renderId }).whereNull('thumbnail_path').update({ thumbnail_path: thumb.path, updated_at: knex.fn.now() });
  if (updated === 0) {
    const still = await knex<RenderRow>('renders').where({ id: renderId }).first();
    if (!still) {
      // deleted meanwhile: its removal did not know of this thumbnail
      await removeStoredFiles(storage.objects, [thumb], deps.logger);
      return 'gone';
    }
    return 'present';
  }
  await publishEventQuietly(knex, row.user_id, { kind: 'content', change: 'updated', contentKind: 'render', projectId: row.project_id, itemId: row.id }, deps.logger);
  return 'made';
}

/** Ids of renders uploaded between MISSING_THUMBNAIL_MAX_AGE_MS and MISSING_THUMBNAIL_GRACE_MS ago that still have no thumbnail, oldest first. */
export async function rendersMissingThumbnails(knex: Knex, limit = 500, now = Date.now()): Promise<string[]> {
  const rows = await knex<RenderRow>('renders')
    .select('id')
    .whereNull('thumbnail_path')
    .whereNotNull('storage_path')
    .where('created_at', '<', new Date(now - MISSING_THUMBNAIL_GRACE_MS))
    .where('created_at', '>', new Date(now - MISSING_THUMBNAIL_MAX_AGE_MS))
    .orderBy('created_at', 'asc')
    .limit(limit);
  return rows.map((r) => r.id);
}
