import type { Storage } from '../../storage';
import { parseFileUrl } from '../../storage/signedUrls';
import type { ContentRowSet } from './contentRows';
import { signedPreviewOf, signedThumbnailOf, signedUrlOf, type StorageColumns } from './storedFiles';

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
  /** A render's 2048 px preview (what the item dialog shows instead of the original); null for other items and until it is made. */
  preview_url: string | null;
  aspect_ratio: string | null;
};

export interface ContentItem {
  type: ContentItemType;
  source: ContentSource;
  data: ContentData;
  signed_url: string | null;
}

/** Columns that say where files live or who owns the row: the item's links and the caller already cover them. */
const INTERNAL_COLUMNS = new Set(['workspace_id', 'storage_bucket', 'storage_path', 'thumbnail_path', 'preview_path', 'checksum']);
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
    previewPath: text(row.preview_path),
    fileUrl: row.file_url,
  };
}

/** A thumbnail given as a URL of ours is re-signed; an external one passes through. */
function signedLink(storage: Storage, url: string | null): string | null {
  if (!url) return null;
  const ref = parseFileUrl(url);
  return ref ? storage.urls.sign(ref.bucket, ref.path) : url;
}

/** The row's fields the view reads by name, whatever else the table has. */
type NamedField = 'id' | 'project_id' | 'file_url' | 'file_name' | 'created_at' | 'custom_name' | 'content_type' | 'thumbnail_url' | 'storage_bucket' | 'storage_path' | 'thumbnail_path' | 'preview_path' | 'aspect_ratio' | 'analysis_data' | 'editing_data' | 'generation_data';
const NAMED_FIELDS: readonly NamedField[] = ['id', 'project_id', 'file_url', 'file_name', 'created_at', 'custom_name', 'content_type', 'thumbnail_url', 'storage_bucket', 'storage_path', 'thumbnail_path', 'preview_path', 'aspect_ratio', 'analysis_data', 'editing_data', 'generation_data'];

/**
 * How rows with one list of columns become items, worked out once per query result rather than per row: the columns
 * the item shows (in the row's order, internal ones left out) and where the fields the view reads by name sit.
 */
interface ViewPlan {
  shown: Array<{ index: number; key: string; numeric: boolean }>;
  at: Record<NamedField, number>;
  /** created_at (and every other time) comes as the item's ISO text already: rows read by readContentRows. */
  isoTimestamps: boolean;
}

function viewPlan(columns: readonly string[], isoTimestamps: boolean): ViewPlan {
  const shown: ViewPlan['shown'] = [];
  columns.forEach((key, index) => {
    if (!INTERNAL_COLUMNS.has(key)) shown.push({ index, key, numeric: NUMERIC_COLUMNS.has(key) });
  });
  const at = {} as Record<NamedField, number>;
  for (const field of NAMED_FIELDS) at[field] = columns.indexOf(field);
  return { shown, at, isoTimestamps };
}

function field(values: readonly unknown[], index: number): unknown {
  return index < 0 ? undefined : values[index];
}

function itemType(source: ContentSource, contentType: unknown): ContentItemType {
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
      return contentType === 'image' ? 'generated_image' : contentType === 'render' ? 'render' : 'clip';
  }
}

function aspectRatio(source: ContentSource, values: readonly unknown[], at: ViewPlan['at']): string | null {
  switch (source) {
    case 'renders':
    case 'images':
      return text(field(values, at.aspect_ratio));
    case 'clips': {
      const analysis = record(field(values, at.analysis_data));
      return text(analysis.aspectRatio) ?? text(analysis.aspect_ratio);
    }
    case 'compiled_videos': {
      const editing = record(field(values, at.editing_data));
      return text(editing.aspect_ratio) ?? text(editing.aspectRatio);
    }
    case 'generated_content': {
      const generation = record(field(values, at.generation_data));
      return text(generation.aspectRatio) ?? text(generation.aspect_ratio);
    }
  }
}

/** A row's value as the item shows it: times as ISO text, bigint and numeric columns as numbers. */
function shownValue(value: unknown, numeric: boolean): unknown {
  if (value instanceof Date) return value.toISOString();
  if (numeric && typeof value === 'string') return Number(value);
  return value;
}

function itemOf(storage: Storage, source: ContentSource, plan: ViewPlan, values: readonly unknown[]): ContentItem {
  const { at } = plan;
  // the row's own fields in its column order, then the view's fields: those the row has keep their place, the
  // others (name, and thumbnail_url, preview_url or aspect_ratio where the table has none) follow in this order
  const data: Record<string, unknown> = {};
  for (const column of plan.shown) {
    const value = values[column.index];
    if (value !== undefined) data[column.key] = shownValue(value, column.numeric);
  }
  const id = field(values, at.id) as string;
  const fileName = field(values, at.file_name) as string;
  const fileUrl = field(values, at.file_url) as string;
  const createdAt = field(values, at.created_at);
  const files: StorageColumns = {
    storageBucket: text(field(values, at.storage_bucket)),
    storagePath: text(field(values, at.storage_path)),
    thumbnailPath: text(field(values, at.thumbnail_path)),
    previewPath: text(field(values, at.preview_path)),
    fileUrl,
  };
  const thumbnail = signedThumbnailOf(storage, files) ?? (source === 'clips' ? signedLink(storage, text(field(values, at.thumbnail_url))) : null);
  data.id = id;
  data.project_id = field(values, at.project_id);
  data.name = source === 'clips' ? (text(field(values, at.custom_name))?.trim() ?? fileName) : fileName;
  data.file_url = fileUrl;
  data.file_name = fileName;
  data.created_at = plan.isoTimestamps && typeof createdAt === 'string' ? createdAt : new Date(createdAt as Date | string).toISOString();
  data.thumbnail_url = thumbnail;
  data.preview_url = signedPreviewOf(storage, files);
  data.aspect_ratio = aspectRatio(source, values, at);
  return { type: itemType(source, field(values, at.content_type)), source, data: data as ContentData, signed_url: signedUrlOf(storage, files) };
}

/** One library item: the row's own fields in snake_case (dates as ISO strings) with its display name and signed links. */
export function contentItem(storage: Storage, source: ContentSource, row: ContentRow): ContentItem {
  return itemOf(storage, source, viewPlan(Object.keys(row), false), Object.values(row));
}

/** Makes the items of rows read by readContentRows (one of `set.rows` at a time). */
export function contentItemMaker(storage: Storage, source: ContentSource, set: ContentRowSet): (values: readonly unknown[]) => ContentItem {
  const plan = viewPlan(set.columns, set.isoTimestamps);
  return (values) => itemOf(storage, source, plan, values);
}
