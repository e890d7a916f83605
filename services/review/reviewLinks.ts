/**
 * Review links, the members' side (issue 43 item 1): make a link for chosen items (pending or approved images, clips
 * and videos of the workspace) or a whole project's queue, list the workspace's links with their state and last
 * visits, extend, revoke, and e-mail a link to addresses.
 *
 * The token is 32 random bytes (base64url) shown once, to the member who made the link: only its sha256 is stored,
 * so a copy of the database opens no link. E-mailing it later needs the token again (the page that made it keeps it
 * for the browser's session); the server never has it after the answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import {
  REVIEW_LINK_CODES,
  REVIEW_LINK_DEFAULT_DAYS,
  REVIEW_LINK_MAX_ITEMS,
  REVIEW_LINK_MSG,
  REVIEW_LINK_VISITS_LISTED,
  expiryDaysProblem,
  reviewLinkPath,
  reviewLinkState,
  SHAREABLE_APPROVED_LISTED,
  type ReviewLinkView,
  type ShareableItemView,
} from '../../domain/reviewLinks';
import { hashPassword } from '../accounts/passwords';
import { sendMail, type MailConfig } from '../platform/mailer';
import type { Logger } from '../../config/logger';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY_MS = 24 * 60 * 60 * 1000;

export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** A new link token: 32 random bytes, base64url. */
export function newReviewLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface NewReviewLink {
  title: string;
  message?: string;
  /** the pending items (approval ids) or saved items (their ids) to share */
  itemIds?: string[];
  /** share this project's whole queue (its items waiting for approval now) */
  projectId?: string | null;
  expiresInDays?: number;
  password?: string | null;
  canDecide?: boolean;
  canDownload?: boolean;
}

interface LinkRow {
  id: string;
  workspace_id: string;
  created_by: string | null;
  project_id: string | null;
  title: string;
  message: string;
  password_hash: string | null;
  can_decide: boolean;
  can_download: boolean;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

const notFound = () => new DomainError(404, REVIEW_LINK_CODES.notFound, 'Review link not found');

export class ReviewLinkService {
  constructor(private readonly deps: { knex: Knex; publicUrl: string; mail: MailConfig; logger: Pick<Logger, 'warn' | 'info'> }) {}

  /** The full address of a link's page. */
  url(token: string): string {
    return `${this.deps.publicUrl.replace(/\/+$/, '')}${reviewLinkPath(token)}`;
  }

  async create(actor: { workspaceId: string; userId: string }, input: NewReviewLink): Promise<{ link: ReviewLinkView; token: string; url: string }> {
    const { knex } = this.deps;
    const days = input.expiresInDays ?? REVIEW_LINK_DEFAULT_DAYS;
    const expiryProblem = expiryDaysProblem(days);
    if (expiryProblem) throw new DomainError(400, REVIEW_LINK_CODES.expiryInvalid, expiryProblem);
    const approvalIds = await this.chosenItems(actor.workspaceId, input);
    const token = newReviewLinkToken();
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const id = await knex.transaction(async (trx) => {
      const [row] = (await trx('review_links')
        .insert({
          workspace_id: actor.workspaceId,
          created_by: actor.userId,
          project_id: input.projectId ?? null,
          token_hash: tokenHash(token),
          title: input.title.trim(),
          message: (input.message ?? '').trim(),
          password_hash: passwordHash,
          can_decide: input.canDecide === true,
          can_download: input.canDownload === true,
          expires_at: new Date(Date.now() + days * DAY_MS),
        })
        .returning('id')) as Array<{ id: string }>;
      await trx('review_link_items').insert(approvalIds.map((approvalId, position) => ({ review_link_id: row.id, approval_id: approvalId, position })));
      return row.id;
    });
    return { link: await this.get(actor.workspaceId, id), token, url: this.url(token) };
  }

  /**
   * The pending items the link will hold, in the order chosen: each id names an item of the workspace waiting for
   * approval or approved (its approval id, or the saved item's id), or the project's queue. Anything else refuses
   * the whole request (400), so no half-made link is left.
   */
  private async chosenItems(workspaceId: string, input: NewReviewLink): Promise<string[]> {
    const { knex } = this.deps;
    if (input.projectId) {
      if (!UUID.test(input.projectId)) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
      const project = await knex('projects').where({ id: input.projectId, workspace_id: workspaceId }).first('id');
      if (!project) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
      const queue = (await knex('pending_approvals')
        .where({ project_id: input.projectId, workspace_id: workspaceId, status: 'pending' })
        .where('approval_deadline', '>', knex.fn.now())
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .limit(REVIEW_LINK_MAX_ITEMS)
        .pluck('id')) as string[];
      if (queue.length === 0) throw new DomainError(400, REVIEW_LINK_CODES.itemsInvalid, REVIEW_LINK_MSG.projectQueueEmpty);
      return queue;
    }
    const ids = [...new Set(input.itemIds ?? [])];
    if (ids.length === 0) throw new DomainError(400, 'VALIDATION_ERROR', REVIEW_LINK_MSG.itemsRequired);
    if (ids.length > REVIEW_LINK_MAX_ITEMS) throw new DomainError(400, 'VALIDATION_ERROR', REVIEW_LINK_MSG.itemsTooMany);
    if (!ids.every((id) => UUID.test(id))) throw new DomainError(400, REVIEW_LINK_CODES.itemsInvalid, REVIEW_LINK_MSG.itemsInvalid);
    const rows = (await knex('pending_approvals')
      .where({ workspace_id: workspaceId })
      .whereIn('status', ['pending', 'approved'])
      .where((q) => q.whereIn('id', ids).orWhereIn('content_id', ids))
      .select('id', 'content_id', 'status', 'approval_deadline')) as Array<{ id: string; content_id: string | null; status: string; approval_deadline: Date }>;
    const live = rows.filter((r) => r.status === 'approved' || new Date(r.approval_deadline).getTime() > Date.now());
    const found = ids.map((id) => live.find((r) => r.id === id || r.content_id === id)?.id);
    if (found.some((id) => !id)) throw new DomainError(400, REVIEW_LINK_CODES.itemsInvalid, REVIEW_LINK_MSG.itemsInvalid);
    return [...new Set(found as string[])];
  }

  /** What a link may hold: the workspace's items waiting for approval, and its newest approved ones. */
  async shareable(workspaceId: string): Promise<ShareableItemView[]> {
    const { knex } = this.deps;
    const base = () =>
      knex('pending_approvals as a')
        .leftJoin('projects as p', 'p.id', 'a.project_id')
        .where('a.workspace_id', workspaceId)
        .select('a.id', 'a.file_name', 'a.content_type', 'a.status', 'a.project_id', 'a.created_at', 'p.name as project_name')
        .orderBy([
          { column: 'a.created_at', order: 'desc' },
          { column: 'a.id', order: 'desc' },
        ]);
    type Row = { id: string; file_name: string; content_type: ShareableItemView['kind']; status: ShareableItemView['status']; project_id: string; created_at: Date; project_name: string | null };
    const pending = (await base().where('a.status', 'pending').where('a.approval_deadline', '>', knex.fn.now()).limit(REVIEW_LINK_MAX_ITEMS)) as Row[];
    const approved = (await base().where('a.status', 'approved').limit(SHAREABLE_APPROVED_LISTED)) as Row[];
    return [...pending, ...approved].map((r) => ({
      id: r.id,
      name: r.file_name,
      kind: r.content_type,
      status: r.status,
      projectId: r.project_id,
      projectName: r.project_name,
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }

  private async row(workspaceId: string, linkId: string): Promise<LinkRow> {
    if (!UUID.test(linkId)) throw notFound();
    const row = (await this.deps.knex('review_links').where({ id: linkId, workspace_id: workspaceId }).first()) as LinkRow | undefined;
    if (!row) throw notFound();
    return row;
  }

  async get(workspaceId: string, linkId: string): Promise<ReviewLinkView> {
    const [view] = await this.views([await this.row(workspaceId, linkId)]);
    return view;
  }

  /** The workspace's links, newest first. */
  async list(workspaceId: string): Promise<ReviewLinkView[]> {
    const rows = (await this.deps.knex('review_links')
      .where({ workspace_id: workspaceId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(200)) as LinkRow[];
    return this.views(rows);
  }

  private async views(rows: LinkRow[]): Promise<ReviewLinkView[]> {
    const { knex } = this.deps;
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const items = (await knex('review_link_items as i')
      .join('pending_approvals as a', 'a.id', 'i.approval_id')
      .whereIn('i.review_link_id', ids)
      .orderBy([{ column: 'i.review_link_id' }, { column: 'i.position' }])
      .select('i.review_link_id', 'a.id', 'a.file_name', 'a.content_type', 'a.status')) as Array<{ review_link_id: string; id: string; file_name: string; content_type: string; status: string }>;
    const visits = (await knex
      .select('*')
      .from(
        knex('review_link_sessions')
          .whereIn('review_link_id', ids)
          .select('review_link_id', 'guest_name', 'guest_email', 'created_at', 'last_seen_at', knex.raw('row_number() over (partition by review_link_id order by last_seen_at desc) as n'), knex.raw('count(*) over (partition by review_link_id) as total'))
          .as('v'),
      )
      .where('n', '<=', REVIEW_LINK_VISITS_LISTED)
      .orderBy('last_seen_at', 'desc')) as Array<{ review_link_id: string; guest_name: string | null; guest_email: string | null; last_seen_at: Date; total: string }>;
    const creators = [...new Set(rows.map((r) => r.created_by).filter((id): id is string => Boolean(id)))];
    const people = creators.length
      ? ((await knex('users as u').leftJoin('profiles as p', 'p.id', 'u.id').whereIn('u.id', creators).select('u.id', 'u.email', 'p.name')) as Array<{ id: string; email: string; name: string | null }>)
      : [];
    const nameOf = (id: string | null) => {
      const p = people.find((x) => x.id === id);
      return p ? p.name?.trim() || p.email : 'A former member';
    };
    return rows.map((r) => {
      const mine = visits.filter((v) => v.review_link_id === r.id);
      return {
        id: r.id,
        title: r.title,
        message: r.message,
        state: reviewLinkState({ expiresAt: r.expires_at, revokedAt: r.revoked_at }),
        expiresAt: new Date(r.expires_at).toISOString(),
        revokedAt: r.revoked_at ? new Date(r.revoked_at).toISOString() : null,
        createdAt: new Date(r.created_at).toISOString(),
        createdBy: { userId: r.created_by, name: nameOf(r.created_by) },
        hasPassword: r.password_hash !== null,
        canDecide: r.can_decide,
        canDownload: r.can_download,
        projectId: r.project_id,
        items: items.filter((i) => i.review_link_id === r.id).map((i) => ({ id: i.id, name: i.file_name, kind: i.content_type, status: i.status })),
        visits: mine.map((v) => ({ at: new Date(v.last_seen_at).toISOString(), guestName: v.guest_name, guestEmail: v.guest_email })),
        visitCount: mine.length ? Number(mine[0].total) : 0,
      };
    });
  }

  /** Moves the expiry to `days` from now (1 to 90); a revoked link stays revoked. */
  async extend(workspaceId: string, linkId: string, days: number): Promise<ReviewLinkView> {
    const problem = expiryDaysProblem(days);
    if (problem) throw new DomainError(400, REVIEW_LINK_CODES.expiryInvalid, problem);
    const row = await this.row(workspaceId, linkId);
    if (row.revoked_at) throw new DomainError(409, REVIEW_LINK_CODES.gone, REVIEW_LINK_MSG.alreadyRevoked);
    await this.deps.knex('review_links').where({ id: row.id }).update({ expires_at: new Date(Date.now() + days * DAY_MS), updated_at: this.deps.knex.fn.now() });
    return this.get(workspaceId, linkId);
  }

  /** Turns the link off at once: its page answers 410 and every guest session of it ends. */
  async revoke(workspaceId: string, linkId: string, userId: string): Promise<ReviewLinkView> {
    const row = await this.row(workspaceId, linkId);
    if (!row.revoked_at) {
      await this.deps.knex.transaction(async (trx) => {
        await trx('review_links').where({ id: row.id }).update({ revoked_at: trx.fn.now(), revoked_by: userId, updated_at: trx.fn.now() });
        await trx('review_link_sessions').where({ review_link_id: row.id }).update({ expires_at: trx.fn.now() });
      });
    }
    return this.get(workspaceId, linkId);
  }

  /**
   * E-mails the link to the addresses (SMTP_URL). The token is the member's copy from when the link was made: it must
   * be this link's. Answers whether the server accepted the message.
   */
  async email(workspaceId: string, linkId: string, input: { token: string; to: string[]; senderName: string }): Promise<{ sent: boolean }> {
    const row = await this.row(workspaceId, linkId);
    if (tokenHash(input.token) !== (await this.deps.knex('review_links').where({ id: row.id }).first('token_hash')).token_hash) throw notFound();
    if (reviewLinkState({ expiresAt: row.expires_at, revokedAt: row.revoked_at }) !== 'active') throw new DomainError(410, REVIEW_LINK_CODES.gone, row.revoked_at ? REVIEW_LINK_MSG.revoked : REVIEW_LINK_MSG.expired);
    if (!this.deps.mail.smtpUrl) throw new DomainError(503, 'MAIL_UNAVAILABLE', REVIEW_LINK_MSG.mailUnavailable);
    const workspace = (await this.deps.knex('workspaces').where({ id: workspaceId }).first('name')) as { name: string };
    const sent = await sendMail(this.deps.mail, { to: input.to, ...reviewLinkMessage({ studio: workspace.name, sender: input.senderName, title: row.title, message: row.message, url: this.url(input.token), expiresAt: row.expires_at, hasPassword: row.password_hash !== null }) }, this.deps.logger, 'review link');
    return { sent };
  }

  /** The workspace a link belongs to (the route acts in it when the caller is a member there). */
  async workspaceOf(linkId: string): Promise<string | null> {
    if (!UUID.test(linkId)) return null;
    const row = (await this.deps.knex('review_links').where({ id: linkId }).first('workspace_id')) as { workspace_id: string } | undefined;
    return row?.workspace_id ?? null;
  }
}

/** Subject and plain text of the e-mail that carries a link (the link stays copyable in every client). */
export function reviewLinkMessage(m: { studio: string; sender: string; title: string; message: string; url: string; expiresAt: Date | string; hasPassword: boolean }): { subject: string; text: string } {
  const subject = `${m.studio} shared "${m.title}" for your review`;
  const text = [
    `${m.sender || m.studio} of ${m.studio} asks for your review of "${m.title}".`,
    ...(m.message ? ['', m.message] : []),
    '',
    'Open this link to see the previews, comment, and give your decision (no account needed):',
    m.url,
    '',
    ...(m.hasPassword ? ['The studio will give you the password separately.', ''] : []),
    `The link works until ${new Date(m.expiresAt).toUTCString()}. Please do not forward it: anyone with the link can see the previews.`,
  ].join('\n');
  return { subject, text };
}
