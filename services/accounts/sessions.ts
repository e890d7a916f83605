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

export async function createSession(db: Db, userId: string, ttlDays: number): Promise<IssuedSession> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlDays * 24 * 60 * 60 * 1000);
  await Session.query(db).insert({ id: sessionIdForToken(token), userId, expiresAt });
  return { token, expiresAt };
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
