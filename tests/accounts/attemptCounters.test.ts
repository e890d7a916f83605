/**
 * Expired attempt counters (auth_rate_limits) are removed by the API process's background work, not by a timer of
 * rate-limiter-flexible's per limiter: those were never stopped when an app closed (one fired five minutes later in
 * whatever ran next in the process).
 */
import { randomUUID } from 'node:crypto';
import { buildAppDeps } from '../../api/deps';
import { SignInLimiter, DEFAULT_SIGN_IN_LIMITS } from '../../api/middleware/rateLimit';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ATTEMPT_COUNTERS_TABLE, EXPIRED_ATTEMPT_COUNTERS_SWEEP_EVERY_MS, removeExpiredAttemptCounters } from '../../services/accounts/attemptCounters';
import { closeTestKnex, testKnex } from '../support/db';

afterAll(async () => {
  await closeTestKnex();
});

const HOUR = 3_600_000;

it('removes the counters whose window ended over an hour ago, and only those', async () => {
  const tag = `expiry-${randomUUID()}`;
  const now = Date.parse('2026-06-01T12:00:00Z');
  const rows = [
    { key: `${tag}:old`, points: 3, expire: now - 2 * HOUR },
    { key: `${tag}:recent`, points: 3, expire: now - HOUR / 2 },
    { key: `${tag}:open`, points: 3, expire: now + HOUR },
    { key: `${tag}:forever`, points: 3, expire: null },
  ];
  await testKnex()(ATTEMPT_COUNTERS_TABLE).insert(rows);
  try {
    expect(await removeExpiredAttemptCounters(testKnex(), now)).toBeGreaterThanOrEqual(1);
    const left = await testKnex()(ATTEMPT_COUNTERS_TABLE).where('key', 'like', `${tag}:%`).orderBy('key').pluck('key');
    expect(left).toEqual([`${tag}:forever`, `${tag}:open`, `${tag}:recent`]);
  } finally {
    await testKnex()(ATTEMPT_COUNTERS_TABLE).where('key', 'like', `${tag}:%`).delete();
  }
});

it('a limiter in use starts no timer of its own; the API process sweeps on its background work, which its close stops', async () => {
  const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
  const setIntervalSpy = jest.spyOn(global, 'setInterval');
  const clearIntervalSpy = jest.spyOn(global, 'clearInterval');
  try {
    const limiter = new SignInLimiter(testKnex(), { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `t${randomUUID().slice(0, 8)}` });
    const attempt = await limiter.takeAttempt('203.0.113.9', `nobody-${randomUUID()}@example.test`);
    await limiter.recordFailure(attempt);
    // rate-limiter-flexible's own clean-up is a 5-minute setTimeout per limiter
    expect(setTimeoutSpy.mock.calls.filter(([, ms]) => ms === 300_000)).toEqual([]);

    const runtime = buildAppDeps({ ...loadConfig() }, logger);
    const sweeps = setIntervalSpy.mock.results.filter((_r, i) => setIntervalSpy.mock.calls[i][1] === EXPIRED_ATTEMPT_COUNTERS_SWEEP_EVERY_MS);
    expect(sweeps).toHaveLength(1);
    await runtime.close();
    expect(clearIntervalSpy.mock.calls.map(([timer]) => timer)).toContain(sweeps[0].value);
  } finally {
    jest.restoreAllMocks();
  }
});
