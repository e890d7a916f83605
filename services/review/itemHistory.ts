/**
 * Who did what to an item (issue 42, acceptance 5): who generated it, each approval, the rejection or the approval
 * that saved it (or its expiry), each comment, reply and resolved thread, with who and when, oldest first. Read from
 * the rows those actions leave (pending_approvals, approval_decisions, comment_threads, comments); an item known by
 * its saved id finds the approval that saved it. A render or an item saved otherwise starts with when it was added.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { COMMENT_ERROR_CODES, COMMENT_MSG } from '../../domain/comments';
import type { ItemHistoryEntry, ItemHistoryKind } from '../../domain/itemHistory';
import { findCommentItem } from './commentItems';

/** Comments are quoted up to this many characters. */
const QUOTE_LENGTH = 140;

const SAVED_TABLES: Record<string, string> = { render: 'renders', image: 'images', clip: 'clips', compiled_video: 'compiled_videos', generated: 'generated_content' };

interface ApprovalRow {
  id: string;
  status: string;
  created_by: string | null;
  created_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
}

function quote(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim();
  return text.length > QUOTE_LENGTH ? `${text.slice(0, QUOTE_LENGTH - 1)}…` : text;
}

export async function itemHistory(knex: Knex, workspaceId: string, itemId: string): Promise<ItemHistoryEntry[]> {
  const item = await findCommentItem(knex, workspaceId, itemId);
  if (!item) throw new DomainError(404, COMMENT_ERROR_CODES.itemNotFound, COMMENT_MSG.itemNotFound);
  const raw: Array<{ kind: ItemHistoryKind; at: Date; userId: string | null; text?: string }> = [];

  const approvalColumns = ['id', 'status', 'created_by', 'created_at', 'decided_by', 'decided_at'];
  const approval = (await (item.kind === 'approval'
    ? knex('pending_approvals').where({ id: item.id, workspace_id: workspaceId })
    : knex('pending_approvals').where({ content_id: item.id, workspace_id: workspaceId })
  ).first(approvalColumns)) as ApprovalRow | undefined;

  if (approval) {
    raw.push({ kind: 'generated', at: approval.created_at, userId: approval.created_by });
    const decisions = (await knex('approval_decisions').where({ approval_id: approval.id }).orderBy('created_at').select('user_id', 'created_at')) as Array<{ user_id: string; created_at: Date }>;
    for (const d of decisions) raw.push({ kind: 'approved', at: d.created_at, userId: d.user_id });
    if (approval.decided_at) {
      if (approval.status === 'approved') {
        // the approval that met the policy is listed above when it was recorded; an item approved before policies has none
        if (decisions.length === 0) raw.push({ kind: 'approved', at: approval.decided_at, userId: approval.decided_by });
        raw.push({ kind: 'saved', at: approval.decided_at, userId: null });
      } else if (approval.status === 'rejected') raw.push({ kind: 'rejected', at: approval.decided_at, userId: approval.decided_by });
      else if (approval.status === 'expired') raw.push({ kind: 'expired', at: approval.decided_at, userId: null });
    }
  } else {
    const table = SAVED_TABLES[item.kind];
    const row = table ? ((await knex(table).where({ id: item.id }).first('created_at')) as { created_at: Date } | undefined) : undefined;
    if (row) raw.push({ kind: 'added', at: row.created_at, userId: null });
  }

  const comments = (await knex('comments as c')
    .join('comment_threads as t', 't.id', 'c.thread_id')
    .where({ 't.item_kind': item.kind, 't.item_id': item.id, 't.workspace_id': workspaceId })
    .orderBy([{ column: 'c.created_at' }, { column: 'c.id' }])
    .select('c.thread_id', 'c.created_by', 'c.body', 'c.created_at')) as Array<{ thread_id: string; created_by: string | null; body: string; created_at: Date }>;
  const opened = new Set<string>();
  for (const c of comments) {
    raw.push({ kind: opened.has(c.thread_id) ? 'reply' : 'comment', at: c.created_at, userId: c.created_by, text: quote(c.body) });
    opened.add(c.thread_id);
  }
  const resolved = (await knex('comment_threads')
    .where({ item_kind: item.kind, item_id: item.id, workspace_id: workspaceId })
    .whereNotNull('resolved_at')
    .select('resolved_by', 'resolved_at')) as Array<{ resolved_by: string | null; resolved_at: Date }>;
  for (const r of resolved) raw.push({ kind: 'resolved', at: r.resolved_at, userId: r.resolved_by });

  const ids = [...new Set(raw.map((e) => e.userId).filter((id): id is string => id !== null))];
  const names = new Map<string, string>();
  if (ids.length) {
    const rows = (await knex('users as u').leftJoin('profiles as p', 'p.id', 'u.id').whereIn('u.id', ids).select('u.id', 'u.email', 'p.name')) as Array<{ id: string; email: string; name: string | null }>;
    for (const r of rows) names.set(r.id, r.name || r.email);
  }
  return raw
    .map((e, order) => ({ e, order }))
    .sort((a, b) => new Date(a.e.at).getTime() - new Date(b.e.at).getTime() || a.order - b.order)
    .map(({ e }) => ({
      kind: e.kind,
      at: new Date(e.at).toISOString(),
      by: e.userId ? { user_id: e.userId, name: names.get(e.userId) ?? 'A deleted account' } : null,
      ...(e.text !== undefined ? { text: e.text } : {}),
    }));
}
