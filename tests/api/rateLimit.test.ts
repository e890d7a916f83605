import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { DEFAULT_SIGN_IN_LIMITS, tooManyAttemptsMessage, type SignInLimits } from '../../api/middleware/rateLimit';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { standStillDate } from '../support/clock';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
const servers: TestServer[] = [];

/**
 * An app with small budgets under a key prefix of its own: every test client is 127.0.0.1, so tests must
 * not spend the shared default budget of other test files. `trustProxyHops` 1 lets a test pick the client
 * address with X-Forwarded-For (as a proxy in front would set it).
 */
async function serveWithLimits(
  limits: Partial<SignInLimits>,
  { keyPrefix = `t${randomUUID().slice(0, 8)}`, trustProxyHops = 0 }: { keyPrefix?: string; trustProxyHops?: number } = {},
): Promise<TestServer> {
  const config = { ...loadConfig(), trustProxyHops };
  const server = await serve(createApp({ config, knex, logger, signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix, ...limits } }));
  servers.push(server);
  return server;
}

const signIn = (server: TestServer, email: string, password: string, forwardedFor?: string) =>
  request(server.baseUrl, '/api/auth/signin', { json: { email, password }, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

const nobody = () => `nobody-${randomUUID()}@example.test`;

/**
 * The limiters' windows (a 1 s slot, a 5 s delay, 10 and 15 minute locks) are measured with Date.now(): each test runs
 * on a Date that stands still unless the test moves it, so a busy machine cannot let a window lapse between two
 * attempts, and waiting one out is a jump of the clock. Timers and I/O stay real.
 */
beforeAll(() => {
  knex = testKnex();
});

beforeEach(() => {
  standStillDate();
});

afterEach(() => {
  jest.useRealTimers();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeTestKnex();
});

describe('sign-in limit per (account, IP)', () => {
  const perAccountAndIp = { points: 3, durationSeconds: 600, blockSeconds: 900 };

  it('locks the pair after its failures, even for the right password, and says when to retry', async () => {
    const server = await serveWithLimits({ perAccountAndIp });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(401);
    const refused = await signIn(server, user.email, user.password);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: 'Too many sign-in attempts. Please try again in 15 minutes.', code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    // another account from the same IP is not affected
    const other = await createTestUser(server.baseUrl);
    expect((await signIn(server, other.email, other.password)).status).toBe(200);
  });

  it("a locked pair's further attempts spend nothing of the IP's budget", async () => {
    const server = await serveWithLimits({ perAccountAndIp, perIp: { points: 5, durationSeconds: 600, blockSeconds: 600 } });
    const user = await createTestUser(server.baseUrl);
    const other = await createTestUser(server.baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(401);
    // the IP has spent 3 of 5; twenty refused attempts on the locked pair must not spend the rest
    for (let i = 0; i < 20; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(429);
    expect((await signIn(server, other.email, other.password)).status).toBe(200);
    // and the IP still has exactly its two failures left
    expect((await signIn(server, nobody(), 'wrong-pass-1')).status).toBe(401);
    expect((await signIn(server, nobody(), 'wrong-pass-1')).status).toBe(401);
    expect((await signIn(server, other.email, other.password)).status).toBe(429);
  });

  it('the owner signs in from another address while the pair elsewhere is locked', async () => {
    const server = await serveWithLimits(
      { perAccountAndIp, perAccount: { freeFailures: 3, windowSeconds: 600, baseDelaySeconds: 1, maxDelaySeconds: 30 } },
      { trustProxyHops: 1 },
    );
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1', '203.0.113.7')).status).toBe(401);
    expect((await signIn(server, user.email, user.password, '203.0.113.7')).status).toBe(429);
    // the account is past its free failures: one attempt per second at most, and the owner's is it
    expect((await signIn(server, user.email, user.password, '198.51.100.20')).status).toBe(200);
  });

  it('counts the e-mail whatever its case', async () => {
    const server = await serveWithLimits({ perAccountAndIp });
    const user = await createTestUser(server.baseUrl);
    for (const email of [user.email, user.email.toUpperCase(), ` ${user.email}`]) await signIn(server, email, 'wrong-pass-1');
    expect((await signIn(server, user.email, user.password)).status).toBe(429);
  });

  it('is shared by API processes: a second app on the same database sees the count', async () => {
    const keyPrefix = `shared${randomUUID().slice(0, 8)}`;
    const first = await serveWithLimits({ perAccountAndIp }, { keyPrefix });
    const second = await serveWithLimits({ perAccountAndIp }, { keyPrefix });
    const user = await createTestUser(first.baseUrl);
    await signIn(first, user.email, 'wrong-pass-1');
    await signIn(second, user.email, 'wrong-pass-1');
    await signIn(first, user.email, 'wrong-pass-1');
    expect((await signIn(second, user.email, user.password)).status).toBe(429);
  });

  it('resets the count after a successful sign-in', async () => {
    const server = await serveWithLimits({ perAccountAndIp });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 2; i += 1) await signIn(server, user.email, 'wrong-pass-1');
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(401);
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });

  it('lets no more parallel attempts through than the budget', async () => {
    const server = await serveWithLimits({ perAccountAndIp });
    const user = await createTestUser(server.baseUrl);
    const answers = await Promise.all(Array.from({ length: 8 }, () => signIn(server, user.email, 'wrong-pass-1')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('does not count malformed requests', async () => {
    const server = await serveWithLimits({ perAccountAndIp });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 4; i += 1) {
      const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: 'x', extra: true } });
      expect(res.status).toBe(400);
    }
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });
});

describe('sign-in limit per IP', () => {
  it('locks an IP that failed across many accounts; other IPs are unaffected', async () => {
    const server = await serveWithLimits({ perIp: { points: 4, durationSeconds: 600, blockSeconds: 600 } }, { trustProxyHops: 1 });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 4; i += 1) expect((await signIn(server, nobody(), 'wrong-pass-1', '203.0.113.8')).status).toBe(401);
    const refused = await signIn(server, user.email, user.password, '203.0.113.8');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('Too many sign-in attempts. Please try again in 10 minutes.');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(590);
    expect((await signIn(server, user.email, user.password, '198.51.100.21')).status).toBe(200);
  });

  it("a locked IP's refusals spend nothing of the account's budget", async () => {
    const server = await serveWithLimits(
      {
        perIp: { points: 2, durationSeconds: 600, blockSeconds: 600 },
        perAccount: { freeFailures: 3, windowSeconds: 600, baseDelaySeconds: 5, maxDelaySeconds: 30 },
      },
      { trustProxyHops: 1 },
    );
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 2; i += 1) expect((await signIn(server, nobody(), 'wrong-pass-1', '203.0.113.9')).status).toBe(401);
    for (let i = 0; i < 5; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1', '203.0.113.9')).status).toBe(429);
    // those refusals were no failures of the account: from elsewhere its three free failures are all left ...
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1', `198.51.100.${40 + i}`)).status).toBe(401);
    // ... and only then the slowdown starts: one attempt, then a wait
    expect((await signIn(server, user.email, 'wrong-pass-1', '198.51.100.50')).status).toBe(401);
    const slowed = await signIn(server, user.email, 'wrong-pass-1', '198.51.100.51');
    expect(slowed.status).toBe(429);
    expect(Number(slowed.headers.get('retry-after'))).toBeLessThanOrEqual(5);
  });

  it('does not count successful sign-ins against the IP', async () => {
    const server = await serveWithLimits({ perIp: { points: 2, durationSeconds: 600, blockSeconds: 600 } });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 5; i += 1) expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });
});

describe('sign-in slowdown per account across addresses', () => {
  it('after the free failures, one attempt per growing delay; the owner rides it out', async () => {
    const server = await serveWithLimits(
      { perAccount: { freeFailures: 2, windowSeconds: 600, baseDelaySeconds: 1, maxDelaySeconds: 4 } },
      { trustProxyHops: 1 },
    );
    const user = await createTestUser(server.baseUrl);
    // a distributed guesser: every attempt from a new address, so no pair and no IP is ever locked
    expect((await signIn(server, user.email, 'wrong-pass-1', '192.0.2.1')).status).toBe(401);
    expect((await signIn(server, user.email, 'wrong-pass-1', '192.0.2.2')).status).toBe(401);
    // past the free failures: this attempt takes the 1 s slot ...
    expect((await signIn(server, user.email, 'wrong-pass-1', '192.0.2.3')).status).toBe(401);
    // ... so the next one, from anywhere, waits and is told how long
    const refused = await signIn(server, user.email, user.password, '192.0.2.4');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Too many sign-in attempts\. Please try again in \d seconds?\.$/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    // the delay passes: the clock moves past it, no real wait
    jest.setSystemTime(Date.now() + retryAfter * 1000 + 100);
    // the owner, from an address that never failed, signs in once the delay has passed
    expect((await signIn(server, user.email, user.password, '192.0.2.4')).status).toBe(200);
  });
});

describe('client address', () => {
  const perAccountAndIp = { points: 3, durationSeconds: 600, blockSeconds: 600 };

  it('TRUST_PROXY off: X-Forwarded-For is ignored, every attempt is the socket address', async () => {
    const server = await serveWithLimits({ perAccountAndIp }, { trustProxyHops: 0 });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1', `203.0.113.${10 + i}`)).status).toBe(401);
    expect((await signIn(server, user.email, user.password, '203.0.113.99')).status).toBe(429);
  });

  it("TRUST_PROXY on: the proxy's entry of X-Forwarded-For is the address, not one the client wrote", async () => {
    const server = await serveWithLimits({ perAccountAndIp }, { trustProxyHops: 1 });
    const user = await createTestUser(server.baseUrl);
    // the client prepends made-up addresses; the proxy appends the real one (198.51.100.30)
    for (let i = 0; i < 3; i += 1) {
      expect((await signIn(server, user.email, 'wrong-pass-1', `10.9.9.${i}, 198.51.100.30`)).status).toBe(401);
    }
    expect((await signIn(server, user.email, user.password, '10.9.9.200, 198.51.100.30')).status).toBe(429);
    // another real address is another pair
    expect((await signIn(server, user.email, user.password, '10.9.9.1, 198.51.100.31')).status).toBe(200);
  });
});

describe('TRUST_PROXY', () => {
  it('is off unless set; "true" trusts one proxy hop, a number that many; anything else refuses to start', () => {
    const secret = { SIGNING_SECRET: process.env.SIGNING_SECRET };
    expect(loadConfig({ ...secret }).trustProxyHops).toBe(0);
    expect(loadConfig({ ...secret, TRUST_PROXY: 'false' }).trustProxyHops).toBe(0);
    expect(loadConfig({ ...secret, TRUST_PROXY: 'true' }).trustProxyHops).toBe(1);
    expect(loadConfig({ ...secret, TRUST_PROXY: '2' }).trustProxyHops).toBe(2);
    expect(() => loadConfig({ ...secret, TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
  });

  it('sets the Koa proxy option and counts only the trusted hops of X-Forwarded-For', () => {
    const off = createApp({ config: { ...loadConfig(), trustProxyHops: 0 }, knex, logger });
    const on = createApp({ config: { ...loadConfig(), trustProxyHops: 2 }, knex, logger });
    expect([off.proxy, on.proxy, on.maxIpsCount]).toEqual([false, true, 2]);
  });
});

describe('refusal messages', () => {
  it('say when to retry in seconds, minutes or hours', () => {
    expect(tooManyAttemptsMessage(1)).toBe('Too many sign-in attempts. Please try again in 1 second.');
    expect(tooManyAttemptsMessage(29_500)).toBe('Too many sign-in attempts. Please try again in 30 seconds.');
    expect(tooManyAttemptsMessage(15 * 60_000)).toBe('Too many sign-in attempts. Please try again in 15 minutes.');
    expect(tooManyAttemptsMessage(60 * 60_000)).toBe('Too many sign-in attempts. Please try again in 60 minutes.');
    expect(tooManyAttemptsMessage(24 * 3600_000)).toBe('Too many sign-in attempts. Please try again in 24 hours.');
  });
});
