/**
 * Working copies of stored images for the providers. Originals are kept exactly as uploaded (up to 150 MB,
 * docs/architecture.md "Originals"); a step that needs a smaller input gets a copy made here, in the activity, never a
 * changed original. The stored file is opened by path (storage's localFile: the file itself on disk, a streamed
 * temporary copy on S3) and decoded by libvips in sequential strips with shrink-on-load, so a 150 MB original is never
 * held whole in memory: only the copy is, and it is at most `maxSide` on its longest side.
 */
import { readFile, stat } from 'node:fs/promises';
import sharp, { type Metadata } from 'sharp';
import type { StoredFile } from '../domain/approvals';
import type { ObjectStorage } from '../storage';

/** A file within the size limit goes as it is (its own bytes) up to this many bytes; a larger one is re-encoded. */
export const AS_IS_MAX_BYTES = 16 * 1024 * 1024;
const COPY_JPEG_QUALITY = 92;
/** Formats a provider takes as they are; others (GIF) are re-encoded. */
const AS_IS_FORMATS = new Set(['jpeg', 'png', 'webp']);

/** The stored file is not an image sharp can read (or has no size): the input's fault, not worth another try. */
export class UnreadableImageError extends Error {
  constructor(cause: unknown) {
    super(`The image could not be read: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'UnreadableImageError';
  }
}

export interface WorkingCopy {
  image: Buffer;
  /** Upright pixel size of the copy. */
  width: number;
  height: number;
  /** Upright pixel size of the stored file. */
  original: { width: number; height: number };
  /** Whether the copy is smaller than the stored file (then a provider worked on a reduction). */
  reduced: boolean;
}

/** The upright size of a file whose header says `meta` (EXIF orientations 5-8 swap the sides). */
function upright(meta: Metadata): { width: number; height: number } {
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  return (meta.orientation ?? 1) >= 5 ? { width: height, height: width } : { width, height };
}

/**
 * The stored image `file` as a provider input of at most `maxSide` px on its longest side: its own bytes when it is
 * already within that (a JPEG, PNG or WebP, upright, of at most AS_IS_MAX_BYTES), else an upright JPEG (PNG when it
 * has transparency) reduced to fit. Fails with storage's ObjectNotFoundError for a missing file and with
 * UnreadableImageError for one that is not a readable image; storage's own failures pass through (worth a retry).
 */
export async function workingCopy(objects: ObjectStorage, file: StoredFile, maxSide: number): Promise<WorkingCopy> {
  const local = await objects.localFile(file.bucket, file.path);
  try {
    const meta = await sharp(local.path).metadata().catch((err: unknown) => {
      throw new UnreadableImageError(err);
    });
    const original = upright(meta);
    if (!original.width || !original.height) throw new UnreadableImageError('no dimensions');
    const within = Math.max(original.width, original.height) <= maxSide;
    if (within && AS_IS_FORMATS.has(meta.format ?? '') && (meta.orientation ?? 1) === 1 && (await stat(local.path)).size <= AS_IS_MAX_BYTES) {
      return { image: await readFile(local.path), ...original, original, reduced: false };
    }
    const pipeline = sharp(local.path, { sequentialRead: true, animated: false })
      .autoOrient()
      .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true });
    const encoded = meta.hasAlpha ? pipeline.png({ compressionLevel: 6 }) : pipeline.jpeg({ quality: COPY_JPEG_QUALITY });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true }).catch((err: unknown) => {
      throw new UnreadableImageError(err);
    });
    return { image: data, width: info.width, height: info.height, original, reduced: !within };
  } finally {
    await local.release();
  }
}
