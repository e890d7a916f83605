/**
 * An in-process cache of values read from PostgreSQL that is exact: a lookup never answers from memory what a change
 * committed before the lookup began has altered, whichever process or code path made the change. The credit summary
 * cache (services/billing/creditSummaryCache.ts) and the project owner cache (services/content/projectOwnerCache.ts) are built on it.
 *
 * Exactness: every change to what a key stands for notifies `channel` with the key (or '*' for every key) on commit
 * (database triggers, e.g. db/migrations/20261125000300_credit_summary_notify.ts). The cache LISTENs on its own
 * connection (services/platform/listenConnection.ts) and drops that key's entry on the note.
 *
 * A note alone would leave a window: a change committed in another process is acknowledged to its client before
 * this process has read the note. So before answering, a lookup waits for a *barrier*: a `select 1` on the LISTEN
 * connection that was sent after the lookup began. PostgreSQL signals every listener while the notifying transaction
 * commits (before that commit is acknowledged) and a listening session sends the notes it was signalled for before
 * the ReadyForQuery that ends its next command (postgres.c); node-postgres hands the notes to us in the order they
 * arrive, before the barrier's promise settles. Hence when the barrier resolves, every change committed before the
 * lookup began has dropped its entry, and what is left is current. One barrier serves every lookup that began
 * before it was sent, so under load it costs one tiny round trip per batch instead of one read per request.
 *
 * A read whose database round trip overlapped any note is not stored (it may predate the change). While the LISTEN
 * connection is down every lookup reads the database, and reconnecting starts from an empty cache.
 *
 * Keys are compared exactly as given: callers spell them as the notes do (a uuid as PostgreSQL prints it, lower-case).
 */
import type pg from 'pg';
import type { Logger } from '../../config/logger';
import { createListenBarrier } from './listenBarrier';
import { createListenConnection } from './listenConnection';

/** What a user of the noted cache leaves to its caller (the channel and names are the user's own). */
export interface NotedCacheSettings {
  databaseUrl: string;
  logger: Pick<Logger, 'warn'>;
  /** entries kept; the oldest go first (default 10000) */
  maxEntries?: number;
  /** wait before reconnecting a lost LISTEN connection (default 1 s) */
  reconnectMs?: number;
}

export interface NotedCacheOptions<V> extends NotedCacheSettings {
  /** the channel whose notes carry a changed key, or '*' when every entry must go */
  channel: string;
  /** what caches, for the LISTEN connection's application_name and the log ("credit summary cache") */
  name: string;
  /** what is read from the database while the LISTEN connection is down, for the log ("summaries") */
  readsMeanwhile: string;
  /** whether a value read may be kept (default: every one); what it refuses is read again on each lookup */
  keeps?: (value: V) => boolean;
}

export interface NotedCacheStats {
  hits: number;
  misses: number;
  listening: boolean;
  entries: number;
}

export interface NotedCache<V> {
  /**
   * The key's current value: the entry held, or what `read` answers (kept when no note overlapped it). A read that
   * fails passes its error on and keeps nothing.
   */
  get: (key: string, read: () => Promise<V>) => Promise<V>;
  stats: () => NotedCacheStats;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export function createNotedCache<V>(options: NotedCacheOptions<V>): NotedCache<V> {
  const maxEntries = options.maxEntries ?? 10_000;
  const keeps = options.keeps ?? (() => true);
  const entries = new Map<string, V>();
  let generation = 0;
  let hits = 0;
  let misses = 0;

  const drop = (key: string) => {
    generation += 1;
    if (key === '*') entries.clear();
    else entries.delete(key);
  };

  const listen = createListenConnection({
    databaseUrl: options.databaseUrl,
    channel: options.channel,
    name: options.name,
    readsMeanwhile: options.readsMeanwhile,
    logger: options.logger,
    onNote: drop,
    onReset: () => drop('*'),
    reconnectMs: options.reconnectMs,
  });

  /** Settles after every note of a change committed before this call has been applied. */
  const barrier = createListenBarrier(listen, options.name);

  const readNow = (read: () => Promise<V>) => {
    misses += 1;
    return read();
  };

  return {
    async get(key, read) {
      const c = listen.client();
      if (!c) return readNow(read);
      try {
        await barrier(c);
      } catch {
        return readNow(read);
      }
      if (listen.client() !== c) return readNow(read);
      if (entries.has(key)) {
        hits += 1;
        return entries.get(key) as V;
      }
      const before = generation;
      const value = await readNow(read);
      // stored only when no note arrived while the value was read and the connection was up the whole time (a loss
      // or a reconnect bumps the generation too)
      if (generation === before && listen.client() === c && keeps(value)) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, value);
      }
      return value;
    },
    stats: () => ({ hits, misses, listening: listen.listening(), entries: entries.size }),
    ready: listen.ready,
    close: listen.close,
  };
}
