import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let server: TestServer;
let admin: TestUser;
/** one run's users share this e-mail prefix, so searches see only this file's users */
const RUN = `adm${randomUUID().slice(0, 8)}`;

function newUser(local: string): Promise<TestUser> {
  return createTestUser(server.baseUrl, { email: `${RUN}-${local}@example.test`, name: `User ${local}` });
}

function adjust(token: string, json: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(server.baseUrl, '/api/admin/credits/adjust', { token, json, headers });
}

async function credits(userId: string): Promise<{ credits: number; reserved_credits: number }> {
  return knex('profiles').where({ id: userId }).first('credits', 'reserved_credits');
}

async function adminAdjustRows(userId: string): Promise<Record<string, unknown>[]> {
  return knex('credit_transactions').where({ workspace_id: userId, transaction_type: 'admin_adjust' }).orderBy('created_at');
}

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
  admin = await newUser('admin');
  await makeAdmin(knex, admin.id);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

const endpoints = (target: string): [string, string, Record<string, unknown> | undefined][] => [
  ['GET', `/api/admin/users?email=${RUN}`, undefined],
  ['GET', `/api/admin/users/${target}`, undefined],
  ['POST', '/api/admin/credits/adjust', { userId: target, amount: 100, reason: 'self-service' }],
];

describe('admin endpoints for anyone but an admin', () => {
  it('answer 401 without a session', async () => {
    for (const [method, path, json] of endpoints(randomUUID())) {
      const res = await request(server.baseUrl, path, { method, json });
      expect([method, path, res.status]).toEqual([method, path, 401]);
      expect(res.body.success).toBe(false);
    }
  });

  it('answer 403 to a signed-in user who is not an admin, before reading the input, and change nothing', async () => {
    const user = await newUser('plain');
    for (const [method, path, json] of endpoints(user.id)) {
      const res = await request(server.baseUrl, path, { method, json, token: user.token });
      expect([method, path, res.status, res.body.error]).toEqual([method, path, 403, 'Admin access required']);
    }
    // bad input from a non-admin is still a 403: nothing about the endpoint leaks
    for (const path of ['/api/admin/users', '/api/admin/users/not-an-id']) {
      expect((await request(server.baseUrl, path, { token: user.token })).status).toBe(403);
    }
    expect((await adjust(user.token, { amount: 'lots' })).status).toBe(403);
    expect((await credits(user.id)).credits).toBe(5);
    expect(await adminAdjustRows(user.id)).toHaveLength(0);
  });

  it('answer 403 again once the role is revoked (the role is read on every request)', async () => {
    const former = await newUser('former');
    await makeAdmin(knex, former.id);
    expect((await request(server.baseUrl, `/api/admin/users?email=${RUN}`, { token: former.token })).status).toBe(200);
    await knex('users').where({ id: former.id }).update({ role: 'user' });
    expect((await request(server.baseUrl, `/api/admin/users?email=${RUN}`, { token: former.token })).status).toBe(403);
  });
});

describe('GET /api/auth/me', () => {
  it('tells the front end the role, so only admins see the Admin entry', async () => {
    const user = await newUser('me');
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.role).toBe('user');
    expect((await request(server.baseUrl, '/api/auth/me', { token: admin.token })).body.user.role).toBe('admin');
  });
});

describe('GET /api/admin/users?email=', () => {
  it('finds users by exact e-mail or prefix, case-insensitively, the exact match first', async () => {
    const ann = await newUser('ann');
    const annie = await newUser('ann.ie');
    await newUser('bob');

    const exact = await request(server.baseUrl, `/api/admin/users?email=${encodeURIComponent(ann.email.toUpperCase())}`, { token: admin.token });
    expect(exact.status).toBe(200);
    expect(exact.body.data).toEqual([
      expect.objectContaining({ id: ann.id, email: ann.email, name: 'User ann', role: 'user', credits: 5, reservedCredits: 0, availableCredits: 5 }),
    ]);

    const prefix = await request(server.baseUrl, `/api/admin/users?email=${RUN.toUpperCase()}-ANN`, { token: admin.token });
    expect(prefix.body.data.map((u: { id: string }) => u.id)).toEqual([annie.id, ann.id]);
    expect(prefix.body.hasMore).toBe(false);

    const both = await request(server.baseUrl, `/api/admin/users?email=${encodeURIComponent(`  ${ann.email}  `)}`, { token: admin.token });
    expect(both.body.data[0].id).toBe(ann.id);
  });

  it('treats % and _ as themselves, limits the answer and says when there is more', async () => {
    for (const q of ['%', '_', `${RUN}%`, `${RUN}_`]) {
      const res = await request(server.baseUrl, `/api/admin/users?email=${encodeURIComponent(q)}`, { token: admin.token });
      expect([q, res.status, res.body.data]).toEqual([q, 200, []]);
    }
    const limited = await request(server.baseUrl, `/api/admin/users?email=${RUN}&limit=2`, { token: admin.token });
    expect(limited.body.data).toHaveLength(2);
    expect(limited.body.hasMore).toBe(true);
    const none = await request(server.baseUrl, '/api/admin/users?email=nobody-at-all-', { token: admin.token });
    expect(none.body).toEqual({ success: true, data: [], hasMore: false, limit: 20 });
  });

  it('answers 400 with a clear message for a missing e-mail or a bad limit', async () => {
    for (const [query, message] of [
      ['', 'email is required'],
      ['?email=%20%20', 'email is required'],
      [`?email=${'a'.repeat(255)}`, 'email is too long'],
      ['?email=a&limit=0', 'limit must be a whole number from 1 to 50'],
      ['?email=a&limit=51', 'limit must be a whole number from 1 to 50'],
      ['?email=a&limit=x', 'limit must be a whole number from 1 to 50'],
      ['?email=a&role=admin', 'Unknown field(s): role'],
    ]) {
      const res = await request(server.baseUrl, `/api/admin/users${query}`, { token: admin.token });
      expect([query, res.status, res.body.error]).toEqual([query, 400, message]);
    }
  });
});

describe('GET /api/admin/users/:id', () => {
  it('answers the profile, balance, reserved, purchases and recent transactions with their creators', async () => {
    const user = await newUser('detail');
    await knex('credit_purchases').insert([
      { workspace_id: user.id, package_id: 'small', credits: 12, amount_cents: 25000, currency: 'nzd', status: 'completed', stripe_session_id: `cs_${randomUUID()}` },
      { workspace_id: user.id, package_id: 'medium', credits: 30, amount_cents: 64900, currency: 'nzd', status: 'open' },
    ]);
    await insertPendingApproval(knex, { userId: user.id, contentType: 'clip', cost: 4, reserve: true });
    expect((await adjust(admin.token, { userId: user.id, amount: 10, reason: 'Goodwill for ticket 12' })).status).toBe(201);

    const res = await request(server.baseUrl, `/api/admin/users/${user.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.user).toEqual({ id: user.id, email: user.email, name: 'User detail', role: 'user', createdAt: expect.any(String) });
    expect(data.credits).toMatchObject({ credits: 15, reservedCredits: 4, availableCredits: 11, totalCreditsPurchased: 0 });
    expect(data.purchases).toHaveLength(2);
    expect(data.purchases.map((p: { packageId: string; status: string; credits: number }) => [p.packageId, p.status, p.credits]).sort()).toEqual([
      ['medium', 'open', 30],
      ['small', 'completed', 12],
    ]);
    expect(data.transactions.map((t: { transactionType: string; amount: number; createdByEmail: string; description: string }) => [t.transactionType, t.amount, t.createdByEmail, t.description])).toEqual([
      ['admin_adjust', 10, admin.email, 'Goodwill for ticket 12'],
      ['signup_bonus', 5, user.email, 'Free starting credits'],
    ]);
    expect(data.transactionsTotal).toBe(2);
    expect(data.ledger).toEqual({ ok: true, ledgerSum: 15, activeReservationsSum: 4 });
  });

  it('answers 404 for an unknown user and 400 for a malformed id', async () => {
    const unknown = await request(server.baseUrl, `/api/admin/users/${randomUUID()}`, { token: admin.token });
    expect([unknown.status, unknown.body.error, unknown.body.code]).toEqual([404, 'User not found', 'USER_NOT_FOUND']);
    const malformed = await request(server.baseUrl, '/api/admin/users/not-an-id', { token: admin.token });
    expect([malformed.status, malformed.body.error]).toEqual([400, 'Not a valid user id']);
  });
});

describe('POST /api/admin/credits/adjust', () => {
  it("adds and removes credits, records the admin's e-mail and the reason, and answers the new numbers", async () => {
    const user = await newUser('adjust');
    const up = await adjust(admin.token, { userId: user.id, amount: 10, reason: '  Refund for a failed clip  ' });
    expect(up.status).toBe(201);
    expect(up.body.data).toMatchObject({
      userId: user.id,
      amount: 10,
      balanceAfter: 15,
      transactionType: 'admin_adjust',
      description: 'Refund for a failed clip',
      createdByEmail: admin.email,
      replayed: false,
      credits: { credits: 15, reservedCredits: 0, availableCredits: 15 },
    });
    const down = await adjust(admin.token, { userId: user.id, amount: -15, reason: 'Test account reset' });
    expect(down.status).toBe(201);
    expect(down.body.data).toMatchObject({ amount: -15, balanceAfter: 0, credits: { credits: 0, availableCredits: 0 } });

    const rows = await adminAdjustRows(user.id);
    expect(rows.map((r) => [r.amount, r.description, r.created_by, r.created_by_email])).toEqual([
      [10, 'Refund for a failed clip', admin.id, admin.email],
      [-15, 'Test account reset', admin.id, admin.email],
    ]);
    // the user sees who changed their balance
    const own = await request(server.baseUrl, '/api/credits/transactions', { token: user.token });
    expect(own.body.data[0]).toMatchObject({ transactionType: 'admin_adjust', amount: -15, createdByEmail: admin.email });
    expect((await checkLedgerInvariant(knex, user.id)).ok).toBe(true);
  });

  it("records each admin's own e-mail", async () => {
    const second = await newUser('second-admin');
    await makeAdmin(knex, second.id);
    const user = await newUser('two-admins');
    await adjust(admin.token, { userId: user.id, amount: 1, reason: 'first' });
    await adjust(second.token, { userId: user.id, amount: 2, reason: 'second' });
    expect((await adminAdjustRows(user.id)).map((r) => [r.description, r.created_by_email])).toEqual([
      ['first', admin.email],
      ['second', second.email],
    ]);
  });

  it('refuses to go below zero with a clear message and writes nothing', async () => {
    const user = await newUser('below-zero');
    const res = await adjust(admin.token, { userId: user.id, amount: -6, reason: 'Too much' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      code: 'INSUFFICIENT_CREDITS',
      error: 'Cannot remove 6 credits: the user has 5 available. Credits never go below zero.',
    });
    // reserved credits are held for pending items: they cannot be taken either
    await insertPendingApproval(knex, { userId: user.id, contentType: 'clip', cost: 4, reserve: true });
    const held = await adjust(admin.token, { userId: user.id, amount: -2, reason: 'Held' });
    expect([held.status, held.body.error]).toEqual([400, 'Cannot remove 2 credits: the user has 1 available (balance 5, 4 reserved). Credits never go below zero.']);
    expect(await credits(user.id)).toEqual({ credits: 5, reserved_credits: 4 });
    expect(await adminAdjustRows(user.id)).toHaveLength(0);
    expect((await adjust(admin.token, { userId: user.id, amount: -1, reason: 'Exactly the rest' })).status).toBe(201);
    expect(await credits(user.id)).toEqual({ credits: 4, reserved_credits: 4 });
  });

  it('applies a retried adjustment once, by body key or Idempotency-Key header', async () => {
    const user = await newUser('retry');
    const body = { userId: user.id, amount: 3, reason: 'Ticket 4711', idempotencyKey: 'ticket-4711' };
    const first = await adjust(admin.token, body);
    const again = await adjust(admin.token, body);
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.data).toMatchObject({ id: first.body.data.id, replayed: true, credits: { credits: 8 } });

    const byHeader = () => adjust(admin.token, { userId: user.id, amount: -1, reason: 'Header retry' }, { 'idempotency-key': 'retry-header-1' });
    expect((await byHeader()).status).toBe(201);
    expect((await byHeader()).status).toBe(200);
    expect((await credits(user.id)).credits).toBe(7);
    expect(await adminAdjustRows(user.id)).toHaveLength(2);

    // the same key for a different change is a conflict, not a silent replay
    const conflict = await adjust(admin.token, { ...body, amount: 4 });
    expect([conflict.status, conflict.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    // keys are per admin: another admin's same key is another adjustment
    const other = await newUser('retry-other-admin');
    await makeAdmin(knex, other.id);
    expect((await adjust(other.token, body)).status).toBe(201);
    expect((await credits(user.id)).credits).toBe(10);
  });

  it('answers 404 for an unknown user and 400 for bad input, writing nothing', async () => {
    const unknown = await adjust(admin.token, { userId: randomUUID(), amount: 1, reason: 'x' });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'User not found']);
    const user = await newUser('bad-input');
    for (const [json, message] of [
      [{ userId: user.id, amount: 1.5, reason: 'x' }, 'amount must be a whole number'],
      [{ userId: user.id, amount: 0, reason: 'x' }, 'amount must not be zero'],
      [{ userId: user.id, amount: '5', reason: 'x' }, 'amount must be a whole number'],
      [{ userId: user.id, amount: 2_000_000, reason: 'x' }, 'amount is too large'],
      [{ userId: user.id, amount: 1 }, 'reason is required'],
      [{ userId: user.id, amount: 1, reason: '   ' }, 'reason is required'],
      [{ userId: user.id, amount: 1, reason: 'x'.repeat(501) }, 'reason is too long'],
      [{ userId: 'nobody', amount: 1, reason: 'x' }, 'Not a valid user id'],
      [{ userId: user.id, amount: 1, reason: 'x', idempotencyKey: ' ' }, 'idempotencyKey must not be blank'],
      [{ userId: user.id, amount: 1, reason: 'x', createdByEmail: 'someone@else' }, 'Unknown field(s): createdByEmail'],
    ] as const) {
      const res = await adjust(admin.token, json);
      expect([json, res.status, res.body.error]).toEqual([json, 400, message]);
    }
    const longHeader = await adjust(admin.token, { userId: user.id, amount: 1, reason: 'x' }, { 'idempotency-key': 'k'.repeat(201) });
    expect([longHeader.status, longHeader.body.error]).toEqual([400, 'idempotencyKey is too long']);
    const notJson = await request(server.baseUrl, '/api/admin/credits/adjust', {
      token: admin.token,
      body: '{"amount":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(await adminAdjustRows(user.id)).toHaveLength(0);
    expect((await credits(user.id)).credits).toBe(5);
  });
});
