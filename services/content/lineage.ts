/**
 * The version chain of generated content (issue 14): what each item was made from and what was made from it.
 * Edges live in content_lineage (db/migrations/20261124000510_content_lineage.ts), written where an item is saved
 * (activities/approvals.ts for images, clips and compiled videos) and readable up and down for the owner.
 */
import type { Knex } from 'knex';
import { DRAFTS_BUCKET } from '../../domain/enhanceRenders';
import type { Storage } from '../../storage';
import { parseFileUrl } from '../../storage/signedUrls';
import { contentItem, type ContentRow, type ContentSource } from './contentViews';

export type LineageKind = 'render' | 'image' | 'clip' | 'compiled_video' | 'generated' | 'draft_image';
type ContentKind = Exclude<LineageKind, 'draft_image'>;

type Db = Knex | Knex.Transaction;

const TABLE_OF: Record<ContentKind, ContentSource> = {
  render: 'renders',
  image: 'images',
  clip: 'clips',
  compiled_video: 'compiled_videos',
  generated: 'generated_content',
};
const KINDS = Object.keys(TABLE_OF) as ContentKind[];
/** How far up or down a chain is followed (render -> image -> upscale -> clip -> video is 4). */
export const LINEAGE_MAX_DEPTH = 8;

export interface LineageSource {
  kind: LineageKind;
  id: string;
}

export interface LineageEdgeInput {
  workspaceId: string;
  itemKind: LineageKind;
  itemId: string;
  sources: LineageSource[];
  workflowId?: string | null;
}

/** Records what an item was made from (idempotent: an activity retry writes nothing twice). */
export async function recordLineage(db: Db, input: LineageEdgeInput): Promise<void> {
  const rows = input.sources.map((s, position) => ({
    workspace_id: input.workspaceId,
    item_kind: input.itemKind,
    item_id: input.itemId,
    source_kind: s.kind,
    source_id: s.id,
    position,
    workflow_id: input.workflowId ?? null,
  }));
  if (rows.length === 0) return;
  await db('content_lineage').insert(rows).onConflict(['item_kind', 'item_id', 'source_kind', 'source_id']).ignore();
}

/** The user's render or image whose stored file a (possibly signed) file URL names, or null. */
export async function sourceFromFileUrl(db: Db, workspaceId: string, url: string | null | undefined): Promise<LineageSource | null> {
  if (!url) return null;
  const ref = parseFileUrl(url);
  if (!ref) return null;
  for (const kind of ['render', 'image'] as const) {
    const row = await db(TABLE_OF[kind]).where({ workspace_id: workspaceId, storage_bucket: ref.bucket, storage_path: ref.path }).first('id');
    if (row) return { kind, id: row.id as string };
  }
  return null;
}

export interface LineageNode {
  kind: LineageKind;
  id: string;
  /** false when the item was deleted since: its place in the chain stays */
  exists: boolean;
  name: string | null;
  project_id: string | null;
  created_at: string | null;
  thumbnail_url: string | null;
  /** steps from the asked item: 1 = made directly from it (descendants) or its direct source (ancestors) */
  depth: number;
  /** the node this one links to, one step nearer the asked item */
  via: { kind: LineageKind; id: string };
  position: number;
  /** the workflow run that made this item (none for an upload) */
  workflow_id: string | null;
  /** the run in the Temporal UI (admins only) */
  temporal_url?: string | null;
}

/** One version of a draft image (Enhance Renders), with the version it was made from. */
export interface DraftVersionNode {
  /** 0 = the current version, then older ones */
  index: number;
  url: string;
  created_at: string;
  /** 'upload' for the first version, else the job mode that made it */
  source: string;
  model_id: string | null;
  /** the index of the version it was made from (the next older one), null for the first */
  predecessor: number | null;
  workflow_id: string | null;
  temporal_url?: string | null;
}

export interface Lineage {
  item: Omit<LineageNode, 'depth' | 'via' | 'position'>;
  ancestors: LineageNode[];
  descendants: LineageNode[];
  /** for a draft image: its versions, each linked to its predecessor */
  versions?: DraftVersionNode[];
}

export class LineageItemNotFoundError extends Error {
  readonly status = 404;
  readonly code = 'CONTENT_NOT_FOUND';
  constructor() {
    super('Content not found');
  }
}

interface EdgeRow {
  kind: LineageKind;
  id: string;
  via_kind: LineageKind;
  via_id: string;
  depth: number;
  position: number;
  workflow_id: string | null;
}

async function walk(db: Db, workspaceId: string, start: LineageSource, direction: 'up' | 'down'): Promise<EdgeRow[]> {
  // up: from an item to its sources; down: from a source to the items made from it
  const [from, to] = direction === 'up' ? ['item', 'source'] : ['source', 'item'];
  const { rows } = await db.raw(
    `with recursive chain(kind, id, via_kind, via_id, depth, position, workflow_id, path) as (
       select l.${to}_kind, l.${to}_id, l.${from}_kind, l.${from}_id, 1, l.position, l.workflow_id, array[l.${from}_id, l.${to}_id]
       from content_lineage l where l.workspace_id = ? and l.${from}_kind = ? and l.${from}_id = ?
       union all
       select l.${to}_kind, l.${to}_id, l.${from}_kind, l.${from}_id, c.depth + 1, l.position, l.workflow_id, c.path || l.${to}_id
       from content_lineage l join chain c on l.${from}_kind = c.kind and l.${from}_id = c.id
       where l.workspace_id = ? and c.depth < ? and not l.${to}_id = any(c.path)
     )
     select kind, id::text, via_kind, via_id::text, depth, position, workflow_id from chain order by depth, position`,
    [workspaceId, start.kind, start.id, workspaceId, LINEAGE_MAX_DEPTH],
  );
  return rows as EdgeRow[];
}

export interface LineageOptions {
  /** admins get a link to each run in the Temporal UI */
  temporalRunUrl?: (workflowId: string) => string;
}

/**
 * Leaves out an assembly's compiled video while it waits for approval (editing_data.status 'pending_approval'): until
 * then its video and the thumbnail made from it do not leave the server (services/content/unapprovedOriginals.ts).
 */
function approvedOnly(kind: LineageKind): (q: Knex.QueryBuilder) => void {
  return (q) => {
    if (kind === 'compiled_video') q.whereRaw("coalesce(editing_data->>'status', '') <> 'pending_approval'");
  };
}

/** The chain around one of the user's items, up (what it came from) and down (what was made from it). */
export async function getLineage(db: Db, storage: Storage, workspaceId: string, itemId: string, options: LineageOptions = {}): Promise<Lineage> {
  if (!/^[0-9a-f-]{36}$/i.test(itemId)) throw new LineageItemNotFoundError();
  let start: LineageSource | null = null;
  for (const kind of KINDS) {
    const row = await db(TABLE_OF[kind]).where({ id: itemId, workspace_id: workspaceId }).modify(approvedOnly(kind)).first('id');
    if (row) {
      start = { kind, id: itemId };
      break;
    }
  }
  if (!start) {
    const draftImage = await db('draft_images as i').join('drafts as d', 'd.id', 'i.draft_id').where({ 'i.id': itemId, 'd.workspace_id': workspaceId }).first('i.id');
    if (draftImage) start = { kind: 'draft_image', id: itemId };
  }
  if (!start) throw new LineageItemNotFoundError();
  const [up, down] = await Promise.all([walk(db, workspaceId, start, 'up'), walk(db, workspaceId, start, 'down')]);

  // every item in the chain, read once per table (missing ones were deleted)
  const wanted = new Map<LineageKind, Set<string>>();
  for (const e of [...up, ...down, { kind: start.kind, id: start.id }]) {
    (wanted.get(e.kind) ?? wanted.set(e.kind, new Set()).get(e.kind))?.add(e.id);
  }
  // the run that made each item is on the item's own edges to its sources
  const madeBy = new Map<string, string>();
  const allIds = [...new Set([...wanted.values()].flatMap((ids) => [...ids]))];
  const runs = (await db('content_lineage').whereIn('item_id', allIds).andWhere({ workspace_id: workspaceId }).whereNotNull('workflow_id').select('item_kind', 'item_id', 'workflow_id')) as Array<{
    item_kind: string;
    item_id: string;
    workflow_id: string;
  }>;
  for (const r of runs) madeBy.set(`${r.item_kind}:${r.item_id}`, r.workflow_id);
  const runOf = (kind: string, id: string) => {
    const workflowId = madeBy.get(`${kind}:${id}`) ?? null;
    return { workflow_id: workflowId, ...(options.temporalRunUrl ? { temporal_url: workflowId ? options.temporalRunUrl(workflowId) : null } : {}) };
  };
  const found = new Map<string, { name: string; project_id: string | null; created_at: string; thumbnail_url: string | null }>();
  const drafts: DraftImageRow[] = [];
  await Promise.all(
    [...wanted].map(async ([kind, ids]) => {
      if (kind === 'draft_image') {
        drafts.push(...(await readDraftImages(db, workspaceId, [...ids])));
        for (const row of drafts) {
          const current = row.metadata.storage;
          found.set(`draft_image:${row.id}`, {
            name: row.name,
            project_id: null,
            created_at: new Date(row.created_at).toISOString(),
            thumbnail_url: current ? storage.urls.sign(DRAFTS_BUCKET, current.path) : null,
          });
        }
        return;
      }
      const rows = (await db(TABLE_OF[kind]).whereIn('id', [...ids]).andWhere({ workspace_id: workspaceId }).modify(approvedOnly(kind))) as ContentRow[];
      for (const row of rows) {
        const view = contentItem(storage, TABLE_OF[kind], row);
        found.set(`${kind}:${row.id}`, { name: String(view.data.name), project_id: row.project_id, created_at: view.data.created_at, thumbnail_url: view.data.thumbnail_url ?? (kind === 'image' || kind === 'render' ? view.signed_url : null) });
      }
    }),
  );
  const node = (e: EdgeRow): LineageNode => {
    const f = found.get(`${e.kind}:${e.id}`);
    return {
      kind: e.kind,
      id: e.id,
      exists: Boolean(f),
      name: f?.name ?? null,
      project_id: f?.project_id ?? null,
      created_at: f?.created_at ?? null,
      thumbnail_url: f?.thumbnail_url ?? null,
      depth: e.depth,
      via: { kind: e.via_kind, id: e.via_id },
      position: e.position,
      ...runOf(e.kind, e.id),
    };
  };
  const self = found.get(`${start.kind}:${start.id}`);
  const startDraft = start.kind === 'draft_image' ? drafts.find((d) => d.id === start?.id) : undefined;
  return {
    ...(startDraft ? { versions: await draftVersions(db, storage, workspaceId, startDraft, options) } : {}),
    item: { kind: start.kind, id: start.id, exists: true, name: self?.name ?? null, project_id: self?.project_id ?? null, created_at: self?.created_at ?? null, thumbnail_url: self?.thumbnail_url ?? null, ...runOf(start.kind, start.id) },
    ancestors: up.map(node),
    descendants: down.map(node),
  };
}

interface DraftImageRow {
  id: string;
  name: string;
  created_at: string | Date;
  metadata: { storage?: { path: string }; history?: Array<{ url: string; storage: { path: string }; created_at: string; source: string; model_id?: string; job_id?: string }> };
}

/** The user's draft images among `ids` (a draft image is the user's through its draft). */
async function readDraftImages(db: Db, workspaceId: string, ids: string[]): Promise<DraftImageRow[]> {
  if (ids.length === 0) return [];
  return (await db('draft_images as i').join('drafts as d', 'd.id', 'i.draft_id').whereIn('i.id', ids).andWhere('d.workspace_id', workspaceId).select('i.id', 'i.name', 'i.created_at', 'i.metadata')) as DraftImageRow[];
}

/** A draft image's versions, newest first, each linked to the one it was made from and to the job's run. */
async function draftVersions(db: Db, storage: Storage, workspaceId: string, image: DraftImageRow, options: LineageOptions): Promise<DraftVersionNode[]> {
  const history = image.metadata.history ?? [];
  const jobIds = history.map((v) => v.job_id).filter((id): id is string => Boolean(id));
  const runs = new Map<string, string>();
  if (jobIds.length > 0) {
    const rows = (await db('draft_jobs').whereIn('id', jobIds).andWhere({ workspace_id: workspaceId }).select('id', 'workflow_id')) as Array<{ id: string; workflow_id: string | null }>;
    for (const r of rows) if (r.workflow_id) runs.set(r.id, r.workflow_id);
  }
  return history.map((v, index) => {
    const workflowId = (v.job_id && runs.get(v.job_id)) || null;
    return {
      index,
      url: storage.urls.sign(DRAFTS_BUCKET, v.storage.path),
      created_at: v.created_at,
      source: v.source,
      model_id: v.model_id ?? null,
      // the history keeps 8 versions: the oldest kept one's predecessor may be gone, the upload has none
      predecessor: index + 1 < history.length ? index + 1 : null,
      workflow_id: workflowId,
      ...(options.temporalRunUrl ? { temporal_url: workflowId ? options.temporalRunUrl(workflowId) : null } : {}),
    };
  });
}
