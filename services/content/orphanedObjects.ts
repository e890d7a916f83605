/**
 * Stored objects without any row: an upload claims its object first (services/content/uploadIntents.ts, whose sweep
 * removes what a killed upload left within minutes), so what is left here is older: objects stored before claims, or
 * by hand. Found by listing the bucket and looking each object up, and removed only
 * once older than ORPHAN_MIN_AGE_MS, so an upload still in flight (stored, not yet recorded) is never touched.
 *
 * The renders bucket: uploads at `<workspaceId>/<uuid>.<ext>`, thumbnails at `thumbs/<workspaceId>/<uuid>.webp`, previews at
 * `previews/<workspaceId>/<uuid>.webp`. Anything else
 * in the bucket (health and probe objects) is not the sweep's business and stays. Other buckets are written by
 * workflows under paths keyed by their job, and a retried activity finds and records what an earlier try stored.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { fileUrl, type Bucket, type ListedObject, type Storage } from '../../storage';

/** Objects younger than this are never removed: a day is far longer than any upload between its put and its row. */
export const ORPHAN_MIN_AGE_MS = 24 * 60 * 60 * 1000;
const LOOKUP_BATCH = 500;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const RENDER_FILE = new RegExp(`^${UUID}/${UUID}\\.(?:jpg|png|gif|webp)$`);
const RENDER_THUMBNAIL = new RegExp(`^thumbs/(${UUID}/${UUID})\\.webp$`);
const RENDER_PREVIEW = new RegExp(`^previews/(${UUID}/${UUID})\\.webp$`);
/** A render's derived copies (thumbnail, preview): `<folder>/<workspaceId>/<uuid>.webp` beside `<workspaceId>/<uuid>.<ext>`. */
const DERIVED_FOLDERS = ['thumbs', 'previews'] as const;

export interface OrphanSweepOptions {
  now?: number;
  minAgeMs?: number;
  /** Only this workspace's objects: its render files, thumbnails and previews (the three folders named by its id). */
  workspaceId?: string;
  /** Called between lookups (the activity heartbeats). */
  progress?: () => void;
}

export interface OrphanSweepResult {
  /** Objects old enough to be looked up. */
  checked: number;
  /** bucket/path of each object removed. */
  removed: string[];
}

/**
 * The thumbnail and preview paths a render stored at `storagePath` has or will have: a copy a worker stored but had not
 * recorded yet belongs to its render as long as the render is there (the sweep and the invariant checker agree on it).
 */
export function derivedRenderPaths(storagePath: string): string[] {
  const stem = storagePath.replace(/\.[a-z]+$/, '');
  return DERIVED_FOLDERS.map((folder) => `${folder}/${stem}.webp`);
}

function derivedStem(path: string): string | null {
  return (RENDER_THUMBNAIL.exec(path) ?? RENDER_PREVIEW.exec(path))?.[1] ?? null;
}

/** The paths of `candidates` (render files, thumbnails and previews) that a renders row still refers to. */
async function referencedRenderObjects(knex: Knex, candidates: readonly string[]): Promise<Set<string>> {
  const files = candidates.filter((p) => RENDER_FILE.test(p));
  const thumbs = candidates.filter((p) => RENDER_THUMBNAIL.test(p));
  const previews = candidates.filter((p) => RENDER_PREVIEW.test(p));
  const stems = [...new Set([...thumbs, ...previews].map((p) => derivedStem(p)!))];
  const rows = await knex('renders')
    .select('storage_path', 'thumbnail_path', 'preview_path', 'file_url')
    .where((q) => {
      if (files.length) q.orWhere((w) => w.where({ storage_bucket: 'renders' }).whereIn('storage_path', files));
      // rows written before the storage columns name their file by its URL only
      if (files.length) q.orWhereIn('file_url', files.map((p) => fileUrl('renders', p)));
      if (thumbs.length) q.orWhereIn('thumbnail_path', thumbs);
      if (previews.length) q.orWhereIn('preview_path', previews);
      // a copy a worker stored but had not recorded yet belongs to its render as long as the render is there
      if (stems.length) q.orWhereRaw(`regexp_replace(storage_path, '\\.[a-z]+$', '') in (${stems.map(() => '?').join(', ')})`, stems);
    });
  const referenced = new Set<string>();
  for (const row of rows as Array<{ storage_path: string | null; thumbnail_path: string | null; preview_path: string | null; file_url: string | null }>) {
    if (row.storage_path) {
      referenced.add(row.storage_path);
      for (const derived of derivedRenderPaths(row.storage_path)) referenced.add(derived);
    }
    if (row.thumbnail_path) referenced.add(row.thumbnail_path);
    if (row.preview_path) referenced.add(row.preview_path);
    if (row.file_url?.startsWith(fileUrl('renders', ''))) referenced.add(row.file_url.slice(fileUrl('renders', '').length));
  }
  return referenced;
}

const WORKSPACE_ID = new RegExp(`^${UUID}$`);

/** The renders bucket's objects: all of them, or those of one workspace (`<id>/`, `thumbs/<id>/`, `previews/<id>/`). */
async function listRenderObjects(storage: Storage, workspaceId: string | undefined): Promise<ListedObject[]> {
  if (workspaceId === undefined) return storage.objects.list('renders', '');
  if (!WORKSPACE_ID.test(workspaceId)) throw new Error(`not a workspace id: ${workspaceId}`);
  const folders = [workspaceId, ...DERIVED_FOLDERS.map((folder) => `${folder}/${workspaceId}`)];
  return (await Promise.all(folders.map((folder) => storage.objects.list('renders', folder)))).flat();
}

/** Removes the renders bucket's files, thumbnails and previews that no render row refers to and that are older than the safe age. */
export async function sweepOrphanedRenderObjects(deps: { knex: Knex; storage: Storage; logger?: Logger }, options: OrphanSweepOptions = {}): Promise<OrphanSweepResult> {
  const bucket: Bucket = 'renders';
  const cutoff = (options.now ?? Date.now()) - (options.minAgeMs ?? ORPHAN_MIN_AGE_MS);
  const listed = await listRenderObjects(deps.storage, options.workspaceId);
  const old = listed.filter((o: ListedObject) => o.modifiedAt.getTime() < cutoff && (RENDER_FILE.test(o.path) || RENDER_THUMBNAIL.test(o.path) || RENDER_PREVIEW.test(o.path)));
  const removed: string[] = [];
  for (let i = 0; i < old.length; i += LOOKUP_BATCH) {
    const batch = old.slice(i, i + LOOKUP_BATCH).map((o) => o.path);
    const referenced = await referencedRenderObjects(deps.knex, batch);
    const orphans = batch.filter((p) => !referenced.has(p));
    if (orphans.length) {
      await deps.storage.objects.remove(bucket, orphans);
      removed.push(...orphans.map((p) => `${bucket}/${p}`));
    }
    options.progress?.();
  }
  if (removed.length) deps.logger?.info({ bucket, removed: removed.length }, 'removed stored objects that had no row');
  return { checked: old.length, removed };
}
