/**
 * Resolved sessions kept in the API process, so an authenticated request does not spend a database round trip on
 * its session (issue 16: the session lookup was half the queries of a cheap read such as the credit summary).
 *
 * Exactness: every change that can alter what a token stands for notifies `rs_auth_changed` with the user's id on
 * commit (database triggers, db/migrations/20261124000600_auth_change_notify.ts), whichever process or code path made
 * it. Each cache LISTENs on its own connection and drops that user's entries on the note. The cache answers only
 * while that connection is up (otherwise every lookup goes to the database), entries live at most `ttlMs` and never
 * past the session's expiry, and a lookup whose database read overlapped any note is not stored (the read may have
 * seen the state from before the change).
 */
import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../config/logger';
import { findSession, onLocalSessionChange, sessionIdForToken, type SessionUser } from './sessions';

export const AUTH_CHANGED_CHANNEL = 'rs_auth_changed';

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
  const reconnectMs = options.reconnectMs ?? 1000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const byUser = new Map<string, Set<string>>();
  let generation = 0;
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retryAt = 0;
  let closed = false;
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

  const lost = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    client = null;
    dropAll();
    retryAt = now() + reconnectMs;
    options.logger.warn({ err }, 'session cache LISTEN connection lost; sessions are read from the database until it is back');
    void c.end().catch(() => undefined);
  };

  const connect = (): Promise<void> => {
    if (client || closed) return Promise.resolve();
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: options.databaseUrl, application_name: 'render-studio session cache', keepAlive: true });
      c.on('error', (err) => lost(c, err));
      c.on('end', () => lost(c));
      c.on('notification', (msg) => {
        if (msg.channel === AUTH_CHANGED_CHANNEL && msg.payload) dropUser(msg.payload);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${AUTH_CHANGED_CHANNEL}`);
        if (closed) {
          await c.end().catch(() => undefined);
          return;
        }
        // anything cached before (nothing, or entries from a broken connection's time) is dropped with this bump
        dropAll();
        client = c;
      } catch (err) {
        retryAt = now() + reconnectMs;
        options.logger.warn({ err }, 'session cache could not LISTEN; sessions are read from the database');
        await c.end().catch(() => undefined);
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  return {
    async lookup(db, token) {
      if (!client && !connecting && !closed && now() >= retryAt) void connect();
      const listening = client !== null;
      const sessionId = sessionIdForToken(token);
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
      // stored only when no note arrived while the row was read and the connection was up the whole time
      if (listening && client !== null && generation === before) {
        if (entries.size >= maxEntries) forget(entries.keys().next().value as string);
        entries.set(sessionId, { user, userId: user.id, validUntil: Math.min(expiresAt.getTime(), now() + ttlMs) });
        let set = byUser.get(user.id);
        if (!set) byUser.set(user.id, (set = new Set()));
        set.add(sessionId);
      }
      return user;
    },
    stats: () => ({ hits, misses, listening: client !== null, entries: entries.size }),
    invalidateUser: dropUser,
    async ready() {
      await connect();
      if (!client) throw new Error('session cache is not listening');
    },
    async close() {
      closed = true;
      stopLocal();
      const c = client;
      client = null;
      dropAll();
      if (connecting) await connecting;
      if (c) {
        c.removeAllListeners('end');
        c.removeAllListeners('error');
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
