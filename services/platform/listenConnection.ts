/**
 * A PostgreSQL connection that LISTENs on one channel for an in-process cache (the session cache, the credit
 * summary cache). The cache trusts what it holds only while this connection is up: every (re)connect and every loss
 * calls `onReset` so the cache starts over, a lost connection is retried after `reconnectMs`, and while it is down
 * `client()` answers null so the cache reads the database instead.
 *
 * The connection is opened lazily: `client()` starts a connect when none is up or under way and the back-off has
 * passed, and answers at once (lookups never wait for it; `ready()` does, for tests and start-up).
 */
import pg from 'pg';
import type { Logger } from '../../config/logger';

export interface ListenConnectionOptions {
  databaseUrl: string;
  channel: string;
  /** what listens, as the connection's application_name suffix and in log lines ("session cache") */
  name: string;
  /** what the cache reads from the database while the connection is down, for the log ("sessions") */
  readsMeanwhile: string;
  logger: Pick<Logger, 'warn'>;
  /** each note's payload (notes without one are ignored) */
  onNote: (payload: string) => void;
  /** the connection came up or was lost: whatever the cache holds can no longer be trusted */
  onReset: () => void;
  /** wait before reconnecting a lost or refused connection (default 1 s) */
  reconnectMs?: number;
  now?: () => number;
}

export interface ListenConnection {
  /** The listening client, or null while it is down (starting a connect when one is due). */
  client: () => pg.Client | null;
  /** Whether the connection is up right now (starts nothing). */
  listening: () => boolean;
  /** Marks `c` as lost (a query on it failed): reset, and reconnect after the back-off. */
  lost: (c: pg.Client, err?: unknown) => void;
  /** Resolves once the connection is up; rejects if it could not be opened. */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * How a LISTEN connection shows in pg_stat_activity: what listens and the process it listens for, so an operator (or
 * a test) can tell the connections of several API processes on one database apart.
 */
export function listenApplicationName(name: string, pid: number = process.pid): string {
  return `render-studio ${name} (pid ${pid})`;
}

export function createListenConnection(options: ListenConnectionOptions): ListenConnection {
  const { channel, name, logger } = options;
  const reconnectMs = options.reconnectMs ?? 1000;
  const now = options.now ?? Date.now;
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retryAt = 0;
  let closed = false;

  const lost = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    client = null;
    options.onReset();
    retryAt = now() + reconnectMs;
    logger.warn({ err }, `${name} LISTEN connection lost; ${options.readsMeanwhile} are read from the database until it is back`);
    void c.end().catch(() => undefined);
  };

  const connect = (): Promise<void> => {
    if (client || closed) return Promise.resolve();
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: options.databaseUrl, application_name: listenApplicationName(name), keepAlive: true });
      c.on('error', (err) => lost(c, err));
      c.on('end', () => lost(c));
      c.on('notification', (msg) => {
        if (msg.channel === channel && msg.payload) options.onNote(msg.payload);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${channel}`);
        if (closed) {
          await c.end().catch(() => undefined);
          return;
        }
        // whatever was held before (nothing, or entries from a broken connection's time) is dropped now
        options.onReset();
        client = c;
      } catch (err) {
        retryAt = now() + reconnectMs;
        logger.warn({ err }, `${name} could not LISTEN; ${options.readsMeanwhile} are read from the database`);
        await c.end().catch(() => undefined);
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  return {
    client() {
      if (!client && !connecting && !closed && now() >= retryAt) void connect();
      return client;
    },
    listening: () => client !== null,
    lost,
    async ready() {
      await connect();
      if (!client) throw new Error(`${name} is not listening`);
    },
    async close() {
      closed = true;
      const c = client;
      client = null;
      options.onReset();
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
