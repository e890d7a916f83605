/**
 * What an item can be compared with (issue 42 item 3, DESIGN.md "Review"): the render it started from and every
 * earlier step of its version chain, each with a picture (or video) large enough to compare side by side. A pending
 * item has no chain yet (its edges are recorded when it is saved): its source is read from what its generation
 * recorded (an image edit's base image, a clip's render or image), then that source's own chain.
 *
 * Pay on approval: a pending item is shown by its watermarked preview only; sources are saved items and renders.
 * An item made by a request for changes is compared with the versions it replaced too (their kept previews).
 */
import type { Knex } from 'knex';
import type { ApprovalMetadata } from '../../domain/approvals';
import type { CompareMedia, CompareVersion, CompareVersions } from '../../domain/compare';
import { isBucket, type Storage } from '../../storage';
import { contentItem, type ContentRow, type ContentSource } from '../content/contentViews';
import { getLineage, sourceFromFileUrl, type LineageKind, type LineageSource } from '../content/lineage';
import { versionLabel } from '../../domain/changeRequests';

/** How far back a chain of requests for changes is read. */
const MAX_VERSIONS = 50;

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type { CompareMedia, CompareVersion, CompareVersions };

export class CompareItemNotFoundError extends Error {
  readonly status = 404;
  readonly code = 'CONTENT_NOT_FOUND';
  constructor() {
    super('Content not found');
  }
}

const TABLE_OF: Partial<Record<LineageKind, ContentSource>> = {
  render: 'renders',
  image: 'images',
  clip: 'clips',
  compiled_video: 'compiled_videos',
  generated: 'generated_content',
};

/** A saved item as compare shows it, or null when it is gone (or not the workspace's, or a video still pending). */
async function savedMedia(db: Db, storage: Storage, workspaceId: string, kind: LineageKind, id: string): Promise<CompareMedia | null> {
  const table = TABLE_OF[kind];
  if (!table) return null;
  const q = db(table).where({ id, workspace_id: workspaceId });
  if (kind === 'compiled_video') q.whereRaw("coalesce(editing_data->>'status', '') <> 'pending_approval'");
  const row = (await q.first()) as ContentRow | undefined;
  if (!row) return null;
  const view = contentItem(storage, table, row);
  const video = view.type === 'clip' || view.type === 'compiled_video';
  return {
    kind,
    id,
    name: String(view.data.name),
    media: video ? 'video' : 'image',
    // a render's 2048 px copy rather than a large original; an AI image's own file
    url: video ? view.signed_url : (view.data.preview_url ?? view.signed_url ?? view.data.thumbnail_url ?? null),
    created_at: view.data.created_at,
  };
}

/** The versions before `start` in its chain (its ancestors that still exist), nearest first. */
async function ancestorsOf(db: Db, storage: Storage, workspaceId: string, start: LineageSource, firstDepth: number): Promise<CompareVersion[]> {
  const lineage = await getLineage(db, storage, workspaceId, start.id);
  const steps = [...lineage.ancestors].filter((n) => n.exists).sort((a, b) => a.depth - b.depth);
  const out: CompareVersion[] = [];
  for (const step of steps) {
    const media = await savedMedia(db, storage, workspaceId, step.kind, step.id);
    if (media) out.push({ ...media, relation: step.kind === 'render' ? 'source' : 'earlier', depth: step.depth + firstDepth });
  }
  return out;
}

/**
 * The versions a request for changes replaced, nearest first, starting at `previousId`: each keeps its watermarked
 * preview (services/review/changeRequests.ts), and only the preview is ever shown (pay on approval).
 */
async function replacedVersions(db: Db, storage: Storage, workspaceId: string, previousId: string | null): Promise<CompareVersion[]> {
  const out: CompareVersion[] = [];
  const seen = new Set<string>();
  for (let id = previousId; id && !seen.has(id) && seen.size < MAX_VERSIONS; ) {
    seen.add(id);
    const row = (await db('pending_approvals as a')
      .leftJoin('change_requests as r', 'r.approval_id', 'a.id')
      .where({ 'a.id': id, 'a.workspace_id': workspaceId })
      .first('a.id', 'a.version', 'a.file_name', 'a.content_type', 'a.watermarked_bucket', 'a.watermarked_path', 'a.created_at', 'a.previous_approval_id', 'r.id as request_id')) as
      | { id: string; version: number; file_name: string; content_type: string; watermarked_bucket: string; watermarked_path: string; created_at: Date; previous_approval_id: string | null; request_id: string | null }
      | undefined;
    if (!row) break;
    if (row.request_id && isBucket(row.watermarked_bucket)) {
      out.push({
        kind: 'approval',
        id: row.id,
        name: `${versionLabel(Number(row.version))} · ${row.file_name}`,
        media: row.content_type === 'image' ? 'image' : 'video',
        url: storage.urls.sign(row.watermarked_bucket, row.watermarked_path),
        created_at: new Date(row.created_at).toISOString(),
        relation: 'earlier',
        depth: out.length + 1,
      });
    }
    id = row.previous_approval_id;
  }
  return out;
}

/** The item and what it can be compared with; throws CompareItemNotFoundError for an id the workspace does not have. */
export async function compareVersions(db: Db, storage: Storage, workspaceId: string, itemId: string): Promise<CompareVersions> {
  if (!UUID.test(itemId)) throw new CompareItemNotFoundError();
  const pending = (await db('pending_approvals').where({ id: itemId, workspace_id: workspaceId }).first()) as
    | {
        id: string;
        status: string;
        content_type: string;
        content_id: string | null;
        file_name: string;
        watermarked_bucket: string;
        watermarked_path: string;
        metadata: ApprovalMetadata;
        created_at: Date;
        previous_approval_id: string | null;
      }
    | undefined;
  if (pending && !(pending.status === 'approved' && pending.content_id)) {
    const item: CompareMedia = {
      kind: 'approval',
      id: pending.id,
      name: pending.file_name,
      media: pending.content_type === 'image' ? 'image' : 'video',
      url: isBucket(pending.watermarked_bucket) ? storage.urls.sign(pending.watermarked_bucket, pending.watermarked_path) : null,
      created_at: new Date(pending.created_at).toISOString(),
    };
    // the versions a request for changes replaced come first, then the source and its chain
    const replaced = await replacedVersions(db, storage, workspaceId, pending.previous_approval_id);
    const meta = pending.metadata;
    let source: LineageSource | null = null;
    if (meta.kind === 'image') source = await sourceFromFileUrl(db, workspaceId, meta.baseImageUrl);
    else if (meta.kind === 'clip') source = meta.renderId ? { kind: 'render', id: meta.renderId } : meta.imageId ? { kind: 'image', id: meta.imageId } : null;
    if (!source) return { item, versions: replaced };
    const direct = await savedMedia(db, storage, workspaceId, source.kind, source.id);
    if (!direct) return { item, versions: replaced };
    const offset = replaced.length;
    return {
      item,
      versions: [...replaced, { ...direct, relation: source.kind === 'render' ? 'source' : 'earlier', depth: offset + 1 }, ...(await ancestorsOf(db, storage, workspaceId, source, offset + 1))],
    };
  }
  const savedId = pending?.content_id ?? itemId;
  for (const kind of Object.keys(TABLE_OF) as LineageKind[]) {
    const item = await savedMedia(db, storage, workspaceId, kind, savedId);
    if (!item) continue;
    // an item saved from a later version: the versions its requests for changes replaced, then its chain
    const approval = (await db('pending_approvals').where({ content_id: savedId, workspace_id: workspaceId }).first('previous_approval_id')) as { previous_approval_id: string | null } | undefined;
    const replaced = await replacedVersions(db, storage, workspaceId, approval?.previous_approval_id ?? null);
    return { item, versions: [...replaced, ...(await ancestorsOf(db, storage, workspaceId, { kind, id: savedId }, replaced.length))] };
  }
  throw new CompareItemNotFoundError();
}
