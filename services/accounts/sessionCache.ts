/**
 * Resolved sessions kept in the API process, so an authenticated request does not spend a database round trip on
 * its session (issue 16: the session lookup was half the queries of a cheap read such as the credit summary).
 *
 * Exactness: every change that can alter what a token stands for notifies `rs_auth_changed` with the user's id on
 * commit (database triggers, db/migrations/20261124000600_auth_change_notify.ts), whichever process or code path made
 * it. Each cache LISTENs on its own connection and drops that user's entries on the note. The cache answers only
 * while that connection is up (otherwise every lookup goes to the database), entries live at most `ttlMs` and never
 * past the session's expiry, and a lookup whose database read overlapped any note is not stored (the read may have
 * seen the state from before the change). A note alone would leave a window across processes (a sign-out through
 * another API is acknowledged before this process has read its note), so an entry is trusted only after the barrier
 * of services/platform/notedCache.ts: a `select 1` on the LISTEN connection sent after the lookup began has come
 * back, and with it every note of a change committed before (one barrier serves every lookup waiting meanwhile).
 */
import type pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { createListenBarrier } from '../platform/listenBarrier';
import { createListenConnection } from '../platform/listenConnection';
import { AUTH_CHANGED_CHANNEL } from '../platform/notifyChannels';
import { findSession, onLocalSessionChange, sessionIdForToken, type SessionUser } from './sessions';

export interface SessionCacheOptions {
  databaseUrl: string;
  logger: Pick<Logger, 'warn' | 'debug'>;
  /** longest an entry is trusted (default 60 s) */
  ttlMs?: number;
  /** entries kept; the oldest go first (default 10000) */
  maxEntries?: number;
  /** wait before reconnecting a lost LISTEN connection (default 1 s) */
  reconnectMs?: number;
  now?: () => number;
}

interface Entry {
  user: SessionUser;
  userId: string;
  validUntil: number;
}

export interface SessionCacheStats {
  hits: number;
  misses: number;
  listening: boolean;
  entries: number;
}

export interface SessionCache {
  /** The session's user (cached or read), or null for an unknown, expired or malformed token. */
  lookup: (db: Knex, token: string) => Promise<SessionUser | null>;
  stats: () => SessionCacheStats;
  /** Drops the user's entries at once (the API calls it after each state-changing request of that user). */
  invalidateUser: (userId: string) => void;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export function createSessionCache(options: SessionCacheOptions): SessionCache {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const byUser = new Map<string, Set<string>>();
  let generation = 0;
  let hits = 0;
  let misses = 0;

  const forget = (sessionId: string) => {
    const e = entries.get(sessionId);
    if (!e) return;
    entries.delete(sessionId);
    const set = byUser.get(e.userId);
    set?.delete(sessionId);
    if (set?.size === 0) byUser.delete(e.userId);
  };

  const dropUser = (userId: string) => {
    generation += 1;
    for (const sessionId of [...(byUser.get(userId) ?? [])]) forget(sessionId);
  };

  const dropSession = (sessionId: string) => {
    generation += 1;
    forget(sessionId);
  };

  const dropAll = () => {
    generation += 1;
    entries.clear();
    byUser.clear();
  };

  const stopLocal = onLocalSessionChange((change) => ('sessionId' in change ? dropSession(change.sessionId) : dropUser(change.userId)));

  const listen = createListenConnection({
    databaseUrl: options.databaseUrl,
    channel: AUTH_CHANGED_CHANNEL,
    name: 'session cache',
    readsMeanwhile: 'sessions',
    logger: options.logger,
    onNote: dropUser,
    onReset: dropAll,
    reconnectMs: options.reconnectMs,
    now,
  });

  // settles once every note committed before the call has been applied
  const barrier = createListenBarrier(listen, 'session cache');

  return {
    async lookup(db, token) {
      const c = listen.client();
      const sessionId = sessionIdForToken(token);
      let listening = c !== null;
      if (c && entries.has(sessionId)) {
        // an entry is answered only once every note committed before this lookup began has been applied
        listening = await barrier(c).then(
          () => listen.client() === c,
          () => false,
        );
      }
      if (listening) {
        const e = entries.get(sessionId);
        if (e && e.validUntil > now()) {
          hits += 1;
          return e.user;
        }
        if (e) forget(sessionId);
      }
      misses += 1;
      const before = generation;
      const found = await findSession(db, token);
      if (!found) return null;
      const { expiresAt, ...user } = found;
      // stored only when no note arrived while the row was read and the connection was up the whole time (a loss
      // or a reconnect bumps the generation too)
      if (listening && generation === before && listen.listening()) {
        if (entries.size >= maxEntries) forget(entries.keys().next().value as string);
        entries.set(sessionId, { user, userId: user.id, validUntil: Math.min(expiresAt.getTime(), now() + ttlMs) });
        let set = byUser.get(user.id);
        if (!set) byUser.set(user.id, (set = new Set()));
        set.add(sessionId);
      }
      return user;
    },
    stats: () => ({ hits, misses, listening: listen.listening(), entries: entries.size }),
    invalidateUser: dropUser,
    ready: listen.ready,
    async close() {
      stopLocal();
      await listen.close();
    },
  };
}
