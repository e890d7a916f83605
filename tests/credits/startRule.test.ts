import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { countedTowardsCap, type ApprovalStats } from '../../domain/approvals';
import { InsufficientCreditsError, checkAndReserve, reserveCredits } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let server: TestServer;

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

async function canCreate(user: TestUser, type: 'image' | 'clip'): Promise<Record<string, unknown>> {
  const res = await request(server.baseUrl, `/api/credits/can-create?type=${type}`, { token: user.token });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function stats(user: TestUser): Promise<Record<string, number>> {
  const res = await request(server.baseUrl, '/api/approvals/stats', { token: user.token });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** A pending image holding its 1-credit reservation, as a finished generation leaves it. */
function pendingImage(user: TestUser): Promise<unknown> {
  return insertPendingApproval(knex, { userId: user.id, contentType: 'image', cost: 1, reserve: true });
}

describe('the start rule counts each pending approval once', () => {
  it('lets 5 credits have 5 pending images and refuses the 6th', async () => {
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < 5; i += 1) {
      expect(await canCreate(user, 'image')).toMatchObject({ canCreate: true, limit: 5, pendingCount: i, available: 5 - i });
      await pendingImage(user);
    }
    expect(await canCreate(user, 'image')).toMatchObject({ canCreate: false, reason: 'pending_cost', limit: 5, pendingCount: 5, available: 0 });
    await expect(checkAndReserve(knex, { workspaceId: user.id, contentType: 'image', idempotencyKey: `five:${user.id}:6` })).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect(await stats(user)).toEqual({ pending_count: 5, limit: 5, total_pending_cost: 5, in_progress_count: 0, in_progress_cost: 0 });
  });

  it('allows a clip on 5 credits with one pending image', async () => {
    const user = await createTestUser(server.baseUrl);
    await pendingImage(user);
    expect(await canCreate(user, 'clip')).toMatchObject({ canCreate: true, reason: 'ok', available: 4, limit: 5, pendingCount: 1, pendingCost: 1 });
    await expect(checkAndReserve(knex, { workspaceId: user.id, contentType: 'clip', idempotencyKey: `clip:${user.id}` })).resolves.toMatchObject({ status: 'active', amount: 4 });
  });

  it("answers 'pending_cost' (the amber notice) when the balance would cover the cost but pending approvals hold it", async () => {
    const user = await createTestUser(server.baseUrl);
    await pendingImage(user);
    await pendingImage(user);
    expect(await canCreate(user, 'clip')).toMatchObject({ canCreate: false, reason: 'pending_cost', available: 3, pendingCost: 2 });
    const res = await request(server.baseUrl, '/api/credits/can-create?type=image', { token: user.token });
    expect(res.body.data).toMatchObject({ canCreate: true });
  });

  it('leaves items past their deadline out of the count, in the rule and in the stats alike', async () => {
    const user = await createTestUser(server.baseUrl);
    const expired = await insertPendingApproval(knex, { userId: user.id, contentType: 'assembly' });
    await pendingImage(user);
    await knex('pending_approvals').where({ id: expired.id }).update({ approval_deadline: new Date(Date.now() - 1000) });
    expect(await canCreate(user, 'image')).toMatchObject({ pendingCount: 1, pendingCost: 1, limit: 5 });
    expect(await stats(user)).toEqual({ pending_count: 1, limit: 5, total_pending_cost: 1, in_progress_count: 0, in_progress_cost: 0 });
  });

  it('gives the approval stats the queue (the badge) and, apart, the generations still running, which the rule counts too', async () => {
    const user = await createTestUser(server.baseUrl);
    await pendingImage(user);
    // a clip rendering: its reservation is out, no approval holds it yet
    await reserveCredits(knex, { workspaceId: user.id, contentType: 'clip', idempotencyKey: `running:${user.id}` });
    const rule = await canCreate(user, 'image');
    expect(rule).toMatchObject({ canCreate: false, reason: 'pending_cost', available: 0, pendingCount: 2, pendingCost: 5 });
    // the queue holds one image (the badge says 1); the running clip is counted apart
    expect(await stats(user)).toEqual({ pending_count: 1, limit: rule.limit, total_pending_cost: 1, in_progress_count: 1, in_progress_cost: 4 });
    const s0 = await stats(user);
    expect({ count: s0.pending_count + s0.in_progress_count, cost: s0.total_pending_cost + s0.in_progress_cost }).toEqual({ count: rule.pendingCount, cost: rule.pendingCost });

    // on a bigger balance the running clip still counts towards the cap, so the overlay shows when the server refuses
    const rich = await createTestUser(server.baseUrl);
    for (let i = 0; i < 4; i += 1) await insertPendingApproval(knex, { userId: rich.id, contentType: 'assembly' });
    await reserveCredits(knex, { workspaceId: rich.id, contentType: 'image', idempotencyKey: `running:${rich.id}` });
    const capped = await canCreate(rich, 'image');
    expect(capped).toMatchObject({ canCreate: false, reason: 'pending_limit', pendingCount: 5, limit: 5 });
    const s = await stats(rich);
    expect(s).toEqual({ pending_count: 4, limit: 5, total_pending_cost: 0, in_progress_count: 1, in_progress_cost: 1 });
    expect(countedTowardsCap(s as unknown as ApprovalStats) >= s.limit).toBe(true);
  });
});
