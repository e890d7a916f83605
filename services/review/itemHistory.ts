/**
 * Who did what to an item (issue 42, acceptance 5): who generated it, each approval, the rejection or the approval
 * that saved it (or its expiry), each comment, reply and resolved thread, with who and when, oldest first. Read from
 * the rows those actions leave (pending_approvals, approval_decisions, comment_threads, comments); an item known by
 * its saved id finds the approval that saved it. A render or an item saved otherwise starts with when it was added.
 * An item made by a request for changes reads its earlier versions too (each entry says which version), so the
 * conversation and the versions read as one history.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { COMMENT_ERROR_CODES, COMMENT_MSG } from '../../domain/comments';
import type { ItemHistoryEntry, ItemHistoryKind } from '../../domain/itemHistory';
import { findCommentItem } from './commentItems';
import { guestLabel } from '../../domain/reviewLinks';
import { guestAuthorName } from './comments';

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
  version: number;
  previous_approval_id: string | null;
}

/** How far back a version chain is read (a chain of requests this long is far beyond any review). */
const MAX_VERSIONS = 50;

function quote(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim();
  return text.length > QUOTE_LENGTH ? `${text.slice(0, QUOTE_LENGTH - 1)}…` : text;
}

export async function itemHistory(knex: Knex, workspaceId: string, itemId: string): Promise<ItemHistoryEntry[]> {
  const item = await findCommentItem(knex, workspaceId, itemId);
  if (!item) throw new DomainError(404, COMMENT_ERROR_CODES.itemNotFound, COMMENT_MSG.itemNotFound);
  // a guest of a review link is named by what they gave and the link ("Guest: Ann (ann@…) via link Terrace")
  const raw: Array<{ kind: ItemHistoryKind; at: Date; userId: string | null; guest?: { key: string; name: string }; text?: string; version?: number }> = [];

  const approvalColumns = ['id', 'status', 'created_by', 'created_at', 'decided_by', 'decided_at', 'version', 'previous_approval_id'];
  const approval = (await (item.kind === 'approval'
    ? knex('pending_approvals').where({ id: item.id, workspace_id: workspaceId })
    : knex('pending_approvals').where({ content_id: item.id, workspace_id: workspaceId })
  ).first(approvalColumns)) as ApprovalRow | undefined;

  // the versions before it ("request changes"), oldest first, then the item itself
  const chain: ApprovalRow[] = approval ? [approval] : [];
  while (chain[0]?.previous_approval_id && chain.length < MAX_VERSIONS) {
    const previous = (await knex('pending_approvals').where({ id: chain[0].previous_approval_id, workspace_id: workspaceId }).first(approvalColumns)) as ApprovalRow | undefined;
    if (!previous) break;
    chain.unshift(previous);
  }
  const versioned = chain.length > 1 || Number(approval?.version ?? 1) > 1;
  const requests = chain.length
    ? ((await knex('change_requests')
        .whereIn(
          'approval_id',
          chain.map((a) => a.id),
        )
        .select('approval_id', 'requested_by', 'request', 'created_at')) as Array<{ approval_id: string; requested_by: string | null; request: string; created_at: Date }>)
    : [];

  for (const step of chain) {
    const version = versioned ? Number(step.version) : undefined;
    raw.push({ kind: 'generated', at: step.created_at, userId: step.created_by, version });
    const decisions = (await knex('approval_decisions').where({ approval_id: step.id }).orderBy('created_at').select('user_id', 'created_at')) as Array<{ user_id: string; created_at: Date }>;
    for (const d of decisions) raw.push({ kind: 'approved', at: d.created_at, userId: d.user_id, version });
    const guestDecisions = (await knex('review_link_decisions as d')
      .join('review_links as l', 'l.id', 'd.review_link_id')
      .where('d.approval_id', step.id)
      .whereIn('d.outcome', ['approved', 'approval_counted', 'changes_requested'])
      .orderBy('d.created_at')
      .select('d.review_link_id', 'd.decision', 'd.guest_name', 'd.guest_email', 'd.created_at', 'l.title')) as Array<{
      review_link_id: string;
      decision: string;
      guest_name: string;
      guest_email: string;
      created_at: Date;
      title: string;
    }>;
    const guestOf = (g: (typeof guestDecisions)[number]) => ({ key: `link:${g.review_link_id}`, name: guestLabel({ name: g.guest_name, email: g.guest_email }, g.title) });
    for (const g of guestDecisions.filter((g) => g.decision === 'approve')) raw.push({ kind: 'approved', at: g.created_at, userId: null, guest: guestOf(g), version });
    if (!step.decided_at) continue;
    const request = requests.find((r) => r.approval_id === step.id);
    const guestRequest = guestDecisions.find((g) => g.decision === 'request_changes');
    if (step.status === 'approved') {
      // the approval that met the policy is listed above when it was recorded; an item approved before policies has none
      if (decisions.length === 0 && !guestDecisions.some((g) => g.decision === 'approve')) raw.push({ kind: 'approved', at: step.decided_at, userId: step.decided_by, version });
      raw.push({ kind: 'saved', at: step.decided_at, userId: null, version });
    } else if (step.status === 'rejected' && request) {
      raw.push({ kind: 'changes_requested', at: step.decided_at, userId: guestRequest ? null : request.requested_by, ...(guestRequest ? { guest: guestOf(guestRequest) } : {}), text: quote(request.request), version });
    } else if (step.status === 'rejected') raw.push({ kind: 'rejected', at: step.decided_at, userId: step.decided_by, version });
    else if (step.status === 'expired') raw.push({ kind: 'expired', at: step.decided_at, userId: null, version });
  }
  if (!approval) {
    const table = SAVED_TABLES[item.kind];
    const row = table ? ((await knex(table).where({ id: item.id }).first('created_at')) as { created_at: Date } | undefined) : undefined;
    if (row) raw.push({ kind: 'added', at: row.created_at, userId: null });
  }

  const comments = (await knex('comments as c')
    .join('comment_threads as t', 't.id', 'c.thread_id')
    .where({ 't.item_kind': item.kind, 't.item_id': item.id, 't.workspace_id': workspaceId })
    .orderBy([{ column: 'c.created_at' }, { column: 'c.id' }])
    .select('c.id', 'c.thread_id', 'c.created_by', 'c.body', 'c.created_at', 't.on_version', 'c.review_link_id', 'c.guest_name')) as Array<{
    id: string;
    thread_id: string;
    created_by: string | null;
    review_link_id: string | null;
    guest_name: string | null;
    body: string;
    created_at: Date;
    on_version: number | null;
  }>;
  // a request for changes is listed once, as the request (its comment opens the thread that carries it)
  const requestComments = new Set((await knex('change_requests').where({ workspace_id: workspaceId }).whereIn('comment_id', comments.map((c) => c.id)).pluck('comment_id')) as string[]);
  const opened = new Set<string>();
  for (const c of comments) {
    if (requestComments.has(c.id)) {
      opened.add(c.thread_id);
      continue;
    }
    const version = versioned ? (c.on_version ?? Number(approval?.version ?? 1)) : undefined;
    const guest = c.guest_name ? { key: `link:${c.review_link_id ?? ''}`, name: guestAuthorName(c.guest_name) } : undefined;
    raw.push({ kind: opened.has(c.thread_id) ? 'reply' : 'comment', at: c.created_at, userId: c.created_by, ...(guest ? { guest } : {}), text: quote(c.body), version });
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
      by: e.guest ? { user_id: e.guest.key, name: e.guest.name } : e.userId ? { user_id: e.userId, name: names.get(e.userId) ?? 'A deleted account' } : null,
      ...(e.text !== undefined ? { text: e.text } : {}),
      ...(e.version !== undefined ? { version: e.version } : {}),
    }));
}
