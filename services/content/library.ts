import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../../db/models';
import { LIBRARY_MAX_ITEMS, LIBRARY_PER_TABLE } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import type { ContentKind } from '../../domain/events';
import type { Storage } from '../../storage';
import { readContentRows, type ContentRowSet } from './contentRows';
import { CONTENT_SOURCES, contentItem, contentItemMaker, rowStorageColumns, type ContentItem, type ContentRow, type ContentSource } from './contentViews';
import type { ContentChanges } from './contentChanges';
import type { ProjectService } from './projects';
import { ListingReaderGoneError, ListingReaderNotReadyError, type ListingReaders } from './listingReaders';
import { publishEventQuietly } from '../platform/events';
import { removeStoredFiles, storedFilesOf } from './storedFiles';
import { encodeContentCursor, type ContentPageKey } from './contentCursor';

const CONTENT_KIND: Record<ContentSource, ContentKind> = { renders: 'render', images: 'image', clips: 'clip', compiled_videos: 'video', generated_content: 'image' };

export const CONTENT_NAME_MAX = 200;
/**
 * How long a project's listing is reused at most (its links stay signed for far longer); ?refresh and ?bust skip it.
 * Any change to the project's content, made by any process, drops it at once (ContentLibraryDeps.changes).
 */
export const CONTENT_CACHE_TTL_MS = 5000;
const CONTENT_CACHE_MAX_ENTRIES = 500;
/** First pages kept per project (one per page size asked for); the oldest size is dropped past this. */
const FIRST_PAGES_PER_PROJECT = 4;
/** Past this share of the reuse period, a request answered from the cache also starts its re-read in the background. */
const REFRESH_AHEAD_SHARE = 0.6;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a missing item is called in the 404 answer. */
const LABEL: Record<ContentSource, string> = {
  renders: 'Render',
  images: 'AI image',
  clips: 'Clip',
  compiled_videos: 'Video',
  generated_content: 'Item',
};

/** `error: null` as every other success reply carries it (spec 000's response shape). */
export interface ContentListing {
  success: true;
  error: null;
  content: ContentItem[];
}

/** One page of the paged listing; `nextCursor` is null on the last page. */
export interface ContentPage {
  success: true;
  error: null;
  content: ContentItem[];
  nextCursor: string | null;
}

export interface ContentLibraryDeps {
  storage: Storage;
  projects: ProjectService;
  /** Threads that read and build listings off the API's event loop (AppDeps.listingReaders); without them, here. */
  readers?: ListingReaders;
  logger?: Logger;
  /**
   * The content changes PostgreSQL notifies (AppDeps.contentChanges): with them the reuse is exact across processes (a
   * listing is never answered from memory after a change committed before the request began, wherever it was made,
   * and nothing read while they cannot be heard is kept); without them only this process's own writes (`invalidate`)
   * clear it.
   */
  changes?: ContentChanges;
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

/** The listing's order: newest first by creation time to the millisecond (what the items show), then by id descending. */
function newerFirst(aAt: string, aId: string, bAt: string, bId: string): number {
  if (aAt !== bAt) return aAt < bAt ? 1 : -1;
  return aId < bId ? 1 : aId > bId ? -1 : 0;
}

function newestFirst(a: ContentItem, b: ContentItem): number {
  return newerFirst(a.data.created_at, a.data.id, b.data.created_at, b.data.id);
}

/**
 * The same order in SQL. pg hands timestamps to JavaScript cut to the millisecond (never rounded), so ordering by the
 * creation time cut to the millisecond, then id (uuid order is the order of its lower-case text), is exactly the
 * order `newestFirst` gives the whole listing. Taken in UTC, the expression is the one each content table's
 * `<table>_listing_order` index holds (db/migrations/20261125000100_content_listing_order.ts).
 */
const CREATED_MS = "date_trunc('milliseconds', created_at at time zone 'UTC')";

/** Up to `limit` rows of one table that come after `after` in the listing's order (all of them: no per-table cap). */
export function pageRowsQuery(knex: Knex, source: ContentSource, projectId: string, limit: number, after: ContentPageKey | null): Knex.QueryBuilder<ContentRow, ContentRow[]> {
  const query = knex<ContentRow>(TABLE[source]).where({ project_id: projectId }).orderByRaw(`${CREATED_MS} desc, id desc`).limit(limit);
  if (source === 'compiled_videos') query.whereRaw("editing_data->>'status' = 'approved'");
  if (after) query.whereRaw(`(${CREATED_MS}, id) < (?::timestamptz at time zone 'UTC', ?::uuid)`, [after.at, after.id]);
  return query;
}

interface PageCandidate {
  values: unknown[];
  id: string;
  /** created_at as the item shows it (ISO, to the millisecond). */
  at: string;
  item: (values: readonly unknown[]) => ContentItem;
}

/** A time read by readContentRows as the item's ISO text (it is that text already unless pg's own parser read it). */
function isoText(value: unknown): string {
  return typeof value === 'string' ? value : new Date(value as Date).toISOString();
}

/** A table's newest rows for the whole listing (500 at most), newest first. */
function newestRows(knex: Knex, source: ContentSource, projectId: string): Promise<ContentRowSet> {
  const query = knex<ContentRow>(TABLE[source]).where({ project_id: projectId }).orderBy([
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ]);
  if (source === 'compiled_videos') query.whereRaw("editing_data->>'status' = 'approved'");
  return readContentRows(knex, query.limit(LIBRARY_PER_TABLE));
}

/** The whole listing's items: each table's newest rows merged newest first and cut to LIBRARY_MAX_ITEMS. */
export async function listingItems(knex: Knex, storage: Storage, projectId: string): Promise<ContentItem[]> {
  const tables = await Promise.all(CONTENT_SOURCES.map((source) => newestRows(knex, source, projectId)));
  const items = tables.flatMap((set, i) => set.rows.map(contentItemMaker(storage, CONTENT_SOURCES[i], set)));
  return items.sort(newestFirst).slice(0, LIBRARY_MAX_ITEMS);
}

/** The whole listing as the JSON bytes the API answers (read afresh: the reuse is the service's). */
export async function listingBody(knex: Knex, storage: Storage, projectId: string): Promise<Buffer> {
  return Buffer.from(JSON.stringify({ success: true, error: null, content: await listingItems(knex, storage, projectId) } satisfies ContentListing));
}

/**
 * One page of the listing in the whole listing's order, as JSON bytes: the `limit` items after `after` (from the
 * newest when null). Each table gives at most limit + 1 rows past the key, read as a range of its listing-order
 * index, so a page reads O(limit) rows however big the project is; only the items on the page are turned into items
 * and signed.
 */
export async function pageBody(knex: Knex, storage: Storage, projectId: string, limit: number, after: ContentPageKey | null): Promise<Buffer> {
  const tables = await Promise.all(CONTENT_SOURCES.map((source) => readContentRows(knex, pageRowsQuery(knex, source, projectId, limit + 1, after))));
  const candidates: PageCandidate[] = tables.flatMap((set, i) => {
    const idAt = set.columns.indexOf('id');
    const createdAt = set.columns.indexOf('created_at');
    const item = contentItemMaker(storage, CONTENT_SOURCES[i], set);
    return set.rows.map((values) => ({ values, id: values[idAt] as string, at: isoText(values[createdAt]), item }));
  });
  candidates.sort((a, b) => newerFirst(a.at, a.id, b.at, b.id));
  const page = candidates.slice(0, limit);
  const last = page[page.length - 1];
  const body: ContentPage = {
    success: true,
    error: null,
    content: page.map((c) => c.item(c.values)),
    nextCursor: candidates.length > limit && last ? encodeContentCursor({ at: last.at, id: last.id }) : null,
  };
  return Buffer.from(JSON.stringify(body));
}

/** A listing call under way; an invalidate of its project marks it. */
interface ReadMark {
  stale: boolean;
}

/** How a cached body is made and kept: the cache key, the read that makes the body, and where it is stored. */
interface CacheFill {
  key: string;
  produce: () => Promise<Buffer>;
  keep: (body: Buffer) => void;
}

/**
 * A project's content library: renders, AI images, clips, approved compiled videos and generated content,
 * 500 newest per table, merged newest first and cut to the 1000 newest, each with a signed link to its file.
 */
export class ContentLibraryService {
  private readonly cache = new Map<string, { at: number; body: Buffer }>();
  /** First pages of the paged listing by project, then by page size. */
  private readonly firstPages = new Map<string, Map<number, { at: number; body: Buffer }>>();
  /**
   * Listing and first-page calls under way, per project: an invalidate marks them, and a marked call's read is
   * answered but not kept (it may have read the tables before the change that invalidated the project).
   */
  private readonly reading = new Map<string, Set<ReadMark>>();
  /**
   * Cache fills under way, by cache key: a request that misses the cache while one runs shares it instead of reading
   * the tables again (at the end of each reuse period every open library would otherwise re-read at once). A fill
   * marked by an invalidate is not joined.
   */
  private readonly filling = new Map<string, { mark: ReadMark; body: Promise<Buffer> }>();
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(private readonly deps: ContentLibraryDeps) {
    this.ttl = deps.cacheTtlMs ?? CONTENT_CACHE_TTL_MS;
    this.now = deps.now ?? Date.now;
    deps.changes?.subscribe((projectId) => (projectId === '*' ? this.invalidateAll() : this.invalidate(projectId)));
  }

  /** Whether a read may be kept: not while changes cannot be heard (a reconnect marks the reads under way besides). */
  private mayKeep(): boolean {
    return this.deps.changes ? this.deps.changes.listening() : true;
  }

  async list(workspaceId: string, projectId: string): Promise<ContentItem[]> {
    await this.deps.projects.assertOwned(workspaceId, projectId);
    return listingItems(Render.knex(), this.deps.storage, projectId);
  }

  private table(source: ContentSource) {
    return Render.knex()<ContentRow>(TABLE[source]);
  }

  /** The listing as the JSON bytes the API answers, reused for a few seconds unless `fresh` is asked for. */
  async listingJson(workspaceId: string, given: string, fresh: boolean): Promise<Buffer> {
    // kept under the id as the notes spell it (PostgreSQL prints a uuid lower-case)
    const projectId = given.toLowerCase();
    const read = this.beginRead(projectId);
    try {
      // ownership is checked on every call, cached or not, so a deleted or foreign project never answers from the cache
      await this.deps.projects.assertOwned(workspaceId, projectId);
      const fill = (): CacheFill => ({ key: projectId, produce: () => this.listingBody(projectId), keep: (made) => this.keepListing(projectId, made) });
      // read afresh (and shared with no earlier read) unless every change committed before now has been heard
      if (!fresh && this.deps.changes && !(await this.deps.changes.caughtUp())) return await this.filled(read, true, fill());
      const hit = this.cache.get(projectId);
      if (!fresh && hit && this.now() - hit.at < this.ttl) {
        this.refreshAhead(projectId, hit.at, fill);
        return hit.body;
      }
      return await this.filled(read, fresh, fill());
    } finally {
      this.endRead(projectId, read);
    }
  }

  /** The listing's bytes, made by a reader thread when the app has them (services/content/listingReaders.ts). */
  private listingBody(projectId: string): Promise<Buffer> {
    const { readers, storage } = this.deps;
    const here = () => listingBody(Render.knex(), storage, projectId);
    return readers ? readers.listing(projectId).catch((err: unknown) => this.readHere(err, here)) : here();
  }

  /** A page's bytes, made like the listing's. */
  private pageBody(projectId: string, limit: number, after: ContentPageKey | null): Promise<Buffer> {
    const { readers, storage } = this.deps;
    const here = () => pageBody(Render.knex(), storage, projectId, limit, after);
    return readers ? readers.page(projectId, limit, after).catch((err: unknown) => this.readHere(err, here)) : here();
  }

  /**
   * A read a reader thread could not make (the thread went away, or the read failed there) is made again here, so the
   * answer, a failure's included (a database outage's 503, say), is the one this thread gives: errors do not cross
   * threads with their classes.
   */
  private readHere(err: unknown, here: () => Promise<Buffer>): Promise<Buffer> {
    // the threads are still starting (just after the API started): nothing went wrong
    if (err instanceof ListingReaderNotReadyError) return here();
    const why = err instanceof ListingReaderGoneError ? 'reader thread went away' : 'read failed in its reader thread';
    this.deps.logger?.warn({ err }, `content listing ${why}; read in the API thread`);
    return here();
  }

  private keepListing(projectId: string, body: Buffer): void {
    if (!this.mayKeep()) return;
    if (this.cache.size >= CONTENT_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.delete(projectId);
    this.cache.set(projectId, { at: this.now(), body });
  }

  /**
   * Refresh-ahead: a reused body past REFRESH_AHEAD_SHARE of its reuse period starts one fill in the background (unless
   * one of that key runs) and is answered meanwhile, so a listing in steady use is replaced before it runs out instead
   * of every open request waiting for the re-read at the end of each period. What is answered is still never older
   * than the reuse period, and the background fill is marked by an invalidate like any other read.
   */
  private refreshAhead(projectId: string, at: number, makeFill: () => CacheFill): void {
    if (this.now() - at < this.ttl * REFRESH_AHEAD_SHARE) return;
    const fill = makeFill();
    const running = this.filling.get(fill.key);
    if (running && !running.mark.stale) return;
    const read = this.beginRead(projectId);
    this.filled(read, false, fill)
      .catch((err: unknown) => this.deps.logger?.warn({ err, projectId }, 'content listing refresh-ahead failed; the next request past the reuse period reads it'))
      .finally(() => this.endRead(projectId, read));
  }

  /**
   * The body `fill.produce` makes, kept by `fill.keep` unless an invalidate marked the read meanwhile. A request that
   * is not `fresh` joins a fill of the same key under way (unmarked) instead of starting its own.
   */
  private filled(mark: ReadMark, fresh: boolean, fill: CacheFill): Promise<Buffer> {
    const { key } = fill;
    const shared = fresh ? undefined : this.filling.get(key);
    if (shared && !shared.mark.stale) return shared.body;
    const body = fill.produce().then((made) => {
      if (!mark.stale) fill.keep(made);
      return made;
    });
    if (fresh) return body;
    const entry = { mark, body };
    this.filling.set(key, entry);
    const done = () => {
      if (this.filling.get(key) === entry) this.filling.delete(key);
    };
    body.then(done, done);
    return body;
  }

  /**
   * A page of the listing as JSON bytes. Unlike the whole listing it has no 500-per-table or 1000-item cut: following
   * the cursors reaches every item. The first page is reused for a few seconds like the whole listing (unless `fresh`);
   * later pages are read each time.
   */
  async pageJson(workspaceId: string, given: string, options: { limit: number; after: ContentPageKey | null; fresh: boolean }): Promise<Buffer> {
    const { limit, after, fresh } = options;
    const projectId = given.toLowerCase();
    const read = this.beginRead(projectId);
    try {
      await this.deps.projects.assertOwned(workspaceId, projectId);
      if (after) return await this.pageBody(projectId, limit, after);
      const fill = (): CacheFill => ({
        key: `${projectId} ${limit}`,
        produce: () => this.pageBody(projectId, limit, null),
        keep: (made) => this.keepFirstPage(projectId, limit, made),
      });
      // read afresh (and shared with no earlier read) unless every change committed before now has been heard
      if (!fresh && this.deps.changes && !(await this.deps.changes.caughtUp())) return await this.filled(read, true, fill());
      const hit = this.firstPages.get(projectId)?.get(limit);
      if (!fresh && hit && this.now() - hit.at < this.ttl) {
        this.refreshAhead(projectId, hit.at, fill);
        return hit.body;
      }
      return await this.filled(read, fresh, fill());
    } finally {
      this.endRead(projectId, read);
    }
  }

  private keepFirstPage(projectId: string, limit: number, body: Buffer): void {
    if (!this.mayKeep()) return;
    // looked up again after the read: an earlier invalidate may have dropped the project's map
    let pages = this.firstPages.get(projectId);
    if (!pages) {
      if (this.firstPages.size >= CONTENT_CACHE_MAX_ENTRIES) this.firstPages.delete(this.firstPages.keys().next().value as string);
      pages = new Map();
      this.firstPages.set(projectId, pages);
    }
    pages.delete(limit);
    if (pages.size >= FIRST_PAGES_PER_PROJECT) pages.delete(pages.keys().next().value as number);
    pages.set(limit, { at: this.now(), body });
  }

  /** Forgets cached listings and first pages of a project (its content changed), and keeps no read under way of it. */
  invalidate(given: string): void {
    const projectId = given.toLowerCase();
    this.cache.delete(projectId);
    this.firstPages.delete(projectId);
    for (const read of this.reading.get(projectId) ?? []) read.stale = true;
  }

  /** The same for every project (a TRUNCATE, or the changes' LISTEN connection lost or re-opened). */
  private invalidateAll(): void {
    this.cache.clear();
    this.firstPages.clear();
    for (const reads of this.reading.values()) for (const read of reads) read.stale = true;
  }

  private beginRead(projectId: string): ReadMark {
    const read = { stale: false };
    let reads = this.reading.get(projectId);
    if (!reads) this.reading.set(projectId, (reads = new Set()));
    reads.add(read);
    return read;
  }

  private endRead(projectId: string, read: ReadMark): void {
    const reads = this.reading.get(projectId);
    reads?.delete(read);
    if (reads?.size === 0) this.reading.delete(projectId);
  }

  async remove(workspaceId: string, projectId: string, source: ContentSource, itemId: string): Promise<void> {
    const row = await this.findItem(workspaceId, projectId, source, itemId);
    await this.table(source).where({ id: row.id }).delete();
    this.invalidate(projectId);
    await publishEventQuietly(Render.knex(), workspaceId, { kind: 'content', change: 'removed', contentKind: CONTENT_KIND[source], projectId, itemId: row.id as string }, this.deps.logger);
    await removeStoredFiles(this.deps.storage.objects, storedFilesOf(rowStorageColumns(row)), this.deps.logger);
  }

  /** Renames what the library shows as the item's name: custom_name for clips, file_name otherwise. */
  async rename(workspaceId: string, projectId: string, source: ContentSource, itemId: string, name: string): Promise<ContentItem> {
    const trimmed = name.trim();
    if (!trimmed) throw new DomainError(400, 'VALIDATION_ERROR', 'Name cannot be empty');
    if (trimmed.length > CONTENT_NAME_MAX) throw new DomainError(400, 'VALIDATION_ERROR', `Name must be at most ${CONTENT_NAME_MAX} characters`);
    const row = await this.findItem(workspaceId, projectId, source, itemId);
    const column = source === 'clips' ? 'custom_name' : 'file_name';
    const [updated] = await this.table(source)
      .where({ id: row.id })
      .update({ [column]: trimmed, updated_at: Render.knex().fn.now() })
      .returning('*');
    this.invalidate(projectId);
    return contentItem(this.deps.storage, source, updated as ContentRow);
  }

  private async findItem(workspaceId: string, projectId: string, source: ContentSource, itemId: string): Promise<ContentRow> {
    await this.deps.projects.assertOwned(workspaceId, projectId);
    const notFound = new DomainError(404, 'CONTENT_NOT_FOUND', `${LABEL[source]} not found`);
    if (!UUID.test(itemId)) throw notFound;
    const query = this.table(source).where({ id: itemId, project_id: projectId });
    // a compiled video waiting for its approval is not in the library yet: its approval decides about it
    if (source === 'compiled_videos') query.whereRaw("editing_data->>'status' = 'approved'");
    const row = await query.first();
    if (!row) throw notFound;
    return row as ContentRow;
  }
}
