/**
 * Each user's credit summary kept in the API process, so GET /api/credits/summary does not spend a pooled
 * database query per request (issue 16).
 *
 * Exactness: every change to a summary column (or the profile's removal) notifies `rs_credits_changed` with the
 * profile's id on commit (database triggers, db/migrations/20261125000300_credit_summary_notify.ts), whichever
 * process or code path made it. The cache LISTENs on its own connection and drops that user's entry on the note.
 *
 * A note alone would leave a window: a change committed in another process is acknowledged to its client before
 * this process has read the note. So before answering, a lookup waits for a *barrier*: a `select 1` on the LISTEN
 * connection that was sent after the lookup began. PostgreSQL signals every listener while the notifying transaction
 * commits (before that commit is acknowledged) and a listening session sends the notes it was signalled for before
 * the ReadyForQuery that ends its next command (postgres.c); node-postgres hands the notes to us in the order they
 * arrive, before the barrier's promise settles. Hence when the barrier resolves, every change committed before the
 * lookup began has dropped its entry, and what is left is current. One barrier serves every lookup that began
 * before it was sent, so under load it costs one tiny round trip per batch instead of one summary query per request.
 *
 * A read whose database round trip overlapped any note is not stored (it may predate the change). While the LISTEN
 * connection is down every lookup reads the database, and reconnecting starts from an empty cache.
 */
import pg from 'pg';
import type { Logger } from '../config/logger';
import { UUID_RE } from './creditLedger/ledger';
import { getCreditSummary, ProfileNotFoundError, type CreditSummary, type Db } from './credits';

export const CREDITS_CHANGED_CHANNEL = 'rs_credits_changed';

export interface CreditSummaryCacheOptions {
  databaseUrl: string;
  logger: Pick<Logger, 'warn' | 'debug'>;
  /** summaries kept; the oldest go first (default 10000) */
  maxEntries?: number;
  /** wait before reconnecting a lost LISTEN connection (default 1 s) */
  reconnectMs?: number;
}

export interface CreditSummaryCacheStats {
  hits: number;
  misses: number;
  listening: boolean;
  entries: number;
}

export interface CreditSummaryCache {
  /** The user's current summary (cached, or read and kept); ProfileNotFoundError like getCreditSummary. */
  get: (db: Db, profileId: string) => Promise<CreditSummary>;
  stats: () => CreditSummaryCacheStats;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export function createCreditSummaryCache(options: CreditSummaryCacheOptions): CreditSummaryCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const reconnectMs = options.reconnectMs ?? 1000;
  const entries = new Map<string, CreditSummary>();
  let generation = 0;
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retryAt = 0;
  let closed = false;
  let hits = 0;
  let misses = 0;
  // the barrier query in flight, and the one that is sent when it is done (for lookups that began after it was sent)
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;

  const drop = (profileId: string) => {
    generation += 1;
    if (profileId === '*') entries.clear();
    else entries.delete(profileId.toLowerCase());
  };

  const dropAll = () => {
    generation += 1;
    entries.clear();
  };

  const lost = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    client = null;
    dropAll();
    retryAt = Date.now() + reconnectMs;
    options.logger.warn({ err }, 'credit summary cache LISTEN connection lost; summaries are read from the database until it is back');
    void c.end().catch(() => undefined);
  };

  const connect = (): Promise<void> => {
    if (client || closed) return Promise.resolve();
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: options.databaseUrl, application_name: 'render-studio credit summary cache', keepAlive: true });
      c.on('error', (err) => lost(c, err));
      c.on('end', () => lost(c));
      c.on('notification', (msg) => {
        if (msg.channel === CREDITS_CHANGED_CHANNEL && msg.payload) drop(msg.payload);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${CREDITS_CHANGED_CHANNEL}`);
        if (closed) {
          await c.end().catch(() => undefined);
          return;
        }
        dropAll();
        client = c;
      } catch (err) {
        retryAt = Date.now() + reconnectMs;
        options.logger.warn({ err }, 'credit summary cache could not LISTEN; summaries are read from the database');
        await c.end().catch(() => undefined);
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  const sendBarrier = (c: pg.Client): Promise<void> => {
    const p: Promise<void> = c.query('select 1').then(
      () => undefined,
      (err: unknown) => {
        lost(c, err);
        throw err;
      },
    );
    running = p;
    const clear = () => {
      if (running === p) running = null;
    };
    p.then(clear, clear);
    return p;
  };

  /** Settles after every note of a change committed before this call has been applied. */
  const barrier = (c: pg.Client): Promise<void> => {
    if (!running) return sendBarrier(c);
    const previous = running;
    queued ??= previous
      .catch(() => undefined)
      .then(() => {
        queued = null;
        if (client !== c) throw new Error('credit summary cache LISTEN connection lost');
        return running ?? sendBarrier(c);
      });
    return queued;
  };

  const read = (db: Db, profileId: string) => {
    misses += 1;
    return getCreditSummary(db, profileId);
  };

  return {
    async get(db, profileId) {
      if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
      if (!client && !connecting && !closed && Date.now() >= retryAt) void connect();
      const c = client;
      if (!c) return read(db, profileId);
      try {
        await barrier(c);
      } catch {
        return read(db, profileId);
      }
      if (client !== c) return read(db, profileId);
      const key = profileId.toLowerCase();
      const cached = entries.get(key);
      if (cached) {
        hits += 1;
        return { ...cached };
      }
      const before = generation;
      const summary = await read(db, profileId);
      // stored only when no note arrived while the row was read and the connection was up the whole time
      if (client === c && generation === before) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, summary);
        return { ...summary };
      }
      return summary;
    },
    stats: () => ({ hits, misses, listening: client !== null, entries: entries.size }),
    async ready() {
      await connect();
      if (!client) throw new Error('credit summary cache is not listening');
    },
    async close() {
      closed = true;
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
