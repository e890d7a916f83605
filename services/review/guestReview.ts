/**
 * What a guest of a review link sees and does (issue 43 items 2 and 3). Everything is scoped to the link: its
 * workspace, and the items on it (each followed to its newest version, made by a request for changes). An id of
 * anything else answers 404 REVIEW_ITEM_NOT_ON_LINK, exactly like an id that names nothing.
 *
 * Pay on approval: before an item is approved the guest gets its watermarked preview only; once approved, its
 * thumbnail, and the original only where the link allows downloads. Decisions go through the same approval workflow
 * Updates as the members' (services/generation/approvals.ts): a link counts as one approval under the item's policy
 * and the workspace is charged on the final approval, once. Where the workspace's rules refuse a request for changes
 * (a rejection needs a past purchase, the streak cooldown, credits ...), nothing is rejected or charged: the request
 * is kept as the guest's comment, the members are told, and the guest is told the studio has been asked.
 */
import type { Knex } from 'knex';
import { COMMENT_ERROR_CODES, type CommentPin, type CommentThreadList, type CommentThreadView } from '../../domain/comments';
import { DomainError } from '../../domain/errors';
import { NOTIFICATION_TEXT } from '../../domain/notifications';
import {
  GUEST_DECISION_TEXT,
  GUEST_NAME_MAX,
  REVIEW_LINK_CODES,
  REVIEW_LINK_MSG,
  guestEmailProblem,
  guestLabel,
  type GuestDecisionOutcome,
  type GuestItemView,
  type GuestReviewView,
} from '../../domain/reviewLinks';
import { isBucket, type Storage } from '../../storage';
import type { ApprovalService } from '../generation/approvals';
import { workspaceApprovers } from '../workspaces/approvalPolicy';
import type { ChangeRequestService } from './changeRequests';
import { findCommentItem } from './commentItems';
import type { CommentActor, CommentService } from './comments';
import { recordGuestDecision } from './guestDecisions';
import type { GuestLink, GuestSession } from './guestSessions';
import { notify } from './notifications';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How many versions a request for changes may have made after an item on a link (followed to the newest). */
const MAX_VERSIONS = 20;

export interface GuestIdentity {
  name: string;
  email: string;
}

/** Refusals of a request for changes that are the guest's to fix or final (the rest are the studio's rules). */
const GUEST_FACING_CODES = new Set<string>([
  'VALIDATION_ERROR',
  COMMENT_ERROR_CODES.pinInvalid,
  COMMENT_ERROR_CODES.limit,
  'APPROVAL_NOT_PENDING',
  'APPROVAL_NOT_FOUND',
  'APPROVAL_ALREADY_APPROVED',
  'CHANGES_NOT_REQUESTABLE',
  'CHANGES_PROMPT_TOO_LONG',
  'CHANGES_SETTINGS_INVALID',
]);

const notOnLink = () => new DomainError(404, REVIEW_LINK_CODES.itemNotOnLink, REVIEW_LINK_MSG.itemNotOnLink);
const decideNotAllowed = () => new DomainError(403, REVIEW_LINK_CODES.notAllowed, REVIEW_LINK_MSG.decideNotAllowed);

/** The guest's name and e-mail as given once on the page: checked, trimmed, the e-mail lower-cased. */
export function checkedGuest(input: { name?: unknown; email?: unknown } | null | undefined): GuestIdentity {
  const name = typeof input?.name === 'string' ? input.name.trim() : '';
  if (!name) throw new DomainError(400, REVIEW_LINK_CODES.guestRequired, REVIEW_LINK_MSG.guestNameRequired);
  if ([...name].length > GUEST_NAME_MAX) throw new DomainError(400, 'VALIDATION_ERROR', REVIEW_LINK_MSG.guestNameTooLong);
  const problem = guestEmailProblem(input?.email);
  if (problem) throw new DomainError(400, REVIEW_LINK_CODES.guestRequired, problem);
  return { name, email: String(input?.email).trim().toLowerCase() };
}

interface ItemRow {
  id: string;
  content_type: 'image' | 'clip' | 'assembly';
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  file_name: string;
  version: number | null;
  aspect_ratio: string | null;
  approval_deadline: Date;
  original_bucket: string;
  original_path: string;
  watermarked_bucket: string;
  watermarked_path: string;
  thumbnail_path: string | null;
}

const KIND: Record<string, GuestItemView['kind']> = { image: 'image', clip: 'clip', assembly: 'video' };

export interface GuestReviewDeps {
  knex: Knex;
  storage: Storage;
  approvals: ApprovalService;
  changeRequests: ChangeRequestService;
  comments: CommentService;
}

export class GuestReviewService {
  constructor(private readonly deps: GuestReviewDeps) {}

  /**
   * The approval ids the link reaches, in its order: each item on it, followed through the versions requests for
   * changes made (previous_approval_id) to the newest, within the link's workspace.
   */
  async reachableItems(link: GuestLink): Promise<string[]> {
    const rows = (await this.deps.knex.raw(
      `with recursive chain as (
         select i.approval_id as root, i.approval_id as id, i.position, 0 as depth
           from review_link_items i where i.review_link_id = ?
         union all
         select c.root, p.id, c.position, c.depth + 1
           from chain c join pending_approvals p on p.previous_approval_id = c.id and p.workspace_id = ?
          where c.depth < ?
       )
       select distinct on (root) root, id, position from chain order by root, depth desc`,
      [link.id, link.workspaceId, MAX_VERSIONS],
    )) as { rows: Array<{ root: string; id: string; position: number }> };
    return rows.rows.sort((a, b) => a.position - b.position).map((r) => r.id);
  }

  private async reachable(link: GuestLink, approvalId: string): Promise<string> {
    if (!UUID.test(approvalId)) throw notOnLink();
    if (!(await this.reachableItems(link)).includes(approvalId)) throw notOnLink();
    return approvalId;
  }

  /** The page: the studio's name, the link's title and message, and its items as the guest may see them. */
  async view(link: GuestLink): Promise<GuestReviewView> {
    const ids = await this.reachableItems(link);
    const rows = ids.length ? ((await this.deps.knex('pending_approvals').whereIn('id', ids).where({ workspace_id: link.workspaceId }).select('*')) as ItemRow[]) : [];
    const studio = (await this.deps.knex('workspaces').where({ id: link.workspaceId }).first('name')) as { name: string } | undefined;
    return {
      link: { id: link.id, title: link.title, message: link.message, expiresAt: link.expiresAt.toISOString(), canDecide: link.canDecide, canDownload: link.canDownload },
      studio: { name: studio?.name ?? 'The studio' },
      items: ids.map((id) => rows.find((r) => r.id === id)).filter((r): r is ItemRow => Boolean(r)).map((r) => this.itemView(link, r)),
    };
  }

  private itemView(link: GuestLink, r: ItemRow): GuestItemView {
    const status = r.status === 'pending' && new Date(r.approval_deadline).getTime() <= Date.now() ? 'expired' : r.status;
    const sign = (bucket: string, path: string | null) => (path && isBucket(bucket) ? this.deps.storage.urls.sign(bucket, path) : null);
    const sameAsOriginal = r.watermarked_bucket === r.original_bucket && r.watermarked_path === r.original_path;
    let previewUrl: string | null = null;
    let downloadUrl: string | null = null;
    if (status === 'approved') {
      // paid for: the original where the link allows downloads, else its thumbnail
      const original = link.canDownload ? sign(r.original_bucket, r.original_path) : null;
      previewUrl = original && r.content_type === 'image' ? original : (sign(r.original_bucket, r.thumbnail_path) ?? original);
      downloadUrl = original ? this.deps.storage.urls.downloadLink(original, r.file_name) : null;
    } else if (!sameAsOriginal) {
      // never the original before approval: only the watermarked preview (the files route refuses the original too)
      previewUrl = sign(r.watermarked_bucket, r.watermarked_path);
    }
    return {
      id: r.id,
      kind: KIND[r.content_type] ?? 'image',
      name: r.file_name,
      status,
      version: r.version ?? 1,
      aspectRatio: r.aspect_ratio,
      previewUrl,
      downloadUrl,
      canDecide: link.canDecide && status === 'pending',
    };
  }

  /** The member the guest's actions are recorded for: the link's maker, else (they left) the workspace's first owner. */
  private async actorId(link: GuestLink): Promise<string> {
    if (link.createdBy) {
      const member = await this.deps.knex('workspace_members').where({ workspace_id: link.workspaceId, user_id: link.createdBy }).first('user_id');
      if (member) return link.createdBy;
    }
    const owner = (await this.deps.knex('workspace_members').where({ workspace_id: link.workspaceId, role: 'owner' }).orderBy('created_at').first('user_id')) as { user_id: string } | undefined;
    if (!owner) throw notOnLink();
    return owner.user_id;
  }

  private async actor(link: GuestLink, approvalId: string, guest: GuestIdentity): Promise<CommentActor> {
    return { workspaceId: link.workspaceId, userId: await this.actorId(link), role: 'viewer', guest: { reviewLinkId: link.id, approvalId, name: guest.name, email: guest.email } };
  }

  /** An item's threads as the guest sees them: members by name only, never an e-mail or an id. */
  async threads(link: GuestLink, approvalId: string): Promise<CommentThreadList> {
    await this.reachable(link, approvalId);
    const list = await this.deps.comments.list(link.workspaceId, approvalId);
    return { item: list.item, threads: list.threads.map(forGuests) };
  }

  async comment(session: GuestSession, approvalId: string, input: { body: string; pin?: CommentPin | null; guest: GuestIdentity }): Promise<CommentThreadView> {
    const link = session.link;
    await this.reachable(link, approvalId);
    const thread = await this.deps.comments.open(await this.actor(link, approvalId, input.guest), approvalId, { body: input.body, pin: input.pin ?? null });
    return forGuests(thread);
  }

  async reply(session: GuestSession, threadId: string, input: { body: string; guest: GuestIdentity }): Promise<CommentThreadView> {
    const link = session.link;
    if (!UUID.test(threadId)) throw notOnLink();
    const thread = (await this.deps.knex('comment_threads').where({ id: threadId, workspace_id: link.workspaceId }).first('item_kind', 'item_id')) as { item_kind: string; item_id: string } | undefined;
    if (!thread) throw notOnLink();
    // the thread must be on one of the link's items (pending, or saved by its approval)
    let onItem: string | null = null;
    for (const id of await this.reachableItems(link)) {
      const item = await findCommentItem(this.deps.knex, link.workspaceId, id);
      if (item && item.kind === thread.item_kind && item.id === thread.item_id) onItem = id;
    }
    if (!onItem) throw notOnLink();
    return forGuests(await this.deps.comments.reply(await this.actor(link, onItem, input.guest), threadId, { body: input.body }));
  }

  /** The guest approves: one approval under the item's policy (the workspace pays on the final one). */
  async approve(session: GuestSession, approvalId: string, guest: GuestIdentity): Promise<{ outcome: GuestDecisionOutcome; message: string }> {
    const link = session.link;
    // an item not on the link is not found, whatever the link allows
    await this.reachable(link, approvalId);
    if (!link.canDecide) throw decideNotAllowed();
    const answer = await this.deps.approvals.approve(link.workspaceId, approvalId, await this.actorId(link), { guest: { reviewLinkId: link.id, name: guest.name, email: guest.email } });
    const outcome: GuestDecisionOutcome = answer.contentId ? 'approved' : 'approval_counted';
    return { outcome, message: GUEST_DECISION_TEXT[outcome] };
  }

  /**
   * The guest requests changes: the members' "request changes" (rejection + next version) when the workspace's rules
   * allow it; otherwise the request is kept as the guest's comment and the studio's approvers are asked.
   */
  async requestChanges(session: GuestSession, approvalId: string, input: { request: string; pin?: CommentPin | null; guest: GuestIdentity }): Promise<{ outcome: GuestDecisionOutcome; message: string }> {
    const link = session.link;
    // an item not on the link is not found, whatever the link allows
    await this.reachable(link, approvalId);
    if (!link.canDecide) throw decideNotAllowed();
    const actor = await this.actor(link, approvalId, input.guest);
    const guest = { reviewLinkId: link.id, name: input.guest.name, email: input.guest.email };
    try {
      await this.deps.changeRequests.request(actor, approvalId, { request: input.request, pin: input.pin ?? null });
    } catch (err) {
      if (!(err instanceof DomainError) || GUEST_FACING_CODES.has(err.code) || err.status === 404) throw err;
      await this.askStudio(actor, approvalId, input, err.message);
      return { outcome: 'studio_asked', message: GUEST_DECISION_TEXT.studio_asked };
    }
    await this.deps.knex.transaction((trx) =>
      recordGuestDecision(trx, { workspaceId: link.workspaceId, approvalId, guest, decision: 'request_changes', outcome: 'changes_requested', request: input.request.trim() }),
    );
    return { outcome: 'changes_requested', message: GUEST_DECISION_TEXT.changes_requested };
  }

  /** The rules refused: the request stays as the guest's comment, the approvers are told, review.decided says so. */
  private async askStudio(actor: CommentActor, approvalId: string, input: { request: string; pin?: CommentPin | null; guest: GuestIdentity }, why: string): Promise<void> {
    const guest = actor.guest as NonNullable<CommentActor['guest']>;
    const { knex } = this.deps;
    const item = (await knex('pending_approvals').where({ id: approvalId }).first('file_name', 'project_id')) as { file_name: string; project_id: string };
    // kept in the item's thread (a full thread list or a bad pin does not lose the request: it is in the notification)
    await this.deps.comments.open(actor, approvalId, { body: input.request, pin: input.pin ?? null }).catch((err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
      return null;
    });
    const link = (await knex('review_links').where({ id: guest.reviewLinkId }).first('title')) as { title: string };
    await knex.transaction(async (trx) => {
      await notify(trx, {
        workspaceId: actor.workspaceId,
        recipients: [...(await workspaceApprovers(trx, actor.workspaceId))],
        kind: 'decision',
        item: { kind: 'approval', id: approvalId },
        projectId: item.project_id,
        by: null,
        text: NOTIFICATION_TEXT.guestAskedStudio(guestLabel(guest, link.title), item.file_name, why),
      });
      await recordGuestDecision(trx, {
        workspaceId: actor.workspaceId,
        approvalId,
        guest,
        decision: 'request_changes',
        outcome: 'studio_asked',
        request: input.request.trim(),
        refusal: why,
      });
    });
  }
}

/** A thread without what only members may know: members' e-mails (a name-less member shows as "Studio") and ids. */
function forGuests(thread: CommentThreadView): CommentThreadView {
  const person = (p: { userId: string | null; name: string } | null) => (p ? { userId: null, name: p.name.includes('@') ? 'Studio' : p.name } : null);
  return {
    ...thread,
    resolvedBy: person(thread.resolvedBy),
    comments: thread.comments.map((c) => ({ ...c, author: person(c.author), mentions: c.mentions.map((m) => ({ userId: '', name: m.name })) })),
  };
}
