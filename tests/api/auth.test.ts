import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { NEW_PROFILE_CREDITS } from '../../domain/constants';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let server: TestServer;
let secureServer: TestServer;

const uniqueEmail = () => `auth-${randomUUID()}@example.test`;

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
  secureServer = await serve(createApp({ config: { ...loadConfig(), cookieSecure: true }, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await secureServer.close();
  await closeTestKnex();
});

function sessionCookie(headers: Headers): string {
  const cookie = headers.getSetCookie().find((c) => c.startsWith('rs_session='));
  if (!cookie) throw new Error('no rs_session cookie set');
  return cookie;
}

describe('POST /api/auth/signup', () => {
  it('creates the user, a profile with 5 credits as a ledger entry, and a session returned as cookie and token', async () => {
    const email = uniqueEmail();
    const res = await request(server.baseUrl, '/api/auth/signup', { json: { name: '  Ada Lovelace ', email: `  ${email.toUpperCase()} `, password: 'analytical1' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, user: { email, name: 'Ada Lovelace', role: 'user' } });
    expect(new Date(res.body.user.createdAt).getTime()).not.toBeNaN();
    const { token } = res.body;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const cookie = sessionCookie(res.headers);
    expect(cookie).toContain(`rs_session=${token}`);
    expect(cookie).toMatch(/;\s*httponly/i);
    expect(cookie).toMatch(/;\s*samesite=lax/i);
    expect(cookie).toMatch(/;\s*path=\//i);
    expect(cookie).not.toMatch(/;\s*secure/i);

    const userId: string = res.body.user.id;
    const user = await knex('users').where({ id: userId }).first();
    expect(user.password_hash).toMatch(/^scrypt\$/);
    expect(user.password_hash).not.toContain('analytical1');
    const profile = await knex('profiles').where({ id: userId }).first();
    expect(profile).toMatchObject({ email, name: 'Ada Lovelace', credits: NEW_PROFILE_CREDITS, reserved_credits: 0 });
    const ledger = await knex('credit_transactions').where({ workspace_id: userId });
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ amount: 5, transaction_type: 'signup_bonus', idempotency_key: `signup:${userId}`, balance_after: 5 });

    const sessions = await knex('sessions').where({ user_id: userId });
    expect(sessions).toHaveLength(1);
    expect(sessions[0].id).toBe(createHash('sha256').update(token).digest('hex'));
    const ttlMs = new Date(sessions[0].expires_at).getTime() - Date.now();
    expect(ttlMs).toBeGreaterThan((loadConfig().sessionTtlDays - 1) * 86400000);
    expect(ttlMs).toBeLessThanOrEqual(loadConfig().sessionTtlDays * 86400000);
  });

  it('marks the cookie Secure when COOKIE_SECURE is on', async () => {
    const res = await request(secureServer.baseUrl, '/api/auth/signup', { json: { name: 'S', email: uniqueEmail(), password: 'secure-pass-1' } });
    expect(res.status).toBe(201);
    expect(sessionCookie(res.headers)).toMatch(/;\s*secure/i);
  });

  it('answers 409 for an e-mail already in use, whatever its case, and writes nothing', async () => {
    const first = await createTestUser(server.baseUrl);
    // other test files sign users up in parallel: count only what this e-mail could have written
    const written = async (): Promise<number[]> => {
      const counts = await Promise.all([
        knex('users').where({ email: first.email }).count<{ count: string }[]>('* as count'),
        knex('profiles').where({ email: first.email }).count<{ count: string }[]>('* as count'),
        knex('sessions').where({ user_id: first.id }).count<{ count: string }[]>('* as count'),
        knex('credit_transactions').where({ workspace_id: first.id }).count<{ count: string }[]>('* as count'),
      ]);
      return counts.map((rows) => Number(rows[0].count));
    };
    const before = await written();
    expect(before).toEqual([1, 1, 1, 1]);
    const res = await request(server.baseUrl, '/api/auth/signup', { json: { name: 'Copy', email: first.email.toUpperCase(), password: 'another-pass-2' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'An account with this email already exists', code: 'EMAIL_TAKEN' });
    expect(await written()).toEqual(before);
  });

  it('gives exactly one account when the same e-mail signs up twice at once', async () => {
    const email = uniqueEmail();
    const results = await Promise.all(
      [1, 2, 3].map(() => request(server.baseUrl, '/api/auth/signup', { json: { name: 'Race', email, password: 'race-pass-1' } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(await knex('users').where({ email })).toHaveLength(1);
    expect(await knex('profiles').where({ email })).toHaveLength(1);
  });

  it.each([
    ['too short', 'abc123'],
    ['no digit', 'abcdefghij'],
    ['no letter', '1234567890'],
  ])('refuses a weak password (%s) with the spec text and creates nothing', async (_label, password) => {
    const email = uniqueEmail();
    const res = await request(server.baseUrl, '/api/auth/signup', { json: { name: 'Weak', email, password } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Please fix the password requirements');
    expect(await knex('users').where({ email })).toHaveLength(0);
  });

  it.each([
    [{ name: 'X', email: 'not-an-email', password: 'valid-pass-1' }, 'Please enter a valid email address'],
    [{ name: 'X', password: 'valid-pass-1' }, 'Email is required'],
    [{ name: 'X', email: 'a@b.co' }, 'Password is required'],
    [{ name: 'X', email: 'a@b.co', password: 12345678 }, 'Password must be a string'],
    [{ name: 'X', email: 'a@b.co', password: 'valid-pass-1', role: 'admin' }, 'Unknown field(s): role'],
  ])('answers 400 for bad input %j', async (json, error) => {
    const res = await request(server.baseUrl, '/api/auth/signup', { json });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
  });
});

describe('POST /api/auth/signin', () => {
  it('signs in with the right password (any e-mail case) and issues a new session', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: ` ${user.email.toUpperCase()}`, password: user.password } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, user: { id: user.id, email: user.email, name: user.name, role: 'user' } });
    expect(res.body.token).not.toBe(user.token);
    expect(sessionCookie(res.headers)).toContain(`rs_session=${res.body.token}`);
    const me = await request(server.baseUrl, '/api/auth/me', { token: res.body.token });
    expect(me.body.user.id).toBe(user.id);
  });

  it('answers the same 401 for a wrong password and for an unknown e-mail', async () => {
    const user = await createTestUser(server.baseUrl);
    const wrong = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: `${user.password}x` } });
    const unknown = await request(server.baseUrl, '/api/auth/signin', { json: { email: uniqueEmail(), password: user.password } });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, error: 'Invalid email or password', code: 'INVALID_CREDENTIALS' });
      expect(res.headers.getSetCookie()).toHaveLength(0);
    }
  });

  it('answers 400 for a missing password', async () => {
    const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: 'a@b.co' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Password is required');
  });
});

describe('GET /api/auth/me', () => {
  it('answers the user for a Bearer token and for the cookie', async () => {
    const user = await createTestUser(server.baseUrl, { name: 'Grace Hopper' });
    const expected = { success: true, user: { id: user.id, email: user.email, name: 'Grace Hopper', role: 'user' } };
    const byBearer = await request(server.baseUrl, '/api/auth/me', { token: user.token });
    const byCookie = await request(server.baseUrl, '/api/auth/me', { headers: { cookie: user.cookie } });
    for (const res of [byBearer, byCookie]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject(expected);
      expect(Object.keys(res.body.user).sort()).toEqual(['createdAt', 'email', 'emailVerified', 'id', 'name', 'role']);
    }
  });

  it('answers 401 without a session, with an unknown token and with an expired session', async () => {
    const user = await createTestUser(server.baseUrl);
    await knex('sessions')
      .where({ id: createHash('sha256').update(user.token).digest('hex') })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const answers = await Promise.all([
      request(server.baseUrl, '/api/auth/me'),
      request(server.baseUrl, '/api/auth/me', { token: 'x'.repeat(43) }),
      request(server.baseUrl, '/api/auth/me', { token: 'not a token' }),
      request(server.baseUrl, '/api/auth/me', { token: user.token }),
      request(server.baseUrl, '/api/auth/me', { headers: { cookie: user.cookie } }),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, error: 'Authentication required' });
    }
  });
});

describe('GET /api/auth/session', () => {
  it('answers the signed-in account for a Bearer token and for the cookie', async () => {
    const user = await createTestUser(server.baseUrl, { name: 'Ada Lovelace' });
    for (const res of [
      await request(server.baseUrl, '/api/auth/session', { token: user.token }),
      await request(server.baseUrl, '/api/auth/session', { headers: { cookie: user.cookie } }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, user: { id: user.id, email: user.email, name: 'Ada Lovelace', role: 'user' } });
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('answers 200 with user null, never 401, without a valid session', async () => {
    const user = await createTestUser(server.baseUrl);
    await knex('sessions')
      .where({ id: createHash('sha256').update(user.token).digest('hex') })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const answers = await Promise.all([
      request(server.baseUrl, '/api/auth/session'),
      request(server.baseUrl, '/api/auth/session', { token: 'x'.repeat(43) }),
      request(server.baseUrl, '/api/auth/session', { token: user.token }),
      request(server.baseUrl, '/api/auth/session', { headers: { cookie: user.cookie } }),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, user: null });
    }
  });
});

describe('POST /api/auth/signout', () => {
  it('ends the session: the token stops working and the cookie is cleared', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/auth/signout', { method: 'POST', headers: { cookie: user.cookie } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(sessionCookie(res.headers)).toMatch(/^rs_session=;.*expires=Thu, 01 Jan 1970/i);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(401);
    expect(await knex('sessions').where({ user_id: user.id })).toHaveLength(0);
  });

  it('ends only the session it was called with', async () => {
    const user = await createTestUser(server.baseUrl);
    const second = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    await request(server.baseUrl, '/api/auth/signout', { method: 'POST', token: user.token });
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(401);
    expect((await request(server.baseUrl, '/api/auth/me', { token: second.body.token })).status).toBe(200);
  });

  it('answers 200 without a session', async () => {
    const res = await request(server.baseUrl, '/api/auth/signout', { method: 'POST' });
    expect(res.status).toBe(200);
  });
});
