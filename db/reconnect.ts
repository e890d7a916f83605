/**
 * Riding out a PostgreSQL restart of a few seconds (the soak's chaos mode restarts it under load; issue 41 item 8):
 *
 * - a connection that cannot be opened because the server is not taking connections yet (refused, "starting up",
 *   "shutting down") is tried again every 250 ms for up to 5 s before the caller is told: nothing was sent, so this
 *   is safe for every statement and for a transaction's BEGIN;
 * - a read (a SELECT outside a transaction) whose connection was dropped under it (the server restarted, or an
 *   operator ended the backend) is run once more on a new connection, which waits for the server as above. A write
 *   is never run again: it may have been committed before its connection went, so it fails with the 503
 *   DATABASE_UNAVAILABLE the client may retry.
 */

export const RECONNECT = {
  /** Longest a new connection waits for a server that is not taking connections yet. */
  waitMs: 5_000,
  intervalMs: 250,
} as const;

const CANNOT_CONNECT_NOW = '57P03';
const NOT_ACCEPTING_TEXT = /the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)/i;

function fields(err: unknown): { code?: unknown; message?: unknown; name?: unknown } {
  return (err ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
}

/** A connection the server did not take (yet): nothing of the caller's work reached it. */
export function isServerNotAcceptingConnections(err: unknown): boolean {
  const { code, message } = fields(err);
  if (code === 'ECONNREFUSED' || code === CANNOT_CONNECT_NOW) return true;
  return typeof message === 'string' && NOT_ACCEPTING_TEXT.test(message);
}

/**
 * A connection that was working and went away under a statement: reset or closed by the server, or ended by it
 * (57P01 admin shutdown, 57P02 crash shutdown), or the driver saying the connection is gone. A statement timeout or
 * a wait for a pooled connection is not one.
 */
export function isDroppedConnection(err: unknown): boolean {
  const { code, message, name } = fields(err);
  if (name === 'KnexTimeoutError') return false;
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === '57P01' || code === '57P02') return true;
  return typeof message === 'string' && /Connection terminated|Client has encountered a connection error|terminating connection due to/i.test(message);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens (acquires) a connection, waiting up to `waitMs` for a server that is not taking connections yet. */
export async function acquireWaitingForServer<T>(acquire: () => Promise<T>, waitMs: number = RECONNECT.waitMs): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await acquire();
    } catch (err) {
      // a server shutting down may also close a connection while it is being opened
      const unavailable = isServerNotAcceptingConnections(err) || isDroppedConnection(err);
      if (!unavailable || Date.now() + RECONNECT.intervalMs > deadline) throw err;
      await sleep(RECONNECT.intervalMs);
    }
  }
}

/**
 * How many more times a read runs when its connection was dropped: once on a new connection, and again only when a
 * pooled connection it was handed turns out to be gone too (a restart ends them all; the pool learns of each one as
 * its socket reports it).
 */
export const READ_RUNS_AFTER_A_DROP = 3;

/** Runs a read; when its connection was dropped under it, runs it again (`again` takes another connection). */
export async function readRetryingDroppedConnection<T>(first: () => Promise<T>, again: () => Promise<T>): Promise<T> {
  try {
    return await first();
  } catch (err) {
    if (!isDroppedConnection(err)) throw err;
  }
  for (let run = 1; ; run += 1) {
    try {
      return await again();
    } catch (err) {
      if (!isDroppedConnection(err) || run >= READ_RUNS_AFTER_A_DROP) throw err;
    }
  }
}

/** Marks a pooled pg connection whose statement failed because the connection is gone, so the pool never hands it out again. */
export function disposeDroppedConnection(connection: unknown, err: unknown): void {
  if (connection && typeof connection === 'object' && isDroppedConnection(err)) {
    const c = connection as { __knex__disposed?: unknown };
    c.__knex__disposed = c.__knex__disposed ?? err;
  }
}

const LOCKING_READ = /\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b/i;

/**
 * Whether a knex builder is a plain read, safe to run twice: a query builder's select/first/pluck without a row lock,
 * or raw SQL that is one SELECT (or a WITH ... SELECT without a data-changing part) without a row lock.
 */
export function isReadOnlyBuilder(builder: unknown): boolean {
  const b = builder as { _method?: unknown; _single?: { lock?: unknown }; sql?: unknown };
  if (typeof b.sql === 'string') {
    const sql = b.sql.trim();
    if (LOCKING_READ.test(sql) || sql.includes(';')) return false;
    if (/^select\b/i.test(sql)) return true;
    return /^with\b/i.test(sql) && !/\b(insert|update|delete|merge)\b/i.test(sql);
  }
  if (b._method !== 'select' && b._method !== 'first' && b._method !== 'pluck') return false;
  return !b._single?.lock;
}
