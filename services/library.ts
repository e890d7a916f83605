import type { Logger } from '../config/logger';
import { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../db/models';
import { LIBRARY_MAX_ITEMS, LIBRARY_PER_TABLE } from '../domain/constants';
import { DomainError } from '../domain/errors';
import type { ContentKind } from '../domain/events';
import type { Storage } from '../storage';
import { contentItem, rowStorageColumns, type ContentItem, type ContentRow, type ContentSource } from './contentViews';
import type { ProjectService } from './projects';
import { publishEventQuietly } from './events';
import { removeStoredFiles, storedFilesOf } from './storedFiles';

const CONTENT_KIND: Record<ContentSource, ContentKind> = { renders: 'render', images: 'image', clips: 'clip', compiled_videos: 'video', generated_content: 'image' };

export const CONTENT_NAME_MAX = 200;
/** How long a project's listing is reused; ?refresh and ?bust skip it, this process's own writes clear it. */
export const CONTENT_CACHE_TTL_MS = 5000;
const CONTENT_CACHE_MAX_ENTRIES = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a missing item is called in the 404 answer. */
const LABEL: Record<ContentSource, string> = {
  renders: 'Render',
  images: 'AI image',
  clips: 'Clip',
  compiled_videos: 'Video',
  generated_content: 'Item',
};

export interface ContentListing {
  success: true;
  content: ContentItem[];
}

export interface ContentLibraryDeps {
  storage: Storage;
  projects: ProjectService;
  logger?: Logger;
  cacheTtlMs?: number;
  now?: () => number;
}

/** The table behind each source; rows are read as PostgreSQL returns them (no model hydration: 1000 rows per listing). */
const TABLE: Record<ContentSource, string> = {
  renders: Render.tableName,
  images: Image.tableName,
  clips: Clip.tableName,
  compiled_videos: CompiledVideo.tableName,
  generated_content: GeneratedContent.tableName,
};

function newestFirst(a: ContentItem, b: ContentItem): number {
  if (a.data.created_at !== b.data.created_at) return a.data.created_at < b.data.created_at ? 1 : -1;
  return a.data.id < b.data.id ? 1 : a.data.id > b.data.id ? -1 : 0;
}

/**
 * A project's content library: renders, AI images, clips, approved compiled videos and generated content,
 * 500 newest per table, merged newest first and cut to the 1000 newest, each with a signed link to its file.
 */
export class ContentLibraryService {
  private readonly cache = new Map<string, { at: number; body: Buffer }>();
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(private readonly deps: ContentLibraryDeps) {
    this.ttl = deps.cacheTtlMs ?? CONTENT_CACHE_TTL_MS;
    this.now = deps.now ?? Date.now;
  }

  async list(userId: string, projectId: string): Promise<ContentItem[]> {
    await this.deps.projects.findOwned(userId, projectId);
    return this.load(projectId);
  }

  private table(source: ContentSource) {
    return Render.knex()<ContentRow>(TABLE[source]);
  }

  private async newestRows(source: ContentSource, projectId: string): Promise<ContentRow[]> {
    const query = this.table(source).where({ project_id: projectId }).orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    if (source === 'compiled_videos') query.whereRaw("editing_data->>'status' = 'approved'");
    return query.limit(LIBRARY_PER_TABLE);
  }

  private async load(projectId: string): Promise<ContentItem[]> {
    const { storage } = this.deps;
    const sources = ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] as const;
    const tables = await Promise.all(sources.map((source) => this.newestRows(source, projectId)));
    const items = tables.flatMap((rows, i) => rows.map((row) => contentItem(storage, sources[i], row)));
    return items.sort(newestFirst).slice(0, LIBRARY_MAX_ITEMS);
  }

  /** The listing as the JSON bytes the API answers, reused for a few seconds unless `fresh` is asked for. */
  async listingJson(userId: string, projectId: string, fresh: boolean): Promise<Buffer> {
    // ownership is checked on every call, cached or not, so a deleted or foreign project never answers from the cache
    await this.deps.projects.findOwned(userId, projectId);
    const hit = this.cache.get(projectId);
    if (!fresh && hit && this.now() - hit.at < this.ttl) return hit.body;
    const body = Buffer.from(JSON.stringify({ success: true, content: await this.load(projectId) } satisfies ContentListing));
    if (this.cache.size >= CONTENT_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.delete(projectId);
    this.cache.set(projectId, { at: this.now(), body });
    return body;
  }

  /** Forgets cached listings of a project (after this process changed its content). */
  invalidate(projectId: string): void {
    this.cache.delete(projectId);
  }

  async remove(userId: string, projectId: string, source: ContentSource, itemId: string): Promise<void> {
    const row = await this.findItem(userId, projectId, source, itemId);
    await this.table(source).where({ id: row.id }).delete();
    this.invalidate(projectId);
    await publishEventQuietly(Render.knex(), userId, { kind: 'content', change: 'removed', contentKind: CONTENT_KIND[source], projectId, itemId: row.id as string }, this.deps.logger);
    await removeStoredFiles(this.deps.storage.objects, storedFilesOf(rowStorageColumns(row)), this.deps.logger);
  }

  /** Renames what the library shows as the item's name: custom_name for clips, file_name otherwise. */
  async rename(userId: string, projectId: string, source: ContentSource, itemId: string, name: string): Promise<ContentItem> {
    const trimmed = name.trim();
    if (!trimmed) throw new DomainError(400, 'VALIDATION_ERROR', 'Name cannot be empty');
    if (trimmed.length > CONTENT_NAME_MAX) throw new DomainError(400, 'VALIDATION_ERROR', `Name must be at most ${CONTENT_NAME_MAX} characters`);
    const row = await this.findItem(userId, projectId, source, itemId);
    const column = source === 'clips' ? 'custom_name' : 'file_name';
    const [updated] = await this.table(source)
      .where({ id: row.id })
      .update({ [column]: trimmed, updated_at: Render.knex().fn.now() })
      .returning('*');
    this.invalidate(projectId);
    return contentItem(this.deps.storage, source, updated as ContentRow);
  }

  private async findItem(userId: string, projectId: string, source: ContentSource, itemId: string): Promise<ContentRow> {
    await this.deps.projects.findOwned(userId, projectId);
    const notFound = new DomainError(404, 'CONTENT_NOT_FOUND', `${LABEL[source]} not found`);
    if (!UUID.test(itemId)) throw notFound;
    const row = await this.table(source).where({ id: itemId, project_id: projectId }).first();
    if (!row) throw notFound;
    return row as ContentRow;
  }
}
