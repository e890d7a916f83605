/**
 * Which item a comment thread is about (DESIGN.md "Review"): an id the browser has (a pending item's approval id,
 * a saved item's or a render's id) found among the workspace's items. A pending item that was approved since is its
 * saved item: approval moves its threads there (moveThreadsToSavedItem), so a comment sent a moment too late lands
 * on the same thread list.
 */
import type { Knex } from 'knex';
import type { CommentItemKind } from '../../domain/comments';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CommentItem {
  kind: CommentItemKind;
  id: string;
  /** image, clip, assembly (pending items), or generated_content's content_type */
  contentType: string | null;
  projectId: string | null;
  /** the item's file name, as lists show it */
  name: string;
}

const SAVED_KIND_OF_APPROVAL: Record<string, CommentItemKind> = { image: 'image', clip: 'clip', assembly: 'compiled_video' };

const TABLES: ReadonlyArray<[CommentItemKind, string]> = [
  ['render', 'renders'],
  ['image', 'images'],
  ['clip', 'clips'],
  ['compiled_video', 'compiled_videos'],
  ['generated', 'generated_content'],
];

/** The workspace's item with this id, or null (unknown id, another workspace's item, an expired or rejected item stays findable). */
export async function findCommentItem(db: Db, workspaceId: string, itemId: string): Promise<CommentItem | null> {
  if (!UUID.test(itemId) || !UUID.test(workspaceId)) return null;
  const approval = (await db('pending_approvals').where({ id: itemId, workspace_id: workspaceId }).first('id', 'status', 'content_type', 'content_id', 'project_id', 'file_name')) as
    | { id: string; status: string; content_type: string; content_id: string | null; project_id: string; file_name: string }
    | undefined;
  if (approval) {
    if (approval.status === 'approved' && approval.content_id) {
      const saved = await findSaved(db, workspaceId, approval.content_id);
      if (saved) return saved;
    }
    return { kind: 'approval', id: approval.id, contentType: approval.content_type, projectId: approval.project_id, name: approval.file_name };
  }
  return findSaved(db, workspaceId, itemId);
}

async function findSaved(db: Db, workspaceId: string, itemId: string): Promise<CommentItem | null> {
  for (const [kind, table] of TABLES) {
    const q = db(table).where({ id: itemId, workspace_id: workspaceId });
    // an assembly's video waiting for approval is commented on as its pending item (the approval queue's card)
    if (kind === 'compiled_video') q.whereRaw("coalesce(editing_data->>'status', '') <> 'pending_approval'");
    const row = (await q.first('*')) as Record<string, unknown> | undefined;
    if (!row) continue;
    const name = String(row.custom_name ?? row.file_name ?? '');
    const contentType = kind === 'generated' ? String(row.content_type) : null;
    return { kind, id: itemId, contentType, projectId: (row.project_id as string | null) ?? null, name };
  }
  return null;
}

/**
 * Moves a pending item's threads to the item its approval saved, inside the approval's transaction: the
 * conversation stays with the picture it is about.
 */
export async function moveThreadsToSavedItem(trx: Db, approval: { id: string; contentType: string }, savedId: string): Promise<void> {
  const kind = SAVED_KIND_OF_APPROVAL[approval.contentType];
  if (!kind) return;
  await trx('comment_threads').where({ item_kind: 'approval', item_id: approval.id }).update({ item_kind: kind, item_id: savedId });
}
