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
import type pg from 'pg';
import type { Logger } from '../config/logger';
import { createListenConnection } from './listenConnection';
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
  const entries = new Map<string, CreditSummary>();
  let generation = 0;
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

  const listen = createListenConnection({
    databaseUrl: options.databaseUrl,
    channel: CREDITS_CHANGED_CHANNEL,
    name: 'credit summary cache',
    readsMeanwhile: 'summaries',
    logger: options.logger,
    onNote: drop,
    onReset: dropAll,
    reconnectMs: options.reconnectMs,
  });

  const sendBarrier = (c: pg.Client): Promise<void> => {
    const p: Promise<void> = c.query('select 1').then(
      () => undefined,
      (err: unknown) => {
        listen.lost(c, err);
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
        if (listen.client() !== c) throw new Error('credit summary cache LISTEN connection lost');
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
      const c = listen.client();
      if (!c) return read(db, profileId);
      try {
        await barrier(c);
      } catch {
        return read(db, profileId);
      }
      if (listen.client() !== c) return read(db, profileId);
      const key = profileId.toLowerCase();
      const cached = entries.get(key);
      if (cached) {
        hits += 1;
        return { ...cached };
      }
      const before = generation;
      const summary = await read(db, profileId);
      // stored only when no note arrived while the row was read and the connection was up the whole time (a loss
      // or a reconnect bumps the generation too)
      if (generation === before && listen.client() === c) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, summary);
        return { ...summary };
      }
      return summary;
    },
    stats: () => ({ hits, misses, listening: listen.listening(), entries: entries.size }),
    ready: listen.ready,
    close: listen.close,
  };
}
