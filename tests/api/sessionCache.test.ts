import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createSessionCache, type SessionCache } from '../../services/accounts/sessionCache';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { listenApplicationName } from '../../services/platform/listenConnection';

/**
 * Two API "processes" (two apps, each with its own session cache and LISTEN connection) on one database: a change
 * made through one, or straight in the database as the admin CLI does, must reach the other's cache.
 */
let knex: Knex;
let cacheA: SessionCache;
let cacheB: SessionCache;
let a: TestServer;
let b: TestServer;

const databaseUrl = () => process.env.DATABASE_URL as string;

/** Polls `check` until it holds; the overall bound is generous (a reconnect on a busy machine is slow), not a timing. */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

const me = (server: TestServer, user: Pick<TestUser, 'token'>) => request(server.baseUrl, '/api/credits/summary', { token: user.token });

beforeAll(async () => {
  knex = testKnex();
  cacheA = createSessionCache({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  cacheB = createSessionCache({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  a = await serve(createApp({ config: loadConfig(), knex, logger, sessions: cacheA }));
  b = await serve(createApp({ config: loadConfig(), knex, logger, sessions: cacheB }));
  await Promise.all([cacheA.ready(), cacheB.ready()]);
});

afterAll(async () => {
  await a.close();
  await b.close();
  await Promise.all([cacheA.close(), cacheB.close()]);
  await closeTestKnex();
});

describe('session cache', () => {
  it('answers repeated requests from memory', async () => {
    const user = await createTestUser(a.baseUrl);
    expect((await me(a, user)).status).toBe(200);
    const before = cacheA.stats();
    for (let i = 0; i < 5; i += 1) expect((await me(a, user)).status).toBe(200);
    const after = cacheA.stats();
    expect(after.hits - before.hits).toBe(5);
    expect(after.misses).toBe(before.misses);
  });

  it('a sign-out is refused at once by the process that signed out and, after the note, by the other', async () => {
    const user = await createTestUser(a.baseUrl);
    expect((await me(a, user)).status).toBe(200);
    expect((await me(b, user)).status).toBe(200);
    expect((await request(a.baseUrl, '/api/auth/signout', { token: user.token, json: {} })).status).toBe(200);
    expect((await me(a, user)).status).toBe(401);
    await eventually(async () => (await me(b, user)).status === 401, 'process B refuses the ended session');
  });

  it('a password change ends the other sessions everywhere and keeps the one that made it', async () => {
    const user = await createTestUser(a.baseUrl);
    const signIn = await request(a.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const other = { token: signIn.body.token as string };
    expect((await me(a, other)).status).toBe(200);
    expect((await me(b, other)).status).toBe(200);
    const changed = await request(a.baseUrl, '/api/profile/password', { token: user.token, json: { currentPassword: user.password, newPassword: 'violet-harbour-lantern-42', confirmPassword: 'violet-harbour-lantern-42' } });
    expect(changed.status).toBe(200);
    expect((await me(a, other)).status).toBe(401);
    await eventually(async () => (await me(b, other)).status === 401, 'process B refuses the other session');
    expect((await me(a, user)).status).toBe(200);
    expect((await me(b, user)).status).toBe(200);
  });

  it('a role granted straight in the database (the admin CLI) is seen without a new sign-in', async () => {
    const user = await createTestUser(a.baseUrl);
    const admin = (server: TestServer) => request(server.baseUrl, '/api/admin/users?email=nobody', { token: user.token });
    expect((await admin(a)).status).toBe(403);
    expect((await admin(b)).status).toBe(403);
    await knex('users').where({ id: user.id }).update({ role: 'admin' });
    await eventually(async () => (await admin(a)).status !== 403 && (await admin(b)).status !== 403, 'both processes see the admin role');
    await knex('users').where({ id: user.id }).update({ role: 'user' });
    await eventually(async () => (await admin(a)).status === 403 && (await admin(b)).status === 403, 'both processes see the role revoked');
  });

  it('a session removed or expired in the database is refused (row deleted, or expiry moved into the past)', async () => {
    const gone = await createTestUser(a.baseUrl);
    const expired = await createTestUser(a.baseUrl);
    for (const u of [gone, expired]) expect((await me(b, u)).status).toBe(200);
    await knex('sessions').where({ user_id: gone.id }).delete();
    await knex('sessions').where({ user_id: expired.id }).update({ expires_at: new Date(Date.now() - 1000) });
    await eventually(async () => (await me(b, gone)).status === 401 && (await me(b, expired)).status === 401, 'both refused');
  });

  it('while its LISTEN connection is down the cache is not trusted, and it listens again afterwards', async () => {
    const user = await createTestUser(a.baseUrl);
    expect((await me(a, user)).status).toBe(200);
    await knex.raw("select pg_terminate_backend(pid) from pg_stat_activity where application_name = ? and datname = current_database()", [listenApplicationName('session cache')]);
    await eventually(async () => !cacheA.stats().listening && !cacheB.stats().listening, 'both caches notice the lost connection');
    // a change made while nobody listens: a trusted stale entry would still let this token in
    await knex('sessions').where({ user_id: user.id }).delete();
    expect((await me(a, user)).status).toBe(401);
    const fresh = await createTestUser(a.baseUrl);
    await eventually(async () => {
      await me(a, fresh);
      return cacheA.stats().listening;
    }, 'cache A listens again');
    const before = cacheA.stats().hits;
    expect((await me(a, fresh)).status).toBe(200);
    expect((await me(a, fresh)).status).toBe(200);
    expect(cacheA.stats().hits).toBeGreaterThan(before);
  });

  it('an entry is trusted for at most its time to live', async () => {
    let now = Date.now();
    const cache = createSessionCache({ databaseUrl: databaseUrl(), logger, ttlMs: 1000, now: () => now });
    try {
      await cache.ready();
      const user = await createTestUser(a.baseUrl);
      expect(await cache.lookup(knex, user.token)).toMatchObject({ id: user.id });
      expect(await cache.lookup(knex, user.token)).toMatchObject({ id: user.id });
      expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
      now += 1001;
      expect(await cache.lookup(knex, user.token)).toMatchObject({ id: user.id });
      expect(cache.stats()).toMatchObject({ hits: 1, misses: 2 });
      expect(await cache.lookup(knex, 'not-a-token')).toBeNull();
    } finally {
      await cache.close();
    }
  });
});
