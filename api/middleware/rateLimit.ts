import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { InvalidCredentialsError, normalizeEmail } from '../../services/accounts';
import { RequestError } from '../validation';

export interface AttemptWindow {
  /** attempts allowed in the window */
  points: number;
  durationSeconds: number;
  /** how long a key stays refused once it went over */
  blockSeconds: number;
}

export interface SignInLimits {
  tableName: string;
  keyPrefix: string;
  perAccount: AttemptWindow;
  perIp: AttemptWindow;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  tableName: 'auth_rate_limits',
  keyPrefix: 'signin',
  perAccount: { points: 10, durationSeconds: 15 * 60, blockSeconds: 15 * 60 },
  perIp: { points: 100, durationSeconds: 60 * 60, blockSeconds: 60 * 60 },
};

export const RATE_LIMITED_CODE = 'RATE_LIMITED';

export function tooManyAttemptsMessage(msBeforeNext: number): string {
  const minutes = Math.max(1, Math.ceil(msBeforeNext / 60000));
  return `Too many sign-in attempts. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

function createLimiter(knex: Knex, tableName: string, keyPrefix: string, window: AttemptWindow): Promise<RateLimiterPostgres> {
  return new Promise((resolve, reject) => {
    // the table comes from the migrations; the library's CREATE TABLE IF NOT EXISTS is then a no-op, and its
    // callback (run after that check) also starts its hourly removal of expired rows
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(
      {
        storeClient: knex,
        storeType: 'knex',
        tableName,
        keyPrefix,
        points: window.points,
        duration: window.durationSeconds,
        blockDuration: window.blockSeconds,
      },
      (err?: Error) => (err ? reject(err) : resolve(limiter)),
    );
  });
}

/**
 * Sign-in attempts counted per account (e-mail) and per client IP in PostgreSQL, so every API process
 * shares the counts. Each attempt takes a point up front (atomic, so parallel attempts cannot slip past);
 * a successful sign-in clears the account's count and gives the IP its point back.
 */
export class SignInLimiter {
  private limiters: Promise<{ ip: RateLimiterPostgres; account: RateLimiterPostgres }> | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  private ready(): Promise<{ ip: RateLimiterPostgres; account: RateLimiterPostgres }> {
    const { tableName, keyPrefix, perIp, perAccount } = this.limits;
    this.limiters ??= (async () => {
      // one after the other: both create the same table on first use
      const ip = await createLimiter(this.knex, tableName, `${keyPrefix}_ip`, perIp);
      const account = await createLimiter(this.knex, tableName, `${keyPrefix}_account`, perAccount);
      return { ip, account };
    })().catch((err: unknown) => {
      this.limiters = null;
      throw err;
    });
    return this.limiters;
  }

  private static accountKey(email: string): string {
    return createHash('sha256').update(normalizeEmail(email)).digest('hex');
  }

  /** Takes one attempt from both budgets; throws a 429 RequestError when either is spent. */
  async takeAttempt(ip: string, email: string): Promise<void> {
    const limiters = await this.ready();
    try {
      await limiters.ip.consume(ip);
      await limiters.account.consume(SignInLimiter.accountKey(email));
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        throw new RequestError(429, tooManyAttemptsMessage(err.msBeforeNext), RATE_LIMITED_CODE, {
          retryAfterSeconds: Math.ceil(err.msBeforeNext / 1000),
        });
      }
      throw err;
    }
  }

  async recordSuccess(ip: string, email: string): Promise<void> {
    const limiters = await this.ready();
    await Promise.all([limiters.account.delete(SignInLimiter.accountKey(email)), limiters.ip.reward(ip, 1)]);
  }

  /** An attempt that failed for another reason than the credentials does not count. */
  async refund(ip: string, email: string): Promise<void> {
    const limiters = await this.ready();
    await Promise.all([limiters.account.reward(SignInLimiter.accountKey(email), 1), limiters.ip.reward(ip, 1)]);
  }
}

/**
 * Guards the sign-in route: refuses with 429 (and Retry-After) when the account or the IP is over its
 * budget; a wrong e-mail or password keeps its point, a successful sign-in resets the account's count.
 */
export function signInRateLimit(limiter: SignInLimiter): Middleware {
  return async function signInRateLimitMiddleware(ctx, next) {
    const body: unknown = (ctx.request as { body?: unknown }).body;
    const email = typeof body === 'object' && body !== null ? (body as { email?: unknown }).email : undefined;
    // malformed requests are no credential attempts: validation answers them
    if (typeof email !== 'string' || email.trim() === '') return next();
    const ip = ctx.ip || 'unknown';
    try {
      await limiter.takeAttempt(ip, email);
    } catch (err) {
      if (err instanceof RequestError && err.status === 429) ctx.set('Retry-After', String(err.extra.retryAfterSeconds));
      throw err;
    }
    try {
      await next();
    } catch (err) {
      if (!(err instanceof InvalidCredentialsError)) await limiter.refund(ip, email);
      throw err;
    }
    await limiter.recordSuccess(ip, email);
  };
}
