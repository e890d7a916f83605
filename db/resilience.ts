/**
 * Database resilience (spec 000 sections 8 and 9): every statement of the app's pool is limited to the query
 * timeout (PostgreSQL's own `statement_timeout`, which also ends a wait on a row lock), a connection must be made
 * and handed out within the connection timeout, and database access runs behind circuit breakers, one per kind of
 * data, so a database that stalls or is gone answers a clear 503 at once instead of piling up requests.
 *
 * The breakers are the spec's (providers/circuitBreaker.ts, shared with the AI providers): 10 failures within the
 * window open one. The spec's database figures are call timeouts ("Database breakers: 10 failures; timeouts 30 s
 * (credits), 20 s (user data), 15 s otherwise"): a call (connection and statements) that takes longer fails with
 * '... timeout after <ms>ms' and counts as a failure. Everything else is the breaker defaults: a 5-minute window,
 * open for 60 s, then 3 trial calls. Only failures that say the database is unhealthy count (a statement timeout, a refused or dropped
 * connection, no connection within the timeout, the server shutting down or out of resources); a unique
 * violation or a bad value is the caller's mistake and leaves the breaker alone.
 */
import type { Knex } from 'knex';
import { CIRCUIT_BREAKER_DEFAULTS } from '../domain/constants';
import { CircuitBreaker, CircuitBreakerError, type CircuitBreakerOptions, type CircuitState } from '../providers/circuitBreaker';

export const DATABASE_TIMEOUTS = {
  /** A health check's `select 1` (GET /api/health, the readiness probe's database part). */
  connectionCheckMs: 5_000,
  /** Longest one statement may run, waiting on locks included ('Query timeout after <ms>ms'). */
  queryMs: 15_000,
  /** Longest to open a connection (pg `connectionTimeoutMillis`) and to wait for one from the pool (knex `acquireConnectionTimeout`). */
  connectionMs: 30_000,
} as const;

export type DatabaseBreakerName = 'credits' | 'userData' | 'other';

export const DATABASE_BREAKERS: Record<DatabaseBreakerName, { failureThreshold: number; callTimeoutMs: number }> = {
  credits: { failureThreshold: 10, callTimeoutMs: 30_000 },
  userData: { failureThreshold: 10, callTimeoutMs: 20_000 },
  other: { failureThreshold: 10, callTimeoutMs: 15_000 },
};

/** Tables whose statements go through each breaker (the first kind named in a statement wins, credits first). */
const CREDIT_TABLES = /\b(credit_transactions|credit_reservations|credit_purchases|stripe_events|stripe_refunds)\b/;
const USER_DATA_TABLES =
  /\b(users|profiles|sessions|projects|renders|images|clips|compiled_videos|generated_content|ai_image_edits|drafts|draft_images|aesthetic_chats|data_exports)\b/;

export function breakerFor(sql: string): DatabaseBreakerName {
  if (CREDIT_TABLES.test(sql)) return 'credits';
  if (USER_DATA_TABLES.test(sql)) return 'userData';
  return 'other';
}

export type DatabaseUnavailableCode = 'QUERY_TIMEOUT' | 'DATABASE_UNAVAILABLE' | 'CIRCUIT_OPEN' | 'CIRCUIT_TIMEOUT';

/**
 * The database cannot serve this call now; waiting and trying again can help (activities let Temporal retry it).
 * The API answers 503 with the message, the code and `Retry-After`.
 */
export class DatabaseUnavailableError extends Error {
  readonly status = 503;
  readonly retryable = true;

  constructor(
    readonly code: DatabaseUnavailableCode,
    message: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** PostgreSQL's SQLSTATEs that say the server, not the statement, is the problem (classes 08, 53, 57P). */
const UNHEALTHY_SQLSTATE = /^(08|53|57P)/;
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
const CONNECTION_ERROR_TEXT = /Connection terminated|timeout exceeded when trying to connect|Timeout acquiring a connection|Client has encountered a connection error/i;

function isStatementTimeout(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === '57014' && typeof message === 'string' && /statement timeout/i.test(message);
}

function isConnectionFailure(err: unknown): boolean {
  const { code, message, name } = (err ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  if (name === 'KnexTimeoutError') return true;
  if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || (code.length === 5 && UNHEALTHY_SQLSTATE.test(code)))) return true;
  return typeof message === 'string' && CONNECTION_ERROR_TEXT.test(message);
}

/** Whether an error says the database is unhealthy (it counts against the breaker). */
export function isDatabaseFailure(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return err.code !== 'CIRCUIT_OPEN';
  // a call that outlasted its breaker's timeout
  if (err instanceof CircuitBreakerError) return err.code === 'CIRCUIT_TIMEOUT';
  return isStatementTimeout(err) || isConnectionFailure(err);
}

export interface DatabaseResilienceOptions {
  /** statement_timeout of every connection; 0 turns it off (migrations). */
  queryTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /** Overrides for every breaker (tests pass a clock, a short call timeout or a short reset). */
  breaker?: Partial<Pick<CircuitBreakerOptions, 'now' | 'resetTimeoutMs' | 'failureThreshold' | 'callTimeoutMs' | 'onStateChange'>>;
  /** false: no breakers (migrations, which must see the real error). */
  breakers?: boolean;
  /** The connections' application_name (default SERVICE_NAME, else render-studio). */
  applicationName?: string;
  /** Longest a new connection waits for a server that is not taking connections yet (db/reconnect.ts; default 5 s). */
  reconnectWaitMs?: number;
}

export interface DatabaseGuard {
  readonly queryTimeoutMs: number;
  readonly breakers: Record<DatabaseBreakerName, CircuitBreaker>;
  /** Runs one builder's work (connection and statements) behind the breaker its SQL belongs to. */
  run<T>(sql: string, work: () => Promise<T>): Promise<T>;
  states(): Record<DatabaseBreakerName, CircuitState>;
}

/** Translates what the driver says into the errors the app answers with (the original stays as `cause`). */
function translate(err: unknown, queryTimeoutMs: number, connectionTimeoutMs: number): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  if (isStatementTimeout(err)) return new DatabaseUnavailableError('QUERY_TIMEOUT', `Query timeout after ${queryTimeoutMs}ms`, 5, { cause: err });
  if (isConnectionFailure(err)) {
    const message = /acquir|connect/i.test(String((err as Error).message ?? '')) && (err as Error).name === 'KnexTimeoutError'
      ? `Database connection timeout after ${connectionTimeoutMs}ms`
      : 'The database is not reachable right now';
    return new DatabaseUnavailableError('DATABASE_UNAVAILABLE', message, 5, { cause: err });
  }
  return err;
}

export function createDatabaseGuard(options: DatabaseResilienceOptions = {}): DatabaseGuard {
  const queryTimeoutMs = options.queryTimeoutMs ?? DATABASE_TIMEOUTS.queryMs;
  const connectionTimeoutMs = options.connectionTimeoutMs ?? DATABASE_TIMEOUTS.connectionMs;
  const make = (name: DatabaseBreakerName) =>
    new CircuitBreaker(`database:${name}`, {
      failureThreshold: DATABASE_BREAKERS[name].failureThreshold,
      callTimeoutMs: DATABASE_BREAKERS[name].callTimeoutMs,
      isFailure: isDatabaseFailure,
      ...options.breaker,
    });
  const breakers: Record<DatabaseBreakerName, CircuitBreaker> = { credits: make('credits'), userData: make('userData'), other: make('other') };
  const resetSeconds = Math.ceil((options.breaker?.resetTimeoutMs ?? CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs) / 1000);

  return {
    queryTimeoutMs,
    breakers,
    async run<T>(sql: string, work: () => Promise<T>): Promise<T> {
      const name = breakerFor(sql);
      try {
        return await breakers[name].execute(async () => {
          try {
            return await work();
          } catch (err) {
            throw translate(err, queryTimeoutMs, connectionTimeoutMs);
          }
        });
      } catch (err) {
        if (err instanceof CircuitBreakerError) {
          // the call outlasted its breaker's timeout ('Circuit breaker "database:credits": timeout after 30000ms'): worth a retry soon
          if (err.code === 'CIRCUIT_TIMEOUT') throw new DatabaseUnavailableError('CIRCUIT_TIMEOUT', err.message, 5, { cause: err });
          throw new DatabaseUnavailableError('CIRCUIT_OPEN', `The database is unavailable right now (${err.message}); try again shortly`, resetSeconds, { cause: err });
        }
        throw err;
      }
    },
    states: () => ({ credits: breakers.credits.state, userData: breakers.userData.state, other: breakers.other.state }),
  };
}

/** The SQL a knex builder will run (query builders name their table; raw and schema builders give their text). */
export function builderSql(builder: unknown): string {
  const b = builder as { _single?: { table?: unknown }; sql?: unknown; toSQL?: () => unknown };
  if (typeof b._single?.table === 'string') return b._single.table;
  if (typeof b.sql === 'string') return b.sql;
  try {
    const compiled = b.toSQL?.();
    const list = Array.isArray(compiled) ? compiled : [compiled];
    return list.map((q) => (q as { sql?: string })?.sql ?? '').join(';');
  } catch {
    return '';
  }
}

const guards = new WeakMap<Knex, DatabaseGuard>();

export function attachGuard(knex: Knex, guard: DatabaseGuard): void {
  guards.set(knex, guard);
}

/** The breakers of a pool opened by connectDatabase (undefined for one opened without them). */
export function databaseGuardOf(knex: Knex): DatabaseGuard | undefined {
  return guards.get(knex);
}
