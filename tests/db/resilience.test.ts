import type { Knex } from 'knex';
import knexFactory from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase, knexConfig } from '../../db/connection';
import { DATABASE_BREAKERS, DATABASE_TIMEOUTS, breakerFor, databaseGuardOf, DatabaseUnavailableError } from '../../db/resilience';
import { CIRCUIT_BREAKER_DEFAULTS } from '../../domain/constants';
import { createTestUser, type TestUser } from '../support/accounts';
import { request, serve, type TestServer } from '../support/http';

const url = () => {
  const value = process.env.DATABASE_URL;
  if (!value) throw new Error('DATABASE_URL is not set: run through jest');
  return value;
};

/** A second connection that holds a row lock until released: the app's statements on that row wait for it. */
async function holdRowLock(table: string, id: string): Promise<{ release: () => Promise<void> }> {
  const locker = knexFactory({ client: 'pg', connection: url(), pool: { min: 0, max: 1 } });
  const trx = await locker.transaction();
  await trx(table).where({ id }).forUpdate().first();
  return {
    release: async () => {
      await trx.rollback();
      await locker.destroy();
    },
  };
}

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('the pool settings', () => {
  it('carries the spec constants: 15 s statement timeout, 30 s to connect and to get a connection', () => {
    const config = knexConfig('postgres://example/db');
    expect(config.connection).toMatchObject({ statement_timeout: 15_000, connectionTimeoutMillis: 30_000 });
    expect(config.acquireConnectionTimeout).toBe(30_000);
    expect(DATABASE_TIMEOUTS).toEqual({ connectionCheckMs: 5_000, queryMs: 15_000, connectionMs: 30_000 });
    // the spec's database breaker figures are call timeouts; open time, window and trials are the breaker defaults
    expect(DATABASE_BREAKERS).toEqual({
      credits: { failureThreshold: 10, callTimeoutMs: 30_000 },
      userData: { failureThreshold: 10, callTimeoutMs: 20_000 },
      other: { failureThreshold: 10, callTimeoutMs: 15_000 },
    });
    expect(CIRCUIT_BREAKER_DEFAULTS).toMatchObject({ resetTimeoutMs: 60_000, windowMs: 300_000, halfOpenMaxCalls: 3 });
  });

  it("sets PostgreSQL's statement_timeout on every connection of the app's pool, and none for migrations", async () => {
    const app = connectDatabase(url(), { min: 0, max: 1 });
    const migrations = connectDatabase(url(), { min: 0, max: 1 }, { queryTimeoutMs: 0, breakers: false });
    try {
      expect((await app.raw('show statement_timeout')).rows[0].statement_timeout).toBe('15s');
      expect((await migrations.raw('show statement_timeout')).rows[0].statement_timeout).toBe('0');
    } finally {
      await Promise.all([app.destroy(), migrations.destroy()]);
    }
  });

  it('sorts statements to the breaker of the data they touch', () => {
    expect(breakerFor('credit_reservations')).toBe('credits');
    expect(breakerFor('select * from "profiles" join "credit_transactions" on true')).toBe('credits');
    expect(breakerFor('profiles')).toBe('userData');
    expect(breakerFor('select 1')).toBe('other');
    expect(breakerFor('pending_approvals')).toBe('other');
  });
});

describe('a stalled database seen through the API', () => {
  const QUERY_TIMEOUT_MS = 400;
  let knex: Knex;
  let server: TestServer;
  let user: TestUser;
  const clock = fakeClock();

  beforeAll(async () => {
    knex = connectDatabase(url(), { min: 0, max: 10 }, { queryTimeoutMs: QUERY_TIMEOUT_MS, breaker: { now: clock.now } });
    server = await serve(createApp({ config: loadConfig(), knex, logger }));
    user = await createTestUser(server.baseUrl, { name: 'Before' });
  });

  afterAll(async () => {
    await server.close();
    await knex.destroy();
  });

  const rename = (name: string) => request(server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json: { name } });

  it("answers 503 'Query timeout after <ms>ms' while a lock stalls the statement, then serves the next request", async () => {
    const lock = await holdRowLock('profiles', user.id);
    let stalled;
    try {
      stalled = await rename('During the lock');
    } finally {
      await lock.release();
    }
    expect(stalled.status).toBe(503);
    expect(stalled.body).toEqual({ success: false, error: `Query timeout after ${QUERY_TIMEOUT_MS}ms`, code: 'QUERY_TIMEOUT' });
    expect(stalled.headers.get('retry-after')).toBe('5');
    expect((await knex('profiles').where({ id: user.id }).first()).name).toBe('Before');

    const next = await rename('After the lock');
    expect(next.status).toBe(200);
    expect(next.body.profile.name).toBe('After the lock');
  });

  it('opens the user-data breaker after 10 failures: 503 at once, then closed again after the 60 s reset', async () => {
    const guard = databaseGuardOf(knex)!;
    expect(guard.states().userData).toBe('CLOSED');
    // the first test's timeout already counts as one failure within the window
    const lock = await holdRowLock('profiles', user.id);
    try {
      for (let i = 0; guard.states().userData === 'CLOSED'; i++) {
        expect(i).toBeLessThan(10);
        const res = await rename(`stalled ${i}`);
        expect(res.status).toBe(503);
        expect(res.body.code).toBe('QUERY_TIMEOUT');
      }
    } finally {
      await lock.release();
    }
    expect(guard.states()).toEqual({ credits: 'CLOSED', userData: 'OPEN', other: 'CLOSED' });

    // the database is fine again, but the open breaker answers without asking it
    const refused = await rename('while open');
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('CIRCUIT_OPEN');
    expect(refused.body.error).toContain('"database:userData" is OPEN');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(503);
    // another pool (its own breakers) sees the database serving all along
    const other = connectDatabase(url(), { min: 0, max: 1 });
    try {
      expect((await other('profiles').where({ id: user.id }).first()).name).toBe('After the lock');
    } finally {
      await other.destroy();
    }

    clock.advance(59_000);
    expect(guard.states().userData).toBe('OPEN');
    clock.advance(1_000);
    expect(guard.states().userData).toBe('HALF_OPEN');
    const recovered = await rename('Recovered');
    expect(recovered.status).toBe(200);
    expect(guard.states().userData).toBe('CLOSED');
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.name).toBe('Recovered');
  });
});

describe('the credits breaker', () => {
  it('opens after 10 statement timeouts on credit tables and stays open for 60 s while the others serve', async () => {
    const clock = fakeClock();
    const knex = connectDatabase(url(), { min: 0, max: 4 }, { queryTimeoutMs: 150, breaker: { now: clock.now } });
    const guard = databaseGuardOf(knex)!;
    try {
      for (let i = 0; i < 10; i++) {
        const error = await knex.raw('select pg_sleep(1) from (select 1 from credit_transactions limit 1) t union all select pg_sleep(1)').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DatabaseUnavailableError);
        expect((error as Error).message).toBe('Query timeout after 150ms');
      }
      expect(guard.states()).toEqual({ credits: 'OPEN', userData: 'CLOSED', other: 'CLOSED' });
      // refused by the open breaker, not run: a statement that ran would have answered or hit the 150 ms timeout
      const open = await knex('credit_transactions').count().catch((e: unknown) => e);
      expect(open).toMatchObject({ code: 'CIRCUIT_OPEN', status: 503, retryAfterSeconds: 60 });
      expect(await knex('profiles').count()).toHaveLength(1);

      clock.advance(CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs - 1);
      expect(guard.states().credits).toBe('OPEN');
      clock.advance(1);
      expect(guard.states().credits).toBe('HALF_OPEN');
      await knex('credit_transactions').count();
      await knex('credit_reservations').count();
      expect(guard.states().credits).toBe('CLOSED');
    } finally {
      await knex.destroy();
    }
  });

  it('leaves the breaker alone for a caller mistake (a value PostgreSQL refuses is no database failure)', async () => {
    const knex = connectDatabase(url(), { min: 0, max: 2 }, { breaker: { failureThreshold: 2 } });
    try {
      for (let i = 0; i < 3; i++) {
        await expect(knex.raw('select count(*) from credit_purchases')).resolves.toBeDefined();
        await expect(knex.raw("select 'not a uuid'::uuid, count(*) from credit_purchases")).rejects.toMatchObject({ code: '22P02' });
      }
      expect(databaseGuardOf(knex)!.states().credits).toBe('CLOSED');
    } finally {
      await knex.destroy();
    }
  });
});

describe("the breakers' call timeouts", () => {
  it("fail a call that outlasts its breaker's timeout with 'timeout after <ms>ms', each breaker with its own figure, and count it", async () => {
    // the statement timeout is far away, so only the breaker's timer can end these calls
    const knex = connectDatabase(url(), { min: 0, max: 4 }, { queryTimeoutMs: 10_000, breaker: { callTimeoutMs: 200, failureThreshold: 3 } });
    const guard = databaseGuardOf(knex)!;
    try {
      // the statement sleeps far past the breaker's 200 ms, so its answer can only be the breaker's timeout
      const error = await knex.raw('select pg_sleep(3), (select count(*) from credit_transactions)').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(error).toMatchObject({ code: 'CIRCUIT_TIMEOUT', status: 503, message: 'Circuit breaker "database:credits": timeout after 200ms' });
      expect(guard.breakers.credits.recentFailures).toBe(1);
      expect(guard.breakers.other.recentFailures).toBe(0);
    } finally {
      await knex.destroy();
    }
  });

  it('count no call that ends inside its timeout as a failure', async () => {
    // a timeout no busy machine reaches: only the outcome of a call that ended in time is tested
    const knex = connectDatabase(url(), { min: 0, max: 2 }, { queryTimeoutMs: 10_000, breaker: { callTimeoutMs: 30_000, failureThreshold: 3 } });
    const guard = databaseGuardOf(knex)!;
    try {
      await expect(knex.raw('select pg_sleep(0.05)')).resolves.toBeDefined();
      await expect(knex.raw('select count(*) from credit_transactions')).resolves.toBeDefined();
      expect(guard.breakers.other.recentFailures).toBe(0);
      expect(guard.breakers.credits.recentFailures).toBe(0);
    } finally {
      await knex.destroy();
    }
  });

  it('gives each breaker the spec figure when none is injected', async () => {
    const knex = connectDatabase(url(), { min: 0, max: 1 });
    try {
      const figures = Object.fromEntries(
        Object.entries(databaseGuardOf(knex)!.breakers).map(([name, breaker]) => [name, (breaker as unknown as { options: { callTimeoutMs: number; failureThreshold: number; resetTimeoutMs: number } }).options]),
      );
      expect(figures.credits).toMatchObject({ callTimeoutMs: 30_000, failureThreshold: 10, resetTimeoutMs: 60_000 });
      expect(figures.userData).toMatchObject({ callTimeoutMs: 20_000, failureThreshold: 10, resetTimeoutMs: 60_000 });
      expect(figures.other).toMatchObject({ callTimeoutMs: 15_000, failureThreshold: 10, resetTimeoutMs: 60_000 });
    } finally {
      await knex.destroy();
    }
  });
});
