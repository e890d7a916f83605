import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { addCredits } from '../../services/billing/credits';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let server: TestServer;

/** A user signed up through POST /api/auth/signup (5 starting credits as a ledger entry) with a Bearer token. */
function newUser(): Promise<TestUser> {
  return createTestUser(server.baseUrl);
}

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

describe('credits routes without a session', () => {
  it.each([
    ['GET', '/api/credits/summary'],
    ['GET', '/api/credits/limits'],
    ['GET', '/api/credits/can-create?type=clip'],
    ['GET', '/api/credits/transactions'],
    ['POST', '/api/admin/credits/adjust'],
  ])('%s %s answers 401', async (method, path) => {
    const res = await request(server.baseUrl, path, { method, json: method === 'POST' ? { userId: randomUUID(), amount: 1, reason: 'x' } : undefined });
    expect(res.status).toBe(401);
    expect(res.body.success).toBe(false);
  });

  it('answers 401 for an unknown bearer token', async () => {
    const res = await request(server.baseUrl, '/api/credits/summary', { token: 'A'.repeat(43) });
    expect(res.status).toBe(401);
  });
});

describe('GET /api/credits/*', () => {
  it("answers the signed-in user's summary and limits, by bearer token or cookie", async () => {
    const u = await newUser();
    const summary = await request(server.baseUrl, '/api/credits/summary', { token: u.token });
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({
      success: true,
      data: {
        credits: 5,
        reservedCredits: 0,
        availableCredits: 5,
        totalClipsUsed: 0,
        totalImagesUsed: 0,
        totalAssembliesUsed: 0,
        totalCreditsPurchased: 0,
        totalCreditsAdded: 5,
      },
    });
    const limits = await request(server.baseUrl, '/api/credits/limits', { headers: { cookie: `rs_session=${u.token}` } });
    expect(limits.body).toEqual({ success: true, data: { clips: 1, images: 5 } });
  });

  it("refuses another user's id with 403 and accepts the user's own", async () => {
    const u = await newUser();
    const other = await newUser();
    expect((await request(server.baseUrl, `/api/credits/summary?userId=${other.id}`, { token: u.token })).status).toBe(403);
    expect((await request(server.baseUrl, `/api/credits/can-create?type=image&userId=${other.id}`, { token: u.token })).status).toBe(403);
    expect((await request(server.baseUrl, `/api/credits/summary?userId=${u.id}`, { token: u.token })).status).toBe(200);
  });

  it('answers can-create with the pending-approval limit', async () => {
    const u = await newUser();
    const clip = await request(server.baseUrl, '/api/credits/can-create?type=clip', { token: u.token });
    expect(clip.status).toBe(200);
    expect(clip.body.data).toMatchObject({ canCreate: true, limit: 5, pendingCount: 0, pendingCost: 0, cost: 4, available: 5 });
    await insertPendingApproval(knex, { userId: u.id, cost: 2, reserve: true });
    const after = await request(server.baseUrl, '/api/credits/can-create?type=clip', { token: u.token });
    expect(after.body.data).toMatchObject({ canCreate: false, reason: 'pending_cost', available: 3, limit: 5, pendingCount: 1, pendingCost: 2 });
    expect((await request(server.baseUrl, '/api/credits/can-create?type=image', { token: u.token })).body.data.canCreate).toBe(true);
  });

  it('answers 400 for a missing or unknown content type and for unknown parameters', async () => {
    const u = await newUser();
    for (const path of ['/api/credits/can-create', '/api/credits/can-create?type=video', '/api/credits/summary?foo=1']) {
      const res = await request(server.baseUrl, path, { token: u.token });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('pages transactions 50 at a time with createdByEmail', async () => {
    const u = await newUser();
    for (let i = 1; i <= 52; i += 1) {
      await addCredits(knex, { workspaceId: u.id, amount: 1, type: 'add', description: `bonus ${i}`, idempotencyKey: `api-list:${u.id}:${i}` });
    }
    const first = await request(server.baseUrl, '/api/credits/transactions', { token: u.token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, page: 1, pageSize: 50, total: 53 });
    expect(first.body.data).toHaveLength(50);
    expect(first.body.data[0]).toMatchObject({ amount: 1, transactionType: 'add', description: 'bonus 52', createdByEmail: 'system', referenceId: null });
    const second = await request(server.baseUrl, '/api/credits/transactions?page=2', { token: u.token });
    expect(second.body.data.map((t: { description: string }) => t.description)).toEqual(['bonus 2', 'bonus 1', 'Free starting credits']);
    for (const page of ['0', 'abc', '-1', '1.5']) {
      expect((await request(server.baseUrl, `/api/credits/transactions?page=${page}`, { token: u.token })).status).toBe(400);
    }
  });

  it('pages transactions by the cursor each page hands out', async () => {
    const u = await newUser();
    for (let i = 1; i <= 52; i += 1) {
      await addCredits(knex, { workspaceId: u.id, amount: 1, type: 'add', description: `step ${i}`, idempotencyKey: `api-walk:${u.id}:${i}` });
    }
    const first = await request(server.baseUrl, '/api/credits/transactions', { token: u.token });
    expect(first.body).toMatchObject({ page: 1, total: 53, nextCursor: expect.any(String) });
    const second = await request(server.baseUrl, `/api/credits/transactions?cursor=${first.body.nextCursor}`, { token: u.token });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ success: true, page: 2, pageSize: 50, total: 53, nextCursor: null });
    expect(second.body.data.map((t: { description: string }) => t.description)).toEqual(['step 2', 'step 1', 'Free starting credits']);
    const both = await request(server.baseUrl, `/api/credits/transactions?page=2&cursor=${first.body.nextCursor}`, { token: u.token });
    expect(both.status).toBe(400);
    const forged = await request(server.baseUrl, '/api/credits/transactions?cursor=abc', { token: u.token });
    expect([forged.status, forged.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});

describe('POST /api/admin/credits/adjust', () => {
  it('answers 403 for a signed-in user who is not an admin, and changes nothing', async () => {
    const u = await newUser();
    const res = await request(server.baseUrl, '/api/admin/credits/adjust', { token: u.token, json: { userId: u.id, amount: 100, reason: 'self-service' } });
    expect(res.status).toBe(403);
    expect((await knex('profiles').where({ id: u.id }).first()).credits).toBe(5);
  });

  it("adjusts another user's credits and records the admin's e-mail", async () => {
    const admin = await newUser();
    await makeAdmin(knex, admin.id);
    const target = await newUser();
    const res = await request(server.baseUrl, '/api/admin/credits/adjust', { token: admin.token, json: { userId: target.id, amount: 7, reason: 'Support credit' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 7, balanceAfter: 12, transactionType: 'admin_adjust', createdByEmail: admin.email });
    const list = await request(server.baseUrl, '/api/credits/transactions', { token: target.token });
    expect(list.body.data[0]).toMatchObject({ transactionType: 'admin_adjust', description: 'Support credit', createdByEmail: admin.email, amount: 7 });
    const down = await request(server.baseUrl, '/api/admin/credits/adjust', { token: admin.token, json: { userId: target.id, amount: -2, reason: 'Correction' } });
    expect(down.body.data.balanceAfter).toBe(10);
  });

  it('applies a retried adjustment with the same Idempotency-Key once', async () => {
    const admin = await newUser();
    await makeAdmin(knex, admin.id);
    const target = await newUser();
    const send = () =>
      request(server.baseUrl, '/api/admin/credits/adjust', {
        token: admin.token,
        headers: { 'idempotency-key': 'ticket-4711' },
        json: { userId: target.id, amount: 3, reason: 'Ticket 4711' },
      });
    expect((await send()).status).toBe(201);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.body.data.replayed).toBe(true);
    expect((await knex('profiles').where({ id: target.id }).first()).credits).toBe(8);
  });

  it('answers 404 for an unknown user and 400 when the balance would go negative', async () => {
    const admin = await newUser();
    await makeAdmin(knex, admin.id);
    const target = await newUser();
    const unknown = await request(server.baseUrl, '/api/admin/credits/adjust', { token: admin.token, json: { userId: randomUUID(), amount: 1, reason: 'x' } });
    expect(unknown.status).toBe(404);
    const negative = await request(server.baseUrl, '/api/admin/credits/adjust', { token: admin.token, json: { userId: target.id, amount: -6, reason: 'x' } });
    expect(negative.status).toBe(400);
    expect(negative.body.code).toBe('INSUFFICIENT_CREDITS');
    expect((await knex('profiles').where({ id: target.id }).first()).credits).toBe(5);
  });

  it('answers 400 for bad input', async () => {
    const admin = await newUser();
    await makeAdmin(knex, admin.id);
    const bodies = [
      { userId: admin.id, amount: 1.5, reason: 'x' },
      { userId: admin.id, amount: 0, reason: 'x' },
      { userId: admin.id, amount: '5', reason: 'x' },
      { userId: admin.id, amount: 1, reason: '   ' },
      { userId: 'nobody', amount: 1, reason: 'x' },
      { userId: admin.id, amount: 1, reason: 'x', role: 'admin' },
    ];
    for (const json of bodies) {
      const res = await request(server.baseUrl, '/api/admin/credits/adjust', { token: admin.token, json });
      expect(res.status).toBe(400);
    }
    expect(await knex('credit_transactions').where({ workspace_id: admin.id, transaction_type: 'admin_adjust' })).toHaveLength(0);
  });
});
