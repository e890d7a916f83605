import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
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

describe('GET /api/profile', () => {
  it("answers the session user's profile", async () => {
    const user = await createTestUser(server.baseUrl, { name: 'Marie Curie' });
    const res = await request(server.baseUrl, '/api/profile', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, profile: { id: user.id, name: 'Marie Curie', email: user.email } });
    expect(Object.keys(res.body.profile).sort()).toEqual(['createdAt', 'email', 'id', 'name']);
  });

  it('answers 401 without a session', async () => {
    const res = await request(server.baseUrl, '/api/profile');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Authentication required' });
  });
});

describe('PATCH /api/profile', () => {
  it('saves the trimmed name, also seen by /api/auth/me', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json: { name: '  Rosalind Franklin  ' } });
    expect(res.status).toBe(200);
    expect(res.body.profile).toMatchObject({ id: user.id, name: 'Rosalind Franklin' });
    expect((await knex('profiles').where({ id: user.id }).first()).name).toBe('Rosalind Franklin');
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.name).toBe('Rosalind Franklin');
  });

  it.each([[''], ['   ']])('refuses %j with "Name cannot be empty" and keeps the old name', async (name) => {
    const user = await createTestUser(server.baseUrl, { name: 'Kept Name' });
    const res = await request(server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json: { name } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Name cannot be empty' });
    expect((await knex('profiles').where({ id: user.id }).first()).name).toBe('Kept Name');
  });

  it('answers 400 for a missing name, a number, an over-long name and an unknown field', async () => {
    const user = await createTestUser(server.baseUrl);
    const cases: Array<[unknown, string]> = [
      [{}, 'Name is required'],
      [{ name: 42 }, 'Name must be a string'],
      [{ name: 'x'.repeat(101) }, 'Name must be 100 characters or fewer'],
      [{ name: 'ok', credits: 999 }, 'Unknown field(s): credits'],
    ];
    for (const [json, error] of cases) {
      const res = await request(server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json });
      expect([res.status, res.body.error]).toEqual([400, error]);
    }
    expect((await knex('profiles').where({ id: user.id }).first()).credits).toBe(5);
  });
});

describe('POST /api/profile/password', () => {
  async function change(token: string, json: Record<string, unknown>) {
    return request(server.baseUrl, '/api/profile/password', { token, json });
  }

  it('refuses a confirmation that does not match', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await change(user.token, { currentPassword: user.password, newPassword: 'new-pass-123', confirmPassword: 'new-pass-124' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Passwords do not match');
  });

  it('refuses a weak new password', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await change(user.token, { currentPassword: user.password, newPassword: 'short1', confirmPassword: 'short1' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Please fix the password requirements');
  });

  it('refuses a wrong current password and keeps the old one', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await change(user.token, { currentPassword: 'wrong-pass-1', newPassword: 'new-pass-123', confirmPassword: 'new-pass-123' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Current password is incorrect');
    const signIn = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(signIn.status).toBe(200);
  });

  it('answers 400 for a missing field', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await change(user.token, { currentPassword: user.password, newPassword: 'new-pass-123' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Password confirmation is required');
  });

  it("changes the password and ends the user's other sessions, keeping this one", async () => {
    const user = await createTestUser(server.baseUrl);
    const other = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const stranger = await createTestUser(server.baseUrl);

    const res = await change(user.token, { currentPassword: user.password, newPassword: 'brand-new-pass-7', confirmPassword: 'brand-new-pass-7' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, endedSessions: 1 });

    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/me', { token: other.body.token })).status).toBe(401);
    expect((await request(server.baseUrl, '/api/auth/me', { token: stranger.token })).status).toBe(200);

    const oldPassword = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(oldPassword.status).toBe(401);
    const newPassword = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: 'brand-new-pass-7' } });
    expect(newPassword.status).toBe(200);
  });
});
