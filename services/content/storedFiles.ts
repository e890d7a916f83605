import type { Logger } from '../../config/logger';
import { isBucket, type Bucket, type ObjectStorage, type Storage } from '../../storage';
import { parseFileUrl } from '../../storage/signedUrls';

export interface StoredFileRef {
  bucket: Bucket;
  path: string;
}

/**
 * Where a content row's file (and its thumbnail, and a render's preview, kept in the same bucket) lives; rows written
 * before storage columns fall back to file_url.
 */
export interface StorageColumns {
  storageBucket: string | null;
  storagePath: string | null;
  thumbnailPath?: string | null;
  previewPath?: string | null;
  fileUrl?: string | null;
}

export function storedFileOf(row: StorageColumns): StoredFileRef | null {
  if (row.storageBucket && row.storagePath && isBucket(row.storageBucket)) return { bucket: row.storageBucket, path: row.storagePath };
  return row.fileUrl ? parseFileUrl(row.fileUrl) : null;
}

export function storedFilesOf(row: StorageColumns): StoredFileRef[] {
  const file = storedFileOf(row);
  if (!file) return [];
  const derived = [row.thumbnailPath, row.previewPath].filter((p): p is string => Boolean(p));
  return [file, ...derived.map((path) => ({ bucket: file.bucket, path }))];
}

/** A signed link to the row's file, the row's own URL when it is not ours (an external URL), or null. */
export function signedUrlOf(storage: Storage, row: StorageColumns): string | null {
  const file = storedFileOf(row);
  if (file) return storage.urls.sign(file.bucket, file.path);
  return row.fileUrl ?? null;
}

export function signedThumbnailOf(storage: Storage, row: StorageColumns): string | null {
  const file = storedFileOf(row);
  return file && row.thumbnailPath ? storage.urls.sign(file.bucket, row.thumbnailPath) : null;
}

/** A signed link to a render's preview (services/content/renderThumbnails.ts), or null while it is not made. */
export function signedPreviewOf(storage: Storage, row: StorageColumns): string | null {
  const file = storedFileOf(row);
  return file && row.previewPath ? storage.urls.sign(file.bucket, row.previewPath) : null;
}

/**
 * Removes files whose rows are already gone. A failure here leaves an orphan file, never a row without its file,
 * so it is logged rather than raised.
 */
export async function removeStoredFiles(objects: ObjectStorage, refs: readonly StoredFileRef[], logger?: Logger): Promise<void> {
  const byBucket = new Map<Bucket, string[]>();
  for (const ref of refs) byBucket.set(ref.bucket, [...(byBucket.get(ref.bucket) ?? []), ref.path]);
  await Promise.all(
    [...byBucket].map(async ([bucket, paths]) => {
      try {
        await objects.remove(bucket, paths);
      } catch (err) {
        logger?.warn({ err, bucket, count: paths.length }, 'could not remove stored files');
      }
    }),
  );
}
