/**
 * The Enhance Renders access code (DESIGN.md "Security": checked by the server). The code is ENHANCE_ACCESS_CODE,
 * compared after trimming and case-insensitively (spec 001 section 5); an accepted code is remembered for the
 * account (profiles.enhance_unlocked_at), and every /api/enhance-set call needs it. Wrong guesses are counted with
 * rate-limiter-flexible in the auth_rate_limits table (shared by every API process, as the sign-in limits are): per
 * account and per client address, each refused for a while once over its budget. With no code configured the
 * feature is locked for everyone.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ENHANCE_MSG } from '../../domain/enhanceRenders';
import { DomainError } from '../../domain/errors';
import { waitText } from '../../domain/plural';
import { ATTEMPT_COUNTERS_TABLE, createAttemptLimiter, type AttemptWindow } from '../accounts/attemptCounters';

export type { AttemptWindow };

export interface EnhanceAccessLimits {
  tableName: string;
  keyPrefix: string;
  /** wrong guesses of one account, from anywhere */
  perAccount: AttemptWindow;
  /** wrong guesses from one address, whatever the account */
  perIp: AttemptWindow;
}

const HOUR = 60 * 60;
const DAY = 24 * HOUR;

/** 10 wrong codes an hour per account, then an hour's pause; 50 a day per address, then a day's. */
export const DEFAULT_ENHANCE_ACCESS_LIMITS: EnhanceAccessLimits = {
  tableName: ATTEMPT_COUNTERS_TABLE,
  keyPrefix: 'enhance_code',
  perAccount: { points: 10, durationSeconds: HOUR, blockSeconds: HOUR },
  perIp: { points: 50, durationSeconds: DAY, blockSeconds: DAY },
};

export const ENHANCE_CODES = {
  locked: 'ENHANCE_LOCKED',
  notConfigured: 'ENHANCE_NOT_CONFIGURED',
  wrongCode: 'ACCESS_CODE_INVALID',
  rateLimited: 'RATE_LIMITED',
} as const;

export class AccessCodeRateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, ENHANCE_CODES.rateLimited, ENHANCE_MSG.tooManyGuesses(AccessCodeRateLimitedError.when(retryAfterSeconds)));
  }

  static when(seconds: number): string {
    return waitText(seconds);
  }
}

/** The code as compared: trimmed, lower-cased, hashed (so the comparison takes the same time whatever the input). */
function digest(code: string): Buffer {
  return createHash('sha256').update(code.trim().toLowerCase()).digest();
}


export class EnhanceAccessService {
  private limiters: Promise<{ account: RateLimiterPostgres; ip: RateLimiterPostgres }> | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly accessCode: string,
    private readonly limits: EnhanceAccessLimits = DEFAULT_ENHANCE_ACCESS_LIMITS,
  ) {}

  get configured(): boolean {
    return this.accessCode.trim() !== '';
  }

  private ready() {
    const { tableName, keyPrefix, perAccount, perIp } = this.limits;
    this.limiters ??= (async () => {
      const account = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_acct`, perAccount);
      const ip = await createAttemptLimiter(this.knex, tableName, `${keyPrefix}_ip`, perIp);
      return { account, ip };
    })().catch((err: unknown) => {
      this.limiters = null;
      throw err;
    });
    return this.limiters;
  }

  async isUnlocked(workspaceId: string): Promise<boolean> {
    const row = (await this.knex('profiles').where({ id: workspaceId }).first('enhance_unlocked_at')) as { enhance_unlocked_at: Date | null } | undefined;
    return Boolean(row?.enhance_unlocked_at);
  }

  /** 403 ENHANCE_LOCKED unless the account has unlocked the feature. */
  async assertUnlocked(workspaceId: string): Promise<void> {
    if (!this.configured) throw new DomainError(403, ENHANCE_CODES.notConfigured, ENHANCE_MSG.notConfigured);
    if (!(await this.isUnlocked(workspaceId))) throw new DomainError(403, ENHANCE_CODES.locked, ENHANCE_MSG.locked);
  }

  /**
   * Checks a guess. A locked account or address is refused (429) before anything is compared; a wrong code spends a
   * point of both and answers 403; the right one is remembered for the account. An account already unlocked stays so.
   */
  async unlock(workspaceId: string, ip: string, code: string): Promise<{ unlocked: true; unlockedAt: string }> {
    if (!this.configured) throw new DomainError(403, ENHANCE_CODES.notConfigured, ENHANCE_MSG.notConfigured);
    const l = await this.ready();
    const [accountNow, ipNow] = await Promise.all([l.account.get(workspaceId), l.ip.get(ip)]);
    const over = [accountNow && accountNow.consumedPoints > l.account.points ? accountNow : null, ipNow && ipNow.consumedPoints > l.ip.points ? ipNow : null].filter(
      (r): r is RateLimiterRes => r !== null,
    );
    if (over.length > 0) throw new AccessCodeRateLimitedError(Math.max(1, Math.ceil(Math.max(...over.map((r) => r.msBeforeNext)) / 1000)));

    if (!timingSafeEqual(digest(code), digest(this.accessCode))) {
      // spend the points; going over now blocks the next guess (this one is answered as wrong all the same)
      await Promise.allSettled([l.account.consume(workspaceId), l.ip.consume(ip)]);
      throw new DomainError(403, ENHANCE_CODES.wrongCode, ENHANCE_MSG.wrongCode);
    }
    const [row] = (await this.knex('profiles')
      .where({ id: workspaceId })
      .update({ enhance_unlocked_at: this.knex.raw('coalesce(enhance_unlocked_at, now())') })
      .returning('enhance_unlocked_at')) as Array<{ enhance_unlocked_at: Date }>;
    if (!row) throw new DomainError(404, 'PROFILE_NOT_FOUND', 'Profile not found');
    await l.account.delete(workspaceId);
    return { unlocked: true, unlockedAt: new Date(row.enhance_unlocked_at).toISOString() };
  }
}
