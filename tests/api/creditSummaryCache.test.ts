import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import {
  addCredits,
  adminAdjustCredits,
  checkLedgerInvariant,
  consumeReservation,
  deductCredits,
  getCreditSummary,
  releaseReservation,
  reserveCredits,
  type CreditSummary,
} from '../../services/billing/credits';
import { createCreditSummaryCache, type CreditSummaryCache } from '../../services/billing/creditSummaryCache';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { listenApplicationName } from '../../services/platform/listenConnection';

/**
 * Two API "processes" (two apps, each with its own summary cache and LISTEN connection, on pools of their own) and a
 * third pool that stands for a worker or the admin CLI. After any change commits - through either app, through the
 * ledger functions elsewhere, or in plain SQL - the very next summary from either app is the new one: no waiting.
 */
let knexA: Knex;
let knexB: Knex;
let elsewhere: Knex;
let cacheA: CreditSummaryCache;
let cacheB: CreditSummaryCache;
let a: TestServer;
let b: TestServer;

const databaseUrl = () => process.env.DATABASE_URL as string;

async function summaryFrom(server: TestServer, user: Pick<TestUser, 'token'>): Promise<CreditSummary> {
  const res = await request<{ success: boolean; data: CreditSummary }>(server.baseUrl, '/api/credits/summary', { token: user.token });
  if (res.status !== 200) throw new Error(`summary answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Both apps answer exactly what the database holds now. */
async function expectBothCurrent(user: TestUser): Promise<CreditSummary> {
  const truth = await getCreditSummary(elsewhere, user.id);
  expect(await summaryFrom(a, user)).toEqual(truth);
  expect(await summaryFrom(b, user)).toEqual(truth);
  return truth;
}

beforeAll(async () => {
  knexA = testKnex();
  knexB = connectDatabase(databaseUrl(), { min: 0, max: 4 });
  elsewhere = connectDatabase(databaseUrl(), { min: 0, max: 4 });
  cacheA = createCreditSummaryCache({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  cacheB = createCreditSummaryCache({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  a = await serve(createApp({ config: loadConfig(), knex: knexA, logger, creditSummaries: cacheA }));
  b = await serve(createApp({ config: loadConfig(), knex: knexB, logger, creditSummaries: cacheB }));
  await Promise.all([cacheA.ready(), cacheB.ready()]);
});

afterAll(async () => {
  await a.close();
  await b.close();
  await Promise.all([cacheA.close(), cacheB.close()]);
  await Promise.all([knexB.destroy(), elsewhere.destroy()]);
  await closeTestKnex();
});

describe('credit summary cache', () => {
  it('answers repeated requests from memory', async () => {
    const user = await createTestUser(a.baseUrl);
    const first = await summaryFrom(a, user);
    expect(first).toMatchObject({ credits: 5, reservedCredits: 0, availableCredits: 5 });
    const before = cacheA.stats();
    for (let i = 0; i < 5; i += 1) expect(await summaryFrom(a, user)).toEqual(first);
    const after = cacheA.stats();
    expect(after.hits - before.hits).toBe(5);
    expect(after.misses).toBe(before.misses);
  });

  it('every ledger change made elsewhere shows in both processes at once', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    const key = () => `test:${randomUUID()}`;

    await addCredits(elsewhere, { workspaceId: user.id, amount: 40, type: 'purchase', description: 'Pack', idempotencyKey: key() });
    expect(await expectBothCurrent(user)).toMatchObject({ credits: 45, totalCreditsPurchased: 40 });

    const reservation = await reserveCredits(elsewhere, { workspaceId: user.id, contentType: 'clip', idempotencyKey: key() });
    expect(await expectBothCurrent(user)).toMatchObject({ credits: 45, reservedCredits: reservation.amount, availableCredits: 45 - reservation.amount });

    await consumeReservation(elsewhere, { reservationId: reservation.id, description: 'Clip' });
    expect(await expectBothCurrent(user)).toMatchObject({ credits: 45 - reservation.amount, reservedCredits: 0, totalClipsUsed: 1 });

    const second = await reserveCredits(elsewhere, { workspaceId: user.id, contentType: 'image', idempotencyKey: key() });
    expect((await expectBothCurrent(user)).reservedCredits).toBe(second.amount);
    await releaseReservation(elsewhere, { reservationId: second.id });
    expect((await expectBothCurrent(user)).reservedCredits).toBe(0);

    // a refund takes credits back; an admin adjustment either way
    await deductCredits(elsewhere, { workspaceId: user.id, amount: 10, description: 'Refund', idempotencyKey: key() });
    await expectBothCurrent(user);
    await adminAdjustCredits(elsewhere, { workspaceId: user.id, amount: 7, reason: 'Goodwill', idempotencyKey: key(), admin: { id: user.id, email: user.email } });
    await expectBothCurrent(user);

    expect((await checkLedgerInvariant(elsewhere, user.id)).ok).toBe(true);
  });

  it('a change in plain SQL, outside the ledger code, shows at once too', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    await elsewhere.raw('update profiles set total_images_used = total_images_used + 3 where id = ?', [user.id]);
    expect((await expectBothCurrent(user)).totalImagesUsed).toBe(3);
    await elsewhere.raw('update profiles set total_images_used = 0 where id = ?', [user.id]);
    expect((await expectBothCurrent(user)).totalImagesUsed).toBe(0);
  });

  it('a change made through one app shows in the other at once', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    // committed by process A's own pool, then read from B
    await addCredits(knexA, { workspaceId: user.id, amount: 3, type: 'add', description: 'Top-up', idempotencyKey: `test:${randomUUID()}` });
    expect((await summaryFrom(b, user)).credits).toBe(8);
    expect((await summaryFrom(a, user)).credits).toBe(8);
  });

  it('under concurrent reads, each read after a commit sees at least that commit', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    let stop = false;
    let committed = 5;
    const violations: string[] = [];
    // readers keep the entries warm and the barriers busy, and check they never go backwards past a finished commit
    const reader = async (server: TestServer) => {
      while (!stop) {
        const floor = committed;
        const seen = (await summaryFrom(server, user)).credits;
        if (seen < floor) violations.push(`${server.baseUrl} answered ${seen} after ${floor} was committed`);
      }
    };
    const readers = [reader(a), reader(a), reader(b), reader(b)];
    try {
      for (let i = 0; i < 25; i += 1) {
        await addCredits(elsewhere, { workspaceId: user.id, amount: 1, type: 'add', description: 'Tick', idempotencyKey: `test:${randomUUID()}` });
        committed += 1;
        // the first read after the commit, from each process, without any wait
        const [fromA, fromB] = await Promise.all([summaryFrom(a, user), summaryFrom(b, user)]);
        expect([fromA.credits, fromB.credits]).toEqual([committed, committed]);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
    expect(violations).toEqual([]);
    expect(cacheA.stats().hits).toBeGreaterThan(0);
    expect(cacheB.stats().hits).toBeGreaterThan(0);
  });

  it('a read begun the moment a commit returns, before this process can have read the note, is current', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    let expected = 5;
    for (let i = 0; i < 40; i += 1) {
      // warm entry, then a commit elsewhere, then the lookup in the same tick as the commit's reply
      expect((await cacheB.get(knexB, user.id)).credits).toBe(expected);
      await addCredits(elsewhere, { workspaceId: user.id, amount: 1, type: 'add', description: 'Tick', idempotencyKey: `test:${randomUUID()}` });
      expected += 1;
      expect((await cacheB.get(knexB, user.id)).credits).toBe(expected);
    }
  });

  it('a removed profile is not answered from memory', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    await elsewhere('users').where({ id: user.id }).delete();
    // the profile went with the user: neither cache may still answer its summary
    await expect(cacheB.get(knexB, user.id)).rejects.toThrow();
    await expect(cacheA.get(knexA, user.id)).rejects.toThrow();
  });

  it('after its LISTEN connection is killed it reads the database, then caches again once back', async () => {
    const user = await createTestUser(a.baseUrl);
    await expectBothCurrent(user);
    await elsewhere.raw(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ? and datname = current_database()`, [listenApplicationName('credit summary cache')]);
    // a change while the caches are (or are becoming) blind
    await addCredits(elsewhere, { workspaceId: user.id, amount: 2, type: 'add', description: 'While down', idempotencyKey: `test:${randomUUID()}` });
    expect((await expectBothCurrent(user)).credits).toBe(7);
    // until both listen again, however long reconnecting takes on a busy machine (the bound only ends a hang)
    for (const deadline = Date.now() + 45_000; !(cacheA.stats().listening && cacheB.stats().listening) && Date.now() < deadline; ) {
      await summaryFrom(a, user);
      await summaryFrom(b, user);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(cacheA.stats().listening && cacheB.stats().listening).toBe(true);
    await addCredits(elsewhere, { workspaceId: user.id, amount: 1, type: 'add', description: 'Back', idempotencyKey: `test:${randomUUID()}` });
    expect((await expectBothCurrent(user)).credits).toBe(8);
    const hits = cacheB.stats().hits;
    await summaryFrom(b, user);
    expect(cacheB.stats().hits).toBe(hits + 1);
  });
});
