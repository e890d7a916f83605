/**
 * The budgets of domain/actionLimits.ts, counted with rate-limiter-flexible in the attempt-counter table that the
 * sign-in limits use (`auth_rate_limits`, shared by every API process, swept by services/accounts/attemptCounters).
 * `take` spends one point of every rule the action has, atomically per rule; over any of them it gives back what it
 * took and throws ActionLimitedError saying when the fullest budget has room again.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import { ACTION_LIMITS, ActionLimitedError, type ActionLimit, type LimitedAction, type LimitSubject } from '../../domain/actionLimits';
import { ATTEMPT_COUNTERS_TABLE, createAttemptLimiter } from '../accounts/attemptCounters';

export interface ActionLimiterOptions {
  /** ACTION_LIMITS unless a test passes small ones */
  limits?: Readonly<Record<LimitedAction, ActionLimit>>;
  /** keeps a test's counters apart from the rest of the run's ('action' by default) */
  keyPrefix?: string;
}

/** Who is acting, for the rules that count per person, workspace or address. */
export type ActionSubjects = Partial<Record<LimitSubject, string>>;

export class ActionLimiter {
  private readonly limits: Readonly<Record<LimitedAction, ActionLimit>>;
  private readonly keyPrefix: string;
  private readonly counters = new Map<string, Promise<RateLimiterPostgres>>();

  constructor(
    private readonly knex: Knex,
    options: ActionLimiterOptions = {},
  ) {
    this.limits = options.limits ?? ACTION_LIMITS;
    this.keyPrefix = options.keyPrefix ?? 'action';
  }

  private counter(action: LimitedAction, subject: LimitSubject): Promise<RateLimiterPostgres> {
    const name = `${this.keyPrefix}_${action}_${subject}`;
    let counter = this.counters.get(name);
    if (!counter) {
      const window = this.limits[action].rules[subject];
      if (!window) throw new Error(`${action} has no ${subject} rule`);
      counter = createAttemptLimiter(this.knex, ATTEMPT_COUNTERS_TABLE, name, { points: window.points, durationSeconds: window.durationSeconds, blockSeconds: 0 });
      counter.catch(() => this.counters.delete(name));
      this.counters.set(name, counter);
    }
    return counter;
  }

  /** Spends one point of each of the action's rules for the subjects given; refuses (429) when any is spent. */
  async take(action: LimitedAction, subjects: ActionSubjects): Promise<void> {
    const rules = Object.keys(this.limits[action].rules) as LimitSubject[];
    const taken: Array<() => Promise<unknown>> = [];
    let refusedFor = 0;
    for (const subject of rules) {
      const subjectId = subjects[subject];
      if (!subjectId) continue;
      // a digest, not the id or the address itself: the counters name nobody (an account's deletion leaves no row
      // that mentions it, and the table holds no client addresses)
      const key = createHash('sha256').update(subjectId).digest('base64url');
      const counter = await this.counter(action, subject);
      try {
        await counter.consume(key);
        taken.push(() => counter.reward(key, 1));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        // the refused point is not kept either: a refusal does not push the window's end
        await counter.reward(key, 1);
        refusedFor = Math.max(refusedFor, Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
      }
    }
    if (refusedFor > 0) {
      await Promise.all(taken.map((giveBack) => giveBack()));
      throw new ActionLimitedError(action, refusedFor);
    }
  }
}
