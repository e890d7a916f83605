/**
 * The clip workflow's submit and finish steps retry for longer than a database breaker stays open: under load the
 * worker's breaker opens for CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs and refuses every query at once, and a step
 * whose attempts all fall inside that window fails the clip (the capacity bench saw it with 5 attempts, 30 s).
 */
import { CLIP_STEP_RETRY, retryWaitMs } from '../../domain/clipGeneration';
import { CIRCUIT_BREAKER_DEFAULTS } from '../../domain/constants';

it('waits longer between its first and last attempt than the database breaker stays open', () => {
  expect(retryWaitMs(CLIP_STEP_RETRY)).toBe(2_000 + 4_000 + 8_000 + 16_000 + 30_000 + 30_000 + 30_000);
  expect(retryWaitMs(CLIP_STEP_RETRY)).toBeGreaterThan(CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs);
});

it('adds up the backoff as Temporal schedules it: doubling from the first interval, capped at the maximum', () => {
  expect(retryWaitMs({ initialIntervalMs: 2_000, backoffCoefficient: 2, maximumIntervalMs: 30_000, maximumAttempts: 5 })).toBe(30_000);
  expect(retryWaitMs({ initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 15_000, maximumAttempts: 1 })).toBe(0);
});
