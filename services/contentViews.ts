import type { Storage } from '../storage';
import { parseFileUrl } from '../storage/signedUrls';
import { signedThumbnailOf, signedUrlOf, type StorageColumns } from './storedFiles';

/** The item types of the project content response (spec 000 section 3). */
export type ContentItemType = 'render' | 'clip' | 'compiled_video' | 'ai_image' | 'generated_image';
/** The table an item comes from: what delete and rename address. */
export const CONTENT_SOURCES = ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] as const;
export type ContentSource = (typeof CONTENT_SOURCES)[number];

/** A content table's row as PostgreSQL returns it (snake_case columns), read without model hydration. */
export type ContentRow = Record<string, unknown> & {
  id: string;
  project_id: string;
  file_url: string;
  file_name: string;
  created_at: Date | string;
};

export type ContentData = Record<string, unknown> & {
  id: string;
  project_id: string;
  name: string;
  file_url: string;
  file_name: string;
  created_at: string;
  thumbnail_url: string | null;
  aspect_ratio: string | null;
};

export interface ContentItem {
  type: ContentItemType;
  source: ContentSource;
  data: ContentData;
  signed_url: string | null;
}

/** Columns that say where files live or who owns the row: the item's links and the caller already cover them. */
const INTERNAL_COLUMNS = new Set(['user_id', 'storage_bucket', 'storage_path', 'thumbnail_path', 'checksum']);
/** bigint and numeric columns, which pg hands over as strings. */
const NUMERIC_COLUMNS = new Set(['file_size', 'storage_size', 'duration']);

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function rowStorageColumns(row: ContentRow): StorageColumns {
  return {
    storageBucket: text(row.storage_bucket),
    storagePath: text(row.storage_path),
    thumbnailPath: text(row.thumbnail_path),
    fileUrl: row.file_url,
  };
}

/** A thumbnail given as a URL of ours is re-signed; an external one passes through. */
function signedLink(storage: Storage, url: string | null): string | null {
  if (!url) return null;
  const ref = parseFileUrl(url);
  return ref ? storage.urls.sign(ref.bucket, ref.path) : url;
}

function itemType(source: ContentSource, row: ContentRow): ContentItemType {
  switch (source) {
    case 'renders':
      return 'render';
    case 'images':
      return 'ai_image';
    case 'clips':
      return 'clip';
    case 'compiled_videos':
      return 'compiled_video';
    case 'generated_content':
      // generated images are 'generated_image'; generated renders show as renders, videos and clips as clips
      return row.content_type === 'image' ? 'generated_image' : row.content_type === 'render' ? 'render' : 'clip';
  }
}

function aspectRatio(source: ContentSource, row: ContentRow): string | null {
  switch (source) {
    case 'renders':
    case 'images':
      return text(row.aspect_ratio);
    case 'clips': {
      const analysis = record(row.analysis_data);
      return text(analysis.aspectRatio) ?? text(analysis.aspect_ratio);
    }
    case 'compiled_videos': {
      const editing = record(row.editing_data);
      return text(editing.aspect_ratio) ?? text(editing.aspectRatio);
    }
    case 'generated_content': {
      const generation = record(row.generation_data);
      return text(generation.aspectRatio) ?? text(generation.aspect_ratio);
    }
  }
}

/** One library item: the row's own fields in snake_case (dates as ISO strings) with its display name and signed links. */
export function contentItem(storage: Storage, source: ContentSource, row: ContentRow): ContentItem {
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (INTERNAL_COLUMNS.has(key) || value === undefined) continue;
    if (value instanceof Date) data[key] = value.toISOString();
    else if (NUMERIC_COLUMNS.has(key) && typeof value === 'string') data[key] = Number(value);
    else data[key] = value;
  }
  const files = rowStorageColumns(row);
  const thumbnail = signedThumbnailOf(storage, files) ?? (source === 'clips' ? signedLink(storage, text(row.thumbnail_url)) : null);
  const name = source === 'clips' ? (text(row.custom_name)?.trim() ?? row.file_name) : row.file_name;
  return {
    type: itemType(source, row),
    source,
    data: {
      ...data,
      id: row.id,
      project_id: row.project_id,
      name,
      file_url: row.file_url,
      file_name: row.file_name,
      created_at: new Date(row.created_at).toISOString(),
      thumbnail_url: thumbnail,
      aspect_ratio: aspectRatio(source, row),
    },
    signed_url: signedUrlOf(storage, files),
  };
}
