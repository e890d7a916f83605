import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { InvalidCredentialsError, normalizeEmail } from '../../services/accounts/accounts';
import { InvalidSecondFactorError } from '../../services/accounts/secondFactor';
import { waitText } from '../../domain/plural';
import { RequestError } from '../validation';
import { ATTEMPT_COUNTERS_TABLE, createAttemptLimiter, type AttemptWindow } from '../../services/accounts/attemptCounters';

export type { AttemptWindow };

/**
 * Across every address, failures on one account slow it down instead of locking it: once `freeFailures` failed
 * within `windowSeconds`, only one attempt per delay goes through, the delay doubling from `baseDelaySeconds`
 * with each further failure up to `maxDelaySeconds`. The owner rides it out; a distributed guesser is throttled.
 */
export interface AccountSlowdown {
  freeFailures: number;
  windowSeconds: number;
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

/**
 * rate-limiter-flexible's login-endpoint recipe (and OWASP's authentication guidance): consecutive failures
 * per (account, IP) lock that pair only; failures per IP per day lock that IP only; failures on the account
 * from anywhere only slow it down.
 */
export interface SignInLimits {
  tableName: string;
  keyPrefix: string;
  /** consecutive failures of one account from one IP (a successful sign-in clears them) */
  perAccountAndIp: AttemptWindow;
  /** failures from one IP, whatever the account */
  perIp: AttemptWindow;
  perAccount: AccountSlowdown;
}

const HOUR = 60 * 60;
const DAY = 24 * HOUR;

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  tableName: ATTEMPT_COUNTERS_TABLE,
  keyPrefix: 'signin',
  perAccountAndIp: { points: 10, durationSeconds: 90 * DAY, blockSeconds: HOUR },
  perIp: { points: 100, durationSeconds: DAY, blockSeconds: DAY },
  perAccount: { freeFailures: 10, windowSeconds: DAY, baseDelaySeconds: 1, maxDelaySeconds: 30 },
};

export const RATE_LIMITED_CODE = 'RATE_LIMITED';

/** "Too many sign-in attempts. Please try again in N seconds|minutes|hours." — always says when. */
export function tooManyAttemptsMessage(msBeforeNext: number): string {
  return `Too many sign-in attempts. Please try again in ${waitText(Math.max(1, Math.ceil(msBeforeNext / 1000)))}.`;
}

function tooManyAttempts(msBeforeNext: number): RequestError {
  return new RequestError(429, tooManyAttemptsMessage(msBeforeNext), RATE_LIMITED_CODE, {
    retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  });
}


interface Limiters {
  pair: RateLimiterPostgres;
  ip: RateLimiterPostgres;
  /** failures on the account from anywhere (never refuses by itself) */
  accountFailures: RateLimiterPostgres;
  /** one attempt per slowdown delay on an account past its free failures */
  accountGate: RateLimiterPostgres;
}

/** What one attempt took, so the outcome can settle it. */
export interface SignInAttempt {
  ip: string;
  accountKey: string;
  pairKey: string;
  tookGate: boolean;
}

/** Over its budget: the stored count went past the points (a consume that went over also set the block). */
const isOver = (res: RateLimiterRes | null, points: number): res is RateLimiterRes => res !== null && res.consumedPoints > points;

/**
 * Sign-in attempt counters in PostgreSQL, shared by every API process. A refused attempt spends nothing;
 * an attempt takes its points up front (atomic, so parallel attempts cannot slip past a budget) and gives
 * back what a successful or malformed attempt should not keep.
 */
export class SignInLimiter {
  private limiters: Promise<Limiters> | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  private ready(): Promise<Limiters> {
    const { tableName, keyPrefix, perIp, perAccountAndIp, perAccount } = this.limits;
    this.limiters ??= (async () => {
      // one after the other: each may create the same table on first use
      const pair = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_pair`, perAccountAndIp);
      const ip = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_ip`, perIp);
      const accountFailures = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_acct`, {
        points: Number.MAX_SAFE_INTEGER,
        durationSeconds: perAccount.windowSeconds,
        blockSeconds: 0,
      });
      const accountGate = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_gate`, { points: 1, durationSeconds: 1, blockSeconds: 0 });
      return { pair, ip, accountFailures, accountGate };
    })().catch((err: unknown) => {
      this.limiters = null;
      throw err;
    });
    return this.limiters;
  }

  private static accountKey(email: string): string {
    return createHash('sha256').update(normalizeEmail(email)).digest('hex');
  }

  /** The account-wide delay after `failures` failures: 0 within the free ones, then base, 2×base, 4×base ... up to the cap. */
  slowdownSeconds(failures: number): number {
    const { freeFailures, baseDelaySeconds, maxDelaySeconds } = this.limits.perAccount;
    if (failures < freeFailures) return 0;
    return Math.min(maxDelaySeconds, baseDelaySeconds * 2 ** Math.min(failures - freeFailures, 30));
  }

  /**
   * Refuses (429 RequestError with retryAfterSeconds) when the pair or the IP is locked, or the account is inside
   * its slowdown delay; otherwise takes one point from the pair and the IP. A refusal spends no other budget.
   */
  async takeAttempt(ip: string, email: string): Promise<SignInAttempt> {
    const l = await this.ready();
    const accountKey = SignInLimiter.accountKey(email);
    const attempt: SignInAttempt = { ip, accountKey, pairKey: `${accountKey}_${ip}`, tookGate: false };
    // look first, spend nothing: a locked pair must not spend the IP's budget, a locked IP not the pair's
    const [pairNow, ipNow, failuresNow] = await Promise.all([l.pair.get(attempt.pairKey), l.ip.get(ip), l.accountFailures.get(accountKey)]);
    const locked = [isOver(pairNow, l.pair.points) ? pairNow : null, isOver(ipNow, l.ip.points) ? ipNow : null].filter((r) => r !== null);
    if (locked.length > 0) throw tooManyAttempts(Math.max(...locked.map((r) => r.msBeforeNext)));

    const taken: Array<() => Promise<unknown>> = [];
    const giveBack = () => Promise.all(taken.map((undo) => undo()));
    try {
      await l.pair.consume(attempt.pairKey);
      taken.push(() => l.pair.reward(attempt.pairKey, 1));
      const delay = this.slowdownSeconds(failuresNow?.consumedPoints ?? 0);
      if (delay > 0) {
        // one attempt per delay on this account, from wherever it comes (atomic: the first in the window takes it)
        await l.accountGate.consume(accountKey, 1, { customDuration: delay });
        attempt.tookGate = true;
        taken.push(() => l.accountGate.reward(accountKey, 1));
      }
      await l.ip.consume(ip);
    } catch (err) {
      await giveBack();
      if (err instanceof RateLimiterRes) throw tooManyAttempts(err.msBeforeNext);
      throw err;
    }
    return attempt;
  }

  /** Wrong e-mail or password: the points stay taken, and the account's failures from anywhere grow. */
  async recordFailure(attempt: SignInAttempt): Promise<void> {
    const l = await this.ready();
    await l.accountFailures.penalty(attempt.accountKey, 1);
  }

  /** Signed in: the pair's consecutive failures start again and the IP gets its point back. */
  async recordSuccess(attempt: SignInAttempt): Promise<void> {
    const l = await this.ready();
    await Promise.all([l.pair.delete(attempt.pairKey), l.ip.reward(attempt.ip, 1), attempt.tookGate ? l.accountGate.delete(attempt.accountKey) : null]);
  }

  /**
   * For credentials that name no account (personal access tokens, api/middleware/auth.ts): refuses (429) while the
   * address is locked by its failures, sign-in failures and bad tokens alike.
   */
  async refuseLockedIp(ip: string): Promise<void> {
    const l = await this.ready();
    const now: RateLimiterRes | null = await l.ip.get(ip);
    if (now === null) return;
    if (now.consumedPoints > l.ip.points) throw tooManyAttempts(now.msBeforeNext);
    // its failures used every point: this attempt is the one over the budget, as a sign-in's would be, and sets the block
    if (now.consumedPoints === l.ip.points) {
      try {
        await l.ip.consume(ip);
      } catch (err) {
        if (err instanceof RateLimiterRes) throw tooManyAttempts(err.msBeforeNext);
        throw err;
      }
    }
  }

  /** A bad access token spends one of the address's points, as a failed sign-in does. */
  async recordIpFailure(ip: string): Promise<void> {
    const l = await this.ready();
    try {
      await l.ip.consume(ip);
    } catch (err) {
      // the attempt that used the last point: the address is locked from now on (refuseLockedIp says so)
      if (!(err instanceof RateLimiterRes)) throw err;
    }
  }

  /** An attempt that failed for another reason than the credentials does not count. */
  async refund(attempt: SignInAttempt): Promise<void> {
    const l = await this.ready();
    await Promise.all([
      l.pair.reward(attempt.pairKey, 1),
      l.ip.reward(attempt.ip, 1),
      attempt.tookGate ? l.accountGate.reward(attempt.accountKey, 1) : null,
    ]);
  }
}

export interface SignInRateLimitOptions {
  /**
   * The account an attempt is for: the body's e-mail (the password step, the default), or what the second step's
   * body names (its pending sign-in's person, a passkey's credential id). Undefined: not a credential attempt.
   */
  accountOf?: (ctx: Parameters<Middleware>[0]) => Promise<string | undefined> | string | undefined;
}

function bodyEmail(ctx: Parameters<Middleware>[0]): string | undefined {
  const body: unknown = (ctx.request as { body?: unknown }).body;
  const email = typeof body === 'object' && body !== null ? (body as { email?: unknown }).email : undefined;
  return typeof email === 'string' && email.trim() !== '' ? email : undefined;
}

/** A wrong password, a wrong second factor or a passkey that did not verify: a failed attempt. */
function isCredentialFailure(err: unknown): boolean {
  return err instanceof InvalidCredentialsError || err instanceof InvalidSecondFactorError;
}

/**
 * Guards a sign-in route (the password, the second step, a passkey sign-in): refuses with 429, Retry-After and a message saying when, while the (account, IP) pair
 * or the IP is locked or the account is in its slowdown delay. The client address is ctx.ip: the socket's, or the
 * proxy header's only when TRUST_PROXY is on (api/app.ts).
 */
export function signInRateLimit(limiter: SignInLimiter, options: SignInRateLimitOptions = {}): Middleware {
  const accountOf = options.accountOf ?? bodyEmail;
  return async function signInRateLimitMiddleware(ctx, next) {
    const account = await accountOf(ctx);
    // malformed requests are no credential attempts: validation answers them
    if (account === undefined) return next();
    const ip = ctx.ip || 'unknown';
    let attempt: SignInAttempt;
    try {
      attempt = await limiter.takeAttempt(ip, account);
    } catch (err) {
      if (err instanceof RequestError && err.status === 429) ctx.set('Retry-After', String(err.extra.retryAfterSeconds));
      throw err;
    }
    try {
      await next();
    } catch (err) {
      await (isCredentialFailure(err) ? limiter.recordFailure(attempt) : limiter.refund(attempt));
      throw err;
    }
    await limiter.recordSuccess(attempt);
  };
}
