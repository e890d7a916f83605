import type { Logger } from '../config/logger';
import { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../db/models';
import { LIBRARY_MAX_ITEMS, LIBRARY_PER_TABLE } from '../domain/constants';
import { DomainError } from '../domain/errors';
import type { Storage } from '../storage';
import {
  clipItem,
  compiledVideoItem,
  generatedItem,
  imageItem,
  renderItem,
  type ContentItem,
  type ContentSource,
} from './contentViews';
import type { ProjectService } from './projects';
import { removeStoredFiles, storedFilesOf } from './storedFiles';

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

type ContentRow = Render | Image | Clip | CompiledVideo | GeneratedContent;
function newestFirst(a: ContentItem, b: ContentItem): number {
  if (a.data.created_at !== b.data.created_at) return a.data.created_at < b.data.created_at ? 1 : -1;
  return a.data.id < b.data.id ? 1 : a.data.id > b.data.id ? -1 : 0;
}

/**
 * A project's content library: renders, AI images, clips, approved compiled videos and generated content,
 * 500 newest per table, merged newest first and cut to the 1000 newest, each with a signed link to its file.
 */
export class ContentLibraryService {
  private readonly cache = new Map<string, { at: number; body: string }>();
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

  private async load(projectId: string): Promise<ContentItem[]> {
    const order = [
      { column: 'created_at', order: 'desc' as const },
      { column: 'id', order: 'desc' as const },
    ];
    const { storage } = this.deps;
    const [renders, images, clips, videos, generated] = await Promise.all([
      Render.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
      Image.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
      Clip.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
      CompiledVideo.query().where({ project_id: projectId }).whereRaw("editing_data->>'status' = 'approved'").orderBy(order).limit(LIBRARY_PER_TABLE),
      GeneratedContent.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
    ]);
    const items = [
      ...renders.map((r) => renderItem(storage, r)),
      ...images.map((i) => imageItem(storage, i)),
      ...clips.map((c) => clipItem(storage, c)),
      ...videos.map((v) => compiledVideoItem(storage, v)),
      ...generated.map((g) => generatedItem(storage, g)),
    ];
    return items.sort(newestFirst).slice(0, LIBRARY_MAX_ITEMS);
  }

  /** The listing as the JSON the API answers, reused for a few seconds unless `fresh` is asked for. */
  async listingJson(userId: string, projectId: string, fresh: boolean): Promise<string> {
    // ownership is checked on every call, cached or not, so a deleted or foreign project never answers from the cache
    await this.deps.projects.findOwned(userId, projectId);
    const key = projectId;
    const hit = this.cache.get(key);
    if (!fresh && hit && this.now() - hit.at < this.ttl) return hit.body;
    const body = JSON.stringify({ success: true, content: await this.load(projectId) } satisfies ContentListing);
    if (this.cache.size >= CONTENT_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.delete(key);
    this.cache.set(key, { at: this.now(), body });
    return body;
  }

  /** Forgets cached listings of a project (after this process changed its content). */
  invalidate(projectId: string): void {
    this.cache.delete(projectId);
  }

  async remove(userId: string, projectId: string, source: ContentSource, itemId: string): Promise<void> {
    const row = await this.findItem(userId, projectId, source, itemId);
    await row.$query().delete();
    this.invalidate(projectId);
    await removeStoredFiles(this.deps.storage.objects, storedFilesOf(row), this.deps.logger);
  }

  /** Renames what the library shows as the item's name: custom_name for clips, file_name otherwise. */
  async rename(userId: string, projectId: string, source: ContentSource, itemId: string, name: string): Promise<ContentItem> {
    const trimmed = name.trim();
    if (!trimmed) throw new DomainError(400, 'VALIDATION_ERROR', 'Name cannot be empty');
    if (trimmed.length > CONTENT_NAME_MAX) throw new DomainError(400, 'VALIDATION_ERROR', `Name must be at most ${CONTENT_NAME_MAX} characters`);
    const row = await this.findItem(userId, projectId, source, itemId);
    const { storage } = this.deps;
    this.invalidate(projectId);
    if (row instanceof Clip) return clipItem(storage, await row.$query().patchAndFetch({ customName: trimmed }));
    const updated = await row.$query().patchAndFetch({ fileName: trimmed });
    if (updated instanceof Render) return renderItem(storage, updated);
    if (updated instanceof Image) return imageItem(storage, updated);
    if (updated instanceof CompiledVideo) return compiledVideoItem(storage, updated);
    return generatedItem(storage, updated as GeneratedContent);
  }

  private async findRow(source: ContentSource, id: string, projectId: string): Promise<ContentRow | undefined> {
    switch (source) {
      case 'renders':
        return Render.query().findOne({ id, project_id: projectId });
      case 'images':
        return Image.query().findOne({ id, project_id: projectId });
      case 'clips':
        return Clip.query().findOne({ id, project_id: projectId });
      case 'compiled_videos':
        return CompiledVideo.query().findOne({ id, project_id: projectId });
      case 'generated_content':
        return GeneratedContent.query().findOne({ id, project_id: projectId });
    }
  }

  private async findItem(userId: string, projectId: string, source: ContentSource, itemId: string): Promise<ContentRow> {
    await this.deps.projects.findOwned(userId, projectId);
    const notFound = new DomainError(404, 'CONTENT_NOT_FOUND', `${LABEL[source]} not found`);
    if (!UUID.test(itemId)) throw notFound;
    const row = await this.findRow(source, itemId, projectId);
    if (!row) throw notFound;
    return row;
  }
}
