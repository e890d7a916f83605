import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { Session } from '../../db/models/Session';
import type { UserRole } from '../../db/models/User';

type Db = Knex | Knex.Transaction;

/** Who a valid session belongs to, as the API's auth middleware exposes it. */
export interface SessionUser {
  id: string;
  email: string;
  role: UserRole;
  name: string;
  sessionId: string;
}

export interface IssuedSession {
  /** Handed to the client once (cookie and JSON); only its sha256 is stored. */
  token: string;
  expiresAt: Date;
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function sessionIdForToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** How a session began: `two_factor` is a password and a second factor, `passkey` a passkey alone, `single_sign_on` an OpenID provider. */
export type AuthenticatedWith = 'password' | 'sign_up' | 'password_reset' | 'two_factor' | 'passkey' | 'single_sign_on';

/** What the Security panel shows of the browser a session was opened from. */
export interface SessionDevice {
  userAgent?: string | null;
  ipAddress?: string | null;
  authenticatedWith?: AuthenticatedWith;
}

export async function createSession(db: Db, userId: string, ttlDays: number, device: SessionDevice = {}): Promise<IssuedSession> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlDays * 24 * 60 * 60 * 1000);
  await db('sessions').insert({
    id: sessionIdForToken(token),
    user_id: userId,
    expires_at: expiresAt,
    user_agent: device.userAgent?.slice(0, 512) || null,
    ip_address: device.ipAddress || null,
    authenticated_with: device.authenticatedWith ?? 'password',
  });
  return { token, expiresAt };
}

export interface SessionRow {
  handle: string;
  userAgent: string | null;
  ipAddress: string | null;
  authenticatedWith: AuthenticatedWith;
  createdAt: Date;
  lastSeenAt: Date;
  current: boolean;
}

/** The user's unexpired sessions, the one in use first, then the most recently seen. */
export async function listSessions(db: Db, userId: string, currentSessionId: string | null): Promise<SessionRow[]> {
  const rows = (await db('sessions')
    .where('user_id', userId)
    .andWhere('expires_at', '>', db.fn.now())
    .orderBy('last_seen_at', 'desc')
    .select('id', 'handle', 'user_agent', 'ip_address', 'authenticated_with', 'created_at', 'last_seen_at')) as Array<{
    id: string;
    handle: string;
    user_agent: string | null;
    ip_address: string | null;
    authenticated_with: AuthenticatedWith;
    created_at: Date;
    last_seen_at: Date;
  }>;
  const list = rows.map((r) => ({
    handle: r.handle,
    userAgent: r.user_agent,
    ipAddress: r.ip_address,
    authenticatedWith: r.authenticated_with,
    createdAt: new Date(r.created_at),
    lastSeenAt: new Date(r.last_seen_at),
    current: r.id === currentSessionId,
  }));
  return [...list.filter((r) => r.current), ...list.filter((r) => !r.current)];
}

/** The session id of the user's session with this public handle, or null. */
export async function sessionIdForHandle(db: Db, userId: string, handle: string): Promise<string | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(handle)) return null;
  const row = (await db('sessions').where({ user_id: userId, handle }).first('id')) as { id: string } | undefined;
  return row?.id ?? null;
}

/** Ends one session by its id (the row's delete notifies rs_auth_changed: its event streams close at once). */
export async function endSessionById(db: Db, sessionId: string): Promise<boolean> {
  tellLocal({ sessionId });
  const ended = await Session.query(db).deleteById(sessionId);
  tellLocal({ sessionId });
  return ended > 0;
}

/** Ends every session of the user (a password reset). */
export async function endAllSessions(db: Db, userId: string): Promise<number> {
  tellLocal({ userId });
  const ended = await Session.query(db).where('user_id', userId).delete();
  tellLocal({ userId });
  return ended;
}

/** Ends the user's sessions that were not opened through single sign-on (a workspace began requiring it). */
export async function endSessionsWithoutSingleSignOn(db: Db, userId: string): Promise<number> {
  tellLocal({ userId });
  const ended = await Session.query(db).where('user_id', userId).whereNot('authenticated_with', 'single_sign_on').delete();
  tellLocal({ userId });
  return ended;
}

/** Writes the session's last_seen_at when the last write is older than `everyMs` (this process remembers its writes). */
const lastTouched = new Map<string, number>();
export async function touchSession(db: Db, sessionId: string, everyMs: number, now: number = Date.now()): Promise<void> {
  const last = lastTouched.get(sessionId);
  if (last !== undefined && now - last < everyMs) return;
  if (lastTouched.size > 50_000) lastTouched.clear();
  lastTouched.set(sessionId, now);
  await db('sessions')
    .where('id', sessionId)
    .andWhere('last_seen_at', '<', new Date(now - everyMs))
    .update({ last_seen_at: new Date(now) });
}

/** The user of an unexpired session, or null (unknown, expired or malformed token). */
export async function findSessionUser(db: Db, token: string): Promise<SessionUser | null> {
  const found = await findSession(db, token);
  if (!found) return null;
  const { expiresAt: _expiresAt, ...user } = found;
  return user;
}

/** findSessionUser with the session's expiry (what a cache of resolved sessions needs). */
export async function findSession(db: Db, token: string): Promise<(SessionUser & { expiresAt: Date }) | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const row = await db('sessions')
    .join('users', 'users.id', 'sessions.user_id')
    .leftJoin('profiles', 'profiles.id', 'users.id')
    .where('sessions.id', sessionIdForToken(token))
    .andWhere('sessions.expires_at', '>', db.fn.now())
    .first<{ id: string; email: string; role: UserRole; name: string | null; session_id: string; expires_at: Date } | undefined>(
      'users.id',
      'users.email',
      'users.role',
      'profiles.name',
      'sessions.id as session_id',
      'sessions.expires_at',
    );
  if (!row) return null;
  return { id: row.id, email: row.email, role: row.role, name: row.name ?? '', sessionId: row.session_id, expiresAt: new Date(row.expires_at) };
}

/**
 * Session changes made by this process, told at once to this process's session caches (services/accounts/sessionCache.ts);
 * other processes learn of them from the database's rs_auth_changed note.
 */
export type LocalSessionChange = { sessionId: string } | { userId: string };
const localSessionListeners = new Set<(change: LocalSessionChange) => void>();

export function onLocalSessionChange(listener: (change: LocalSessionChange) => void): () => void {
  localSessionListeners.add(listener);
  return () => localSessionListeners.delete(listener);
}

function tellLocal(change: LocalSessionChange): void {
  for (const listener of localSessionListeners) listener(change);
}

export async function endSession(db: Db, token: string): Promise<void> {
  const sessionId = sessionIdForToken(token);
  tellLocal({ sessionId });
  await Session.query(db).deleteById(sessionId);
  tellLocal({ sessionId });
}

/** Ends every session of the user except `keepSessionId` (after a password change). */
export async function endOtherSessions(db: Db, userId: string, keepSessionId: string): Promise<number> {
  tellLocal({ userId });
  const ended = await Session.query(db).where('user_id', userId).whereNot('id', keepSessionId).delete();
  tellLocal({ userId });
  return ended;
}

export async function deleteExpiredSessions(db: Db, userId: string): Promise<void> {
  await Session.query(db).where('user_id', userId).where('expires_at', '<=', db.fn.now()).delete();
}
