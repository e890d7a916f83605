import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from '../../api/middleware/rateLimit';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
const servers: TestServer[] = [];

/**
 * An app with small budgets under a key prefix of its own: every test client is 127.0.0.1, so tests must
 * not spend the shared default budget of other test files.
 */
async function serveWithLimits(limits: Partial<SignInLimits>, keyPrefix = `t${randomUUID().slice(0, 8)}`): Promise<TestServer> {
  const server = await serve(createApp({ config: loadConfig(), knex, logger, signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix, ...limits } }));
  servers.push(server);
  return server;
}

const signIn = (server: TestServer, email: string, password: string) => request(server.baseUrl, '/api/auth/signin', { json: { email, password } });

beforeAll(() => {
  knex = testKnex();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeTestKnex();
});

describe('sign-in rate limit per account', () => {
  const perAccount = { points: 3, durationSeconds: 600, blockSeconds: 900 };

  it('refuses with 429 once the failures are spent, even with the right password, and says when to retry', async () => {
    const server = await serveWithLimits({ perAccount });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(401);
    const refused = await signIn(server, user.email, user.password);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: 'Too many sign-in attempts. Please try again in 15 minutes.', code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
    // another account from the same IP is not affected
    const other = await createTestUser(server.baseUrl);
    expect((await signIn(server, other.email, other.password)).status).toBe(200);
  });

  it('counts the e-mail whatever its case', async () => {
    const server = await serveWithLimits({ perAccount });
    const user = await createTestUser(server.baseUrl);
    for (const email of [user.email, user.email.toUpperCase(), ` ${user.email}`]) await signIn(server, email, 'wrong-pass-1');
    expect((await signIn(server, user.email, user.password)).status).toBe(429);
  });

  it('is shared by API processes: a second app on the same database sees the count', async () => {
    const keyPrefix = `shared${randomUUID().slice(0, 8)}`;
    const first = await serveWithLimits({ perAccount }, keyPrefix);
    const second = await serveWithLimits({ perAccount }, keyPrefix);
    const user = await createTestUser(first.baseUrl);
    await signIn(first, user.email, 'wrong-pass-1');
    await signIn(second, user.email, 'wrong-pass-1');
    await signIn(first, user.email, 'wrong-pass-1');
    expect((await signIn(second, user.email, user.password)).status).toBe(429);
  });

  it('resets the count after a successful sign-in', async () => {
    const server = await serveWithLimits({ perAccount });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 2; i += 1) await signIn(server, user.email, 'wrong-pass-1');
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await signIn(server, user.email, 'wrong-pass-1')).status).toBe(401);
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });

  it('lets no more parallel attempts through than the budget', async () => {
    const server = await serveWithLimits({ perAccount });
    const user = await createTestUser(server.baseUrl);
    const answers = await Promise.all(Array.from({ length: 8 }, () => signIn(server, user.email, 'wrong-pass-1')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('does not count malformed requests', async () => {
    const server = await serveWithLimits({ perAccount });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 4; i += 1) {
      const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: 'x', extra: true } });
      expect(res.status).toBe(400);
    }
    expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });
});

describe('sign-in rate limit per IP', () => {
  it('refuses an IP that spent its budget across many accounts', async () => {
    const server = await serveWithLimits({ perIp: { points: 4, durationSeconds: 600, blockSeconds: 600 } });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 4; i += 1) {
      expect((await signIn(server, `nobody-${randomUUID()}@example.test`, 'wrong-pass-1')).status).toBe(401);
    }
    const refused = await signIn(server, user.email, user.password);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('Too many sign-in attempts. Please try again in 10 minutes.');
  });

  it('does not count successful sign-ins against the IP', async () => {
    const server = await serveWithLimits({ perIp: { points: 2, durationSeconds: 600, blockSeconds: 600 } });
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 5; i += 1) expect((await signIn(server, user.email, user.password)).status).toBe(200);
  });
});
