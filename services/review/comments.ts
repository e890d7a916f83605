/**
 * Comment threads on items (issue 42 item 1, DESIGN.md "Review"): read, open a thread (optionally pinned), reply,
 * edit and delete one's own comment, resolve and reopen a thread. Every change is one transaction that also
 * publishes the realtime note (everyone looking at the item re-reads its threads) and, for a new comment or a
 * resolved thread, the webhook event.
 *
 * Who may do what (the route has granted 'read' or 'comment' in the item's workspace, so every caller here is a
 * member, viewers included):
 * - comment, reply: every member (viewers too);
 * - edit a comment: its author only;
 * - delete a comment: its author, or an admin or owner of the workspace (deleting a thread's opening comment
 *   deletes the thread with its replies);
 * - resolve or reopen a thread: the author of its opening comment, or a member and up (who may decide on items).
 */
import type { Knex } from 'knex';
import {
  COMMENT_ERROR_CODES,
  COMMENT_MAX_CHARS,
  COMMENT_MSG,
  COMMENT_REPLIES_PER_THREAD,
  COMMENT_THREADS_PER_ITEM,
  commentPinProblem,
  isTimedItem,
  mentionedMembers,
  normalisedPin,
  type CommentItemKind,
  type CommentPin,
  type CommentThreadList,
  type CommentThreadView,
  type CommentView,
} from '../../domain/comments';
import { DomainError } from '../../domain/errors';
import { roleAllows, type WorkspaceRole } from '../../domain/workspaceRoles';
import { recordCommentEvent } from '../integrations/webhookEvents';
import { publishEvent } from '../platform/events';
import { NOTIFICATION_TEXT } from '../../domain/notifications';
import { notify, personName } from './notifications';
import { findCommentItem, type CommentItem } from './commentItems';
import type { GuestDecider } from '../../domain/workflowContracts/approval';
import { guestLabel } from '../../domain/reviewLinks';
import { recordReviewCommentEvent } from '../integrations/webhookEvents';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who acts: the member and their role in the item's workspace (from the route's grant). */
export interface CommentActor {
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
  /**
   * A guest of a review link writes (issue 43): the comment is theirs (no member is its author) and `userId` is the
   * member who made the link, who is told about it.
   */
  guest?: GuestDecider & { approvalId: string };
}

interface ThreadRow {
  id: string;
  workspace_id: string;
  item_kind: CommentItemKind;
  item_id: string;
  pin: CommentPin | null;
  created_by: string | null;
  resolved_at: Date | string | null;
  resolved_by: string | null;
  created_at: Date | string;
  on_version: number | null;
}

interface CommentRow {
  id: string;
  thread_id: string;
  workspace_id: string;
  created_by: string | null;
  body: string;
  mentions: Array<{ userId: string; name: string }>;
  edited_at: Date | string | null;
  created_at: Date | string;
  review_link_id?: string | null;
  guest_name?: string | null;
}

/** How a guest's comment is signed: the name they gave, marked as a guest (their e-mail is for the studio's members only). */
export const guestAuthorName = (name: string) => `${name} (guest)`;

const itemNotFound = () => new DomainError(404, COMMENT_ERROR_CODES.itemNotFound, COMMENT_MSG.itemNotFound);
const threadNotFound = () => new DomainError(404, COMMENT_ERROR_CODES.threadNotFound, COMMENT_MSG.threadNotFound);
const iso = (v: Date | string) => new Date(v).toISOString();

/** The comment's text as stored: the rule's checks (the API has refused control characters already). */
function checkedBody(body: string): string {
  const text = body.trim();
  if (!text) throw new DomainError(400, 'VALIDATION_ERROR', COMMENT_MSG.bodyRequired);
  if ([...text].length > COMMENT_MAX_CHARS) throw new DomainError(400, 'VALIDATION_ERROR', COMMENT_MSG.bodyTooLong);
  return text;
}

/** People by id as comments name them: their name, else their e-mail. */
async function peopleNames(db: Db, ids: Array<string | null>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => Boolean(id)))];
  if (wanted.length === 0) return new Map();
  const rows = (await db('users as u').leftJoin('profiles as p', 'p.id', 'u.id').whereIn('u.id', wanted).select('u.id', 'u.email', 'p.name')) as Array<{
    id: string;
    email: string;
    name: string | null;
  }>;
  return new Map(rows.map((r) => [r.id, r.name?.trim() || r.email]));
}

/** The member who started a generated item (its pending item's, or the approval that saved it): null for a render. */
async function itemStarter(db: Db, workspaceId: string, item: Pick<CommentItem, 'kind' | 'id'>): Promise<string | null> {
  const q = db('pending_approvals').where({ workspace_id: workspaceId });
  if (item.kind === 'approval') q.where({ id: item.id });
  else q.where({ content_id: item.id });
  const row = (await q.first('created_by')) as { created_by: string | null } | undefined;
  return row?.created_by ?? null;
}

/** The workspace's members as a comment can mention them ("@" + name, else e-mail). */
async function mentionableMembers(db: Db, workspaceId: string): Promise<Array<{ userId: string; name: string }>> {
  const rows = (await db('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .leftJoin('profiles as p', 'p.id', 'm.user_id')
    .where('m.workspace_id', workspaceId)
    .select('m.user_id', 'u.email', 'p.name')) as Array<{ user_id: string; email: string; name: string | null }>;
  return rows.map((r) => ({ userId: r.user_id, name: r.name?.trim() || r.email }));
}

async function mentionsIn(db: Db, workspaceId: string, text: string): Promise<Array<{ userId: string; name: string }>> {
  if (!text.includes('@')) return [];
  return mentionedMembers(text, await mentionableMembers(db, workspaceId));
}

function person(names: Map<string, string>, id: string | null): { userId: string | null; name: string } | null {
  if (!id) return null;
  return { userId: id, name: names.get(id) ?? 'Former member' };
}

export class CommentService {
  constructor(private readonly db: Knex) {}

  /** The item's threads, oldest first, each with its comments in order. */
  async list(workspaceId: string, itemId: string): Promise<CommentThreadList> {
    const item = await findCommentItem(this.db, workspaceId, itemId);
    if (!item) throw itemNotFound();
    const threads = (await this.db('comment_threads')
      .where({ workspace_id: workspaceId, item_kind: item.kind, item_id: item.id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])) as ThreadRow[];
    return { item: { kind: item.kind, id: item.id }, threads: await this.views(threads) };
  }

  private async views(threads: ThreadRow[]): Promise<CommentThreadView[]> {
    if (threads.length === 0) return [];
    const comments = (await this.db('comments')
      .whereIn(
        'thread_id',
        threads.map((t) => t.id),
      )
      .orderBy([{ column: 'created_at' }, { column: 'id' }])) as CommentRow[];
    const names = await peopleNames(this.db, [...comments.map((c) => c.created_by), ...threads.map((t) => t.resolved_by)]);
    // the comments that hold a "request changes" (their thread says so)
    const requests = new Set(
      (await this.db('change_requests')
        .whereIn(
          'comment_id',
          comments.map((c) => c.id),
        )
        .pluck('comment_id')) as string[],
    );
    const byThread = new Map<string, CommentView[]>();
    for (const c of comments) {
      const view: CommentView = {
        id: c.id,
        threadId: c.thread_id,
        author: c.guest_name ? { userId: null, name: guestAuthorName(c.guest_name) } : person(names, c.created_by),
        body: c.body,
        mentions: c.mentions ?? [],
        createdAt: iso(c.created_at),
        editedAt: c.edited_at ? iso(c.edited_at) : null,
      };
      (byThread.get(c.thread_id) ?? byThread.set(c.thread_id, []).get(c.thread_id))?.push(view);
    }
    return threads.map((t) => ({
      id: t.id,
      itemKind: t.item_kind,
      itemId: t.item_id,
      pin: t.pin,
      resolved: t.resolved_at !== null,
      resolvedAt: t.resolved_at ? iso(t.resolved_at) : null,
      resolvedBy: t.resolved_at ? person(names, t.resolved_by) : null,
      createdAt: iso(t.created_at),
      onVersion: t.on_version ?? null,
      changeRequest: (byThread.get(t.id) ?? []).some((c) => requests.has(c.id)),
      comments: byThread.get(t.id) ?? [],
    }));
  }

  private async thread(db: Db, workspaceId: string, threadId: string, lock = false): Promise<ThreadRow> {
    if (!UUID.test(threadId)) throw threadNotFound();
    const q = db('comment_threads').where({ id: threadId, workspace_id: workspaceId });
    if (lock) q.forUpdate();
    const row = (await q.first()) as ThreadRow | undefined;
    if (!row) throw threadNotFound();
    return row;
  }

  private async threadView(threadId: string): Promise<CommentThreadView> {
    const row = (await this.db('comment_threads').where({ id: threadId }).first()) as ThreadRow;
    return (await this.views([row]))[0];
  }

  /** Opens a thread on the item with its first comment, pinned or not. */
  async open(actor: CommentActor, itemId: string, input: { body: string; pin?: CommentPin | null }): Promise<CommentThreadView> {
    const body = checkedBody(input.body);
    const threadId = await this.db.transaction(async (trx) => {
      const item = await findCommentItem(trx, actor.workspaceId, itemId);
      if (!item) throw itemNotFound();
      const pin = input.pin ? this.checkedPin(item, input.pin) : null;
      // the item's thread count, under a lock on the item's key so two concurrent comments cannot pass the limit together
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`comments:${item.kind}:${item.id}`]);
      const [{ count }] = (await trx('comment_threads').where({ item_kind: item.kind, item_id: item.id }).count({ count: '*' })) as Array<{ count: string }>;
      if (Number(count) >= COMMENT_THREADS_PER_ITEM) throw new DomainError(409, COMMENT_ERROR_CODES.limit, COMMENT_MSG.tooManyThreads);
      const [thread] = (await trx('comment_threads')
        .insert({ workspace_id: actor.workspaceId, item_kind: item.kind, item_id: item.id, pin: pin ? JSON.stringify(pin) : null, created_by: actor.guest ? null : actor.userId })
        .returning('*')) as ThreadRow[];
      await this.addComment(trx, actor, item, thread, body, true);
      return thread.id;
    });
    return this.threadView(threadId);
  }

  /** Adds a reply to a thread (a resolved thread reopens: the conversation goes on). */
  async reply(actor: CommentActor, threadId: string, input: { body: string }): Promise<CommentThreadView> {
    const body = checkedBody(input.body);
    await this.db.transaction(async (trx) => {
      const thread = await this.thread(trx, actor.workspaceId, threadId, true);
      const [{ count }] = (await trx('comments').where({ thread_id: thread.id }).count({ count: '*' })) as Array<{ count: string }>;
      if (Number(count) > COMMENT_REPLIES_PER_THREAD) throw new DomainError(409, COMMENT_ERROR_CODES.limit, COMMENT_MSG.tooManyReplies);
      if (thread.resolved_at) await trx('comment_threads').where({ id: thread.id }).update({ resolved_at: null, resolved_by: null });
      await this.addComment(trx, actor, { kind: thread.item_kind, id: thread.item_id }, thread, body, false);
    });
    return this.threadView(threadId);
  }

  private async addComment(trx: Knex.Transaction, actor: CommentActor, item: Pick<CommentItem, 'kind' | 'id'>, thread: ThreadRow, body: string, opensThread: boolean): Promise<void> {
    // a guest mentions nobody: the members' names are not theirs to notify
    const mentions = actor.guest ? [] : await mentionsIn(trx, actor.workspaceId, body);
    const guest = actor.guest;
    const [comment] = (await trx('comments')
      .insert({
        thread_id: thread.id,
        workspace_id: actor.workspaceId,
        created_by: guest ? null : actor.userId,
        body,
        mentions: JSON.stringify(mentions),
        ...(guest ? { review_link_id: guest.reviewLinkId, guest_name: guest.name, guest_email: guest.email } : {}),
      })
      .returning('id')) as Array<{ id: string }>;
    await publishEvent(trx, actor.workspaceId, { kind: 'comments', itemId: item.id, threadId: thread.id, change: opensThread ? 'created' : 'updated' });
    await this.notifyAboutComment(trx, actor, item, thread, mentions.map((m) => m.userId), opensThread);
    await recordCommentEvent(trx, {
      workspaceId: actor.workspaceId,
      itemKind: item.kind,
      itemId: item.id,
      threadId: thread.id,
      pin: thread.pin,
      by: guest ? null : actor.userId,
      comment: { id: comment.id, body, opensThread, mentions: mentions.map((m) => m.userId) },
    });
    if (guest) {
      await recordReviewCommentEvent(trx, {
        workspaceId: actor.workspaceId,
        reviewLinkId: guest.reviewLinkId,
        approvalId: guest.approvalId,
        itemKind: item.kind,
        itemId: item.id,
        threadId: thread.id,
        commentId: comment.id,
        opensThread,
        guest: { name: guest.name, email: guest.email },
        body,
        pin: thread.pin,
      });
    }
  }

  /**
   * Who is told about a new comment: the members it mentions; on a reply, the thread's earlier authors; and the
   * member who started the item (a generated item's starter). Each person once, by the most specific reason.
   */
  private async notifyAboutComment(trx: Knex.Transaction, actor: CommentActor, ref: Pick<CommentItem, 'kind' | 'id'>, thread: ThreadRow, mentioned: string[], opensThread: boolean): Promise<void> {
    const item = await findCommentItem(trx, actor.workspaceId, ref.id);
    const itemName = item?.name || 'an item';
    const guest = actor.guest;
    if (guest) {
      // a guest's comment: the member who made the link, the item's starter and the thread's earlier authors are told
      const link = (await trx('review_links').where({ id: guest.reviewLinkId }).first('title')) as { title: string } | undefined;
      const who = guestLabel(guest, link?.title ?? 'a review link');
      const earlier = opensThread ? [] : ((await trx('comments').where({ thread_id: thread.id }).whereNotNull('created_by').distinct('created_by').pluck('created_by')) as string[]);
      const starter = await itemStarter(trx, actor.workspaceId, ref);
      await notify(trx, {
        workspaceId: actor.workspaceId,
        item: { kind: ref.kind, id: ref.id },
        projectId: item?.projectId ?? null,
        threadId: thread.id,
        by: null,
        kind: 'comment',
        recipients: [actor.userId, starter, ...earlier],
        text: NOTIFICATION_TEXT.guestComment(who, itemName),
      });
      return;
    }
    const who = await personName(trx, actor.userId);
    const about = { workspaceId: actor.workspaceId, item: { kind: ref.kind, id: ref.id }, projectId: item?.projectId ?? null, threadId: thread.id, by: actor.userId };
    const told = new Set(await notify(trx, { ...about, kind: 'mention', recipients: mentioned, text: NOTIFICATION_TEXT.mention(who, itemName) }));
    if (!opensThread) {
      const earlier = (await trx('comments').where({ thread_id: thread.id }).whereNotNull('created_by').distinct('created_by').pluck('created_by')) as string[];
      for (const id of await notify(trx, { ...about, kind: 'reply', recipients: earlier.filter((id) => !told.has(id)), text: NOTIFICATION_TEXT.reply(who, itemName) })) told.add(id);
    }
    const starter = await itemStarter(trx, actor.workspaceId, ref);
    if (starter && !told.has(starter)) await notify(trx, { ...about, kind: 'comment', recipients: [starter], text: NOTIFICATION_TEXT.comment(who, itemName) });
  }

  private checkedPin(item: CommentItem, pin: CommentPin): CommentPin {
    const problem = commentPinProblem(pin, isTimedItem(item.kind, item.contentType));
    if (problem) throw new DomainError(400, COMMENT_ERROR_CODES.pinInvalid, problem);
    return normalisedPin(pin);
  }

  private async comment(db: Db, workspaceId: string, commentId: string, lock = false): Promise<CommentRow> {
    if (!UUID.test(commentId)) throw threadNotFound();
    const q = db('comments').where({ id: commentId, workspace_id: workspaceId });
    if (lock) q.forUpdate();
    const row = (await q.first()) as CommentRow | undefined;
    if (!row) throw threadNotFound();
    return row;
  }

  /** Changes the text of one's own comment. */
  async edit(actor: CommentActor, commentId: string, input: { body: string }): Promise<CommentThreadView> {
    const body = checkedBody(input.body);
    const threadId = await this.db.transaction(async (trx) => {
      const row = await this.comment(trx, actor.workspaceId, commentId, true);
      if (row.created_by !== actor.userId) throw new DomainError(403, COMMENT_ERROR_CODES.notYours, COMMENT_MSG.notYours);
      const thread = await this.thread(trx, actor.workspaceId, row.thread_id);
      const mentions = await mentionsIn(trx, actor.workspaceId, body);
      await trx('comments').where({ id: row.id }).update({ body, mentions: JSON.stringify(mentions), edited_at: trx.fn.now() });
      await publishEvent(trx, actor.workspaceId, { kind: 'comments', itemId: thread.item_id, threadId: thread.id, change: 'updated' });
      return thread.id;
    });
    return this.threadView(threadId);
  }

  /**
   * Deletes a comment (its author, or an admin or owner); the opening comment takes its thread and replies with it.
   * Answers the thread as it is after, or null when the thread went.
   */
  async remove(actor: CommentActor, commentId: string): Promise<CommentThreadView | null> {
    const remaining = await this.db.transaction(async (trx) => {
      const row = await this.comment(trx, actor.workspaceId, commentId, true);
      if (row.created_by !== actor.userId && !roleAllows(actor.role, 'manageMembers')) {
        throw new DomainError(403, COMMENT_ERROR_CODES.notYours, COMMENT_MSG.deleteNotAllowed);
      }
      const thread = await this.thread(trx, actor.workspaceId, row.thread_id, true);
      const first = (await trx('comments').where({ thread_id: thread.id }).orderBy([{ column: 'created_at' }, { column: 'id' }]).first('id')) as { id: string };
      const wholeThread = first.id === row.id;
      if (wholeThread) await trx('comment_threads').where({ id: thread.id }).delete();
      else await trx('comments').where({ id: row.id }).delete();
      await publishEvent(trx, actor.workspaceId, { kind: 'comments', itemId: thread.item_id, threadId: thread.id, change: 'deleted' });
      return wholeThread ? null : thread.id;
    });
    return remaining ? this.threadView(remaining) : null;
  }

  /** Resolves (or reopens) a thread: the author of its opening comment, or a member and up. */
  async setResolved(actor: CommentActor, threadId: string, resolved: boolean): Promise<CommentThreadView> {
    await this.db.transaction(async (trx) => {
      const thread = await this.thread(trx, actor.workspaceId, threadId, true);
      if (thread.created_by !== actor.userId && !roleAllows(actor.role, 'approve')) {
        throw new DomainError(403, COMMENT_ERROR_CODES.resolveNotAllowed, COMMENT_MSG.resolveNotAllowed);
      }
      // resolving a resolved thread (or reopening an open one) changes nothing and announces nothing
      if ((thread.resolved_at !== null) === resolved) return;
      await trx('comment_threads')
        .where({ id: thread.id })
        .update(resolved ? { resolved_at: trx.fn.now(), resolved_by: actor.userId } : { resolved_at: null, resolved_by: null });
      await publishEvent(trx, actor.workspaceId, { kind: 'comments', itemId: thread.item_id, threadId: thread.id, change: resolved ? 'resolved' : 'reopened' });
      if (resolved) {
        await recordCommentEvent(trx, { workspaceId: actor.workspaceId, itemKind: thread.item_kind, itemId: thread.item_id, threadId: thread.id, pin: thread.pin, by: actor.userId });
      }
    });
    return this.threadView(threadId);
  }

  /** The workspace a thread or a comment belongs to (the route acts in it when the caller is a member there). */
  async workspaceOf(ref: { threadId?: string; commentId?: string }): Promise<string | null> {
    const id = ref.threadId ?? ref.commentId ?? '';
    if (!UUID.test(id)) return null;
    const row = (await this.db(ref.threadId ? 'comment_threads' : 'comments').where({ id }).first('workspace_id')) as { workspace_id: string } | undefined;
    return row?.workspace_id ?? null;
  }
}
