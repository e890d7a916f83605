/**
 * The attempt counters of sign-in and of the Enhance Renders access code: rate-limiter-flexible's rows in
 * `auth_rate_limits`. Rows whose window ended over an hour ago are removed by the API process's background work
 * every five minutes (api/deps.ts), the clean-up the library would otherwise run on a timer of its own per limiter,
 * started on first use and never stopped when the app closes.
 */
import type { Knex } from 'knex';
import { RateLimiterPostgres } from 'rate-limiter-flexible';

export const ATTEMPT_COUNTERS_TABLE = 'auth_rate_limits';
export const EXPIRED_ATTEMPT_COUNTERS_SWEEP_EVERY_MS = 5 * 60_000;
/** How long a counter is kept after its window ended (the library's own choice). */
const KEPT_AFTER_EXPIRY_MS = 60 * 60_000;

/** Removes the counters that expired over an hour before `now`; resolves to how many. */
export async function removeExpiredAttemptCounters(knex: Knex, now: number = Date.now()): Promise<number> {
  return knex(ATTEMPT_COUNTERS_TABLE).where('expire', '<', now - KEPT_AFTER_EXPIRY_MS).delete();
}

/** One window of an attempt counter: `points` attempts per `durationSeconds`, then refused for `blockSeconds`. */
export interface AttemptWindow {
  /** attempts allowed in the window */
  points: number;
  durationSeconds: number;
  /** how long a key stays refused once it went over */
  blockSeconds: number;
}

/**
 * A counter under `keyPrefix` in `tableName`, ready once the library has checked its table (the migrations made it,
 * so its CREATE TABLE IF NOT EXISTS is a no-op). Without its own clean-up timer: expired rows are swept as above.
 */
export function createAttemptLimiter(knex: Knex, tableName: string, keyPrefix: string, window: AttemptWindow): Promise<RateLimiterPostgres> {
  return new Promise((resolve, reject) => {
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(
      {
        storeClient: knex,
        storeType: 'knex',
        tableName,
        keyPrefix,
        points: window.points,
        duration: window.durationSeconds,
        blockDuration: window.blockSeconds,
        clearExpiredByTimeout: false,
      },
      (err?: Error) => (err ? reject(err) : resolve(limiter)),
    );
  });
}
