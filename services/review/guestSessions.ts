/**
 * Guest sessions of review links (issue 43 items 2 and 4). Opening a link (its token, and its password when it has
 * one) starts a session valid for that link only: a row in review_link_sessions (a visit the members see) and a
 * cookie holding the session's id signed with HMAC-SHA256 over the link's id, scoped by the route to that link's path.
 * Every guest request finds the session, checks it belongs to the link it names, and that the link is still active:
 * a revoked or expired link answers 410, whatever session was opened before.
 *
 * Limits (rate-limiter-flexible's counters in auth_rate_limits): look-ups per address (right or wrong tokens, so
 * tokens cannot be guessed), guest requests per link, and wrong passwords per link and address: the 10th locks that
 * link for that address for an hour.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import { DomainError } from '../../domain/errors';
import { waitText } from '../../domain/plural';
import {
  GUEST_SESSION_HOURS,
  REVIEW_LINK_ACTIONS_PER_MINUTE,
  REVIEW_LINK_CODES,
  REVIEW_LINK_LOCK_SECONDS,
  REVIEW_LINK_LOOKUPS_PER_MINUTE,
  REVIEW_LINK_MSG,
  REVIEW_LINK_PASSWORD_ATTEMPTS,
  REVIEW_LINK_TOKEN_PATTERN,
  reviewLinkState,
} from '../../domain/reviewLinks';
import { verifyPassword } from '../accounts/passwords';
import { ATTEMPT_COUNTERS_TABLE, createAttemptLimiter } from '../accounts/attemptCounters';
import { tokenHash } from './reviewLinks';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A link as guest requests use it. */
export interface GuestLink {
  id: string;
  workspaceId: string;
  createdBy: string | null;
  title: string;
  message: string;
  canDecide: boolean;
  canDownload: boolean;
  expiresAt: Date;
}

export interface GuestSession {
  id: string;
  link: GuestLink;
}

interface LinkRow {
  id: string;
  workspace_id: string;
  created_by: string | null;
  title: string;
  message: string;
  password_hash: string | null;
  can_decide: boolean;
  can_download: boolean;
  expires_at: Date;
  revoked_at: Date | null;
}

const linkOf = (r: LinkRow): GuestLink => ({
  id: r.id,
  workspaceId: r.workspace_id,
  createdBy: r.created_by,
  title: r.title,
  message: r.message,
  canDecide: r.can_decide,
  canDownload: r.can_download,
  expiresAt: new Date(r.expires_at),
});

export const linkNotFound = () => new DomainError(404, REVIEW_LINK_CODES.notFound, REVIEW_LINK_MSG.notFound);
const gone = (row: Pick<LinkRow, 'revoked_at'>) => new DomainError(410, REVIEW_LINK_CODES.gone, row.revoked_at ? REVIEW_LINK_MSG.revoked : REVIEW_LINK_MSG.expired);
const sessionMissing = () => new DomainError(401, REVIEW_LINK_CODES.sessionMissing, REVIEW_LINK_MSG.sessionMissing);

/** The cookie a link's session is kept in (one per link: sessions of two links never mix). */
export const guestCookieName = (linkId: string) => `rs_review_${linkId.replace(/-/g, '')}`;

export interface GuestLimits {
  lookupsPerMinute: number;
  actionsPerMinute: number;
  passwordAttempts: number;
  lockSeconds: number;
}

export const DEFAULT_GUEST_LIMITS: GuestLimits = {
  lookupsPerMinute: REVIEW_LINK_LOOKUPS_PER_MINUTE,
  actionsPerMinute: REVIEW_LINK_ACTIONS_PER_MINUTE,
  passwordAttempts: REVIEW_LINK_PASSWORD_ATTEMPTS,
  lockSeconds: REVIEW_LINK_LOCK_SECONDS,
};

function rateLimited(res: RateLimiterRes, message: (wait: string) => string, code: string): DomainError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new DomainError(429, code, message(waitText(seconds)));
}

export class GuestSessionService {
  private limiters: Promise<{ lookups: RateLimiterPostgres; actions: RateLimiterPostgres; passwords: RateLimiterPostgres }> | null = null;

  constructor(
    private readonly deps: { knex: Knex; signingSecret: string; limits?: GuestLimits },
  ) {}

  private get limits(): GuestLimits {
    return this.deps.limits ?? DEFAULT_GUEST_LIMITS;
  }

  private counters() {
    this.limiters ??= (async () => {
      const l = this.limits;
      const [lookups, actions, passwords] = await Promise.all([
        createAttemptLimiter(this.deps.knex, ATTEMPT_COUNTERS_TABLE, 'review-lookup', { points: l.lookupsPerMinute, durationSeconds: 60, blockSeconds: 60 }),
        createAttemptLimiter(this.deps.knex, ATTEMPT_COUNTERS_TABLE, 'review-actions', { points: l.actionsPerMinute, durationSeconds: 60, blockSeconds: 60 }),
        createAttemptLimiter(this.deps.knex, ATTEMPT_COUNTERS_TABLE, 'review-password', { points: l.passwordAttempts, durationSeconds: l.lockSeconds, blockSeconds: l.lockSeconds }),
      ]);
      return { lookups, actions, passwords };
    })();
    return this.limiters;
  }

  /** One look-up of a link by `address` (a page load, a session opened): refused past the per-address limit. */
  async countLookup(address: string): Promise<void> {
    const { lookups } = await this.counters();
    try {
      await lookups.consume(address);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw rateLimited(res, REVIEW_LINK_MSG.rateLimited, REVIEW_LINK_CODES.rateLimited);
      throw res;
    }
  }

  /** One guest request on the link: refused past the per-link limit (every guest of the link together). */
  async countAction(linkId: string): Promise<void> {
    const { actions } = await this.counters();
    try {
      await actions.consume(linkId);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw rateLimited(res, REVIEW_LINK_MSG.rateLimited, REVIEW_LINK_CODES.rateLimited);
      throw res;
    }
  }

  /** The link a token opens, in any state; null when none. */
  private async byToken(token: string): Promise<LinkRow | null> {
    if (!REVIEW_LINK_TOKEN_PATTERN.test(token)) return null;
    return ((await this.deps.knex('review_links').where({ token_hash: tokenHash(token) }).first()) as LinkRow | undefined) ?? null;
  }

  /** What a page load of /r/<token> finds: the link's state (counted as a look-up of the address). */
  async pageState(token: string, address: string): Promise<'active' | 'gone' | 'missing'> {
    await this.countLookup(address);
    const row = await this.byToken(token);
    if (!row) return 'missing';
    return reviewLinkState({ expiresAt: row.expires_at, revokedAt: row.revoked_at }) === 'active' ? 'active' : 'gone';
  }

  /**
   * Opens a session on the link the token names: 404 for no link, 410 once revoked or expired, 401 with
   * REVIEW_LINK_PASSWORD_REQUIRED / _WRONG for a protected link, 429 when the address is locked out of it.
   */
  async open(token: string, password: string | null, address: string): Promise<{ session: GuestSession; cookie: string; expiresAt: Date; hasPassword: boolean }> {
    await this.countLookup(address);
    const row = await this.byToken(token);
    if (!row) throw linkNotFound();
    if (reviewLinkState({ expiresAt: row.expires_at, revokedAt: row.revoked_at }) !== 'active') throw gone(row);
    if (row.password_hash) await this.checkPassword(row, password, address);
    const expiresAt = new Date(Math.min(Date.now() + GUEST_SESSION_HOURS * 3600_000, new Date(row.expires_at).getTime()));
    const [session] = (await this.deps.knex('review_link_sessions').insert({ review_link_id: row.id, expires_at: expiresAt }).returning('id')) as Array<{ id: string }>;
    return { session: { id: session.id, link: linkOf(row) }, cookie: this.sign(row.id, session.id), expiresAt, hasPassword: row.password_hash !== null };
  }

  private async checkPassword(row: LinkRow, password: string | null, address: string): Promise<void> {
    const { passwords } = await this.counters();
    const key = `${row.id}:${address}`;
    const state = await passwords.get(key);
    if (state && state.consumedPoints >= this.limits.passwordAttempts) {
      throw rateLimited(state, REVIEW_LINK_MSG.locked, REVIEW_LINK_CODES.locked);
    }
    if (!password) throw new DomainError(401, REVIEW_LINK_CODES.passwordRequired, REVIEW_LINK_MSG.passwordRequired);
    if (await verifyPassword(password, row.password_hash as string)) {
      await passwords.delete(key);
      return;
    }
    try {
      await passwords.consume(key);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw rateLimited(res, REVIEW_LINK_MSG.locked, REVIEW_LINK_CODES.locked);
      throw res;
    }
    const after = await passwords.get(key);
    if (after && after.consumedPoints >= this.limits.passwordAttempts) {
      // the last wrong password of the allowance: that link is locked for this address for the lock's whole length
      const blocked = await passwords.block(key, this.limits.lockSeconds);
      throw rateLimited(blocked, REVIEW_LINK_MSG.locked, REVIEW_LINK_CODES.locked);
    }
    throw new DomainError(401, REVIEW_LINK_CODES.passwordWrong, REVIEW_LINK_MSG.passwordWrong);
  }

  private mac(linkId: string, sessionId: string): string {
    return createHmac('sha256', this.deps.signingSecret).update(`review-session:${linkId}:${sessionId}`).digest('base64url');
  }

  private sign(linkId: string, sessionId: string): string {
    return `${sessionId}.${this.mac(linkId, sessionId)}`;
  }

  /**
   * The session a guest request carries for the link it names (the cookie of that link only). 401 without a valid one
   * (or one of another link), 410 once the link is revoked or expired, 404 for a link id that names none.
   */
  async resume(linkId: string, cookie: string | undefined): Promise<GuestSession> {
    if (!UUID.test(linkId)) throw linkNotFound();
    const row = (await this.deps.knex('review_links').where({ id: linkId }).first()) as LinkRow | undefined;
    if (!row) throw linkNotFound();
    if (reviewLinkState({ expiresAt: row.expires_at, revokedAt: row.revoked_at }) !== 'active') throw gone(row);
    const [sessionId, mac] = (cookie ?? '').split('.');
    if (!sessionId || !mac || !UUID.test(sessionId)) throw sessionMissing();
    const expected = Buffer.from(this.mac(linkId, sessionId));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw sessionMissing();
    const session = (await this.deps.knex('review_link_sessions').where({ id: sessionId, review_link_id: linkId }).where('expires_at', '>', this.deps.knex.fn.now()).first('id')) as
      | { id: string }
      | undefined;
    if (!session) throw sessionMissing();
    await this.countAction(linkId);
    return { id: session.id, link: linkOf(row) };
  }

  /** Who the guest said they are (the visit the members see), and that they were here now. */
  async noteGuest(session: GuestSession, guest: { name: string; email: string } | null): Promise<void> {
    await this.deps.knex('review_link_sessions')
      .where({ id: session.id })
      .update({ last_seen_at: this.deps.knex.fn.now(), ...(guest ? { guest_name: guest.name, guest_email: guest.email } : {}) });
  }
}
