import type { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../db/models';
import type { Storage } from '../storage';
import { parseFileUrl } from '../storage/signedUrls';
import { signedThumbnailOf, signedUrlOf } from './storedFiles';

/** The item types of the project content response (spec 000 section 3). */
export type ContentItemType = 'render' | 'clip' | 'compiled_video' | 'ai_image' | 'generated_image';
/** The table an item comes from: what delete and rename address. */
export const CONTENT_SOURCES = ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] as const;
export type ContentSource = (typeof CONTENT_SOURCES)[number];

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

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The row's own fields in the spec's snake_case, dates as ISO strings. */
function rowFields(row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (value === undefined || typeof value === 'function') continue;
    out[snakeCase(key)] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

/** A thumbnail given as a URL of ours is re-signed; an external one passes through. */
function signedLink(storage: Storage, url: string | null): string | null {
  if (!url) return null;
  const ref = parseFileUrl(url);
  return ref ? storage.urls.sign(ref.bucket, ref.path) : url;
}

function base(row: Render | Image | Clip | CompiledVideo | GeneratedContent, name: string, aspect: string | null, thumbnail: string | null): ContentData {
  return {
    ...rowFields(row),
    id: row.id,
    project_id: row.projectId,
    name,
    file_url: row.fileUrl,
    file_name: row.fileName,
    created_at: new Date(row.createdAt).toISOString(),
    thumbnail_url: thumbnail,
    aspect_ratio: aspect,
  };
}

export function renderItem(storage: Storage, r: Render): ContentItem {
  return {
    type: 'render',
    source: 'renders',
    data: base(r, r.fileName, r.aspectRatio, signedThumbnailOf(storage, r)),
    signed_url: signedUrlOf(storage, r),
  };
}

export function imageItem(storage: Storage, i: Image): ContentItem {
  return {
    type: 'ai_image',
    source: 'images',
    data: base(i, i.fileName, i.aspectRatio, signedThumbnailOf(storage, i)),
    signed_url: signedUrlOf(storage, i),
  };
}

export function clipItem(storage: Storage, c: Clip): ContentItem {
  const aspect = text(c.analysisData?.aspectRatio) ?? text(c.analysisData?.aspect_ratio);
  const thumbnail = signedThumbnailOf(storage, c) ?? signedLink(storage, c.thumbnailUrl);
  return {
    type: 'clip',
    source: 'clips',
    data: base(c, c.customName?.trim() || c.fileName, aspect, thumbnail),
    signed_url: signedUrlOf(storage, c),
  };
}

export function compiledVideoItem(storage: Storage, v: CompiledVideo): ContentItem {
  const aspect = text(v.editingData?.aspect_ratio) ?? text(v.editingData?.aspectRatio);
  return {
    type: 'compiled_video',
    source: 'compiled_videos',
    data: base(v, v.fileName, aspect, signedThumbnailOf(storage, v)),
    signed_url: signedUrlOf(storage, v),
  };
}

/** Generated content of kind image is a 'generated_image'; videos and clips show as clips, renders as renders. */
export function generatedItem(storage: Storage, g: GeneratedContent): ContentItem {
  const type: ContentItemType = g.contentType === 'image' ? 'generated_image' : g.contentType === 'render' ? 'render' : 'clip';
  const aspect = text(g.generationData?.aspectRatio) ?? text(g.generationData?.aspect_ratio);
  return {
    type,
    source: 'generated_content',
    data: base(g, g.fileName, aspect, null),
    signed_url: signedUrlOf(storage, g),
  };
}
