import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { request } from './http';

export interface TestUser {
  id: string;
  email: string;
  name: string;
  password: string;
  /** Send as `Authorization: Bearer <token>` (request(..., { token })). */
  token: string;
  /** Send as the `cookie` header: `rs_session=<token>`. */
  cookie: string;
}

/** Signs a new user up through the HTTP API (a unique e-mail per call); the user starts with 5 credits. */
export async function createTestUser(
  baseUrl: string,
  overrides: { name?: string; email?: string; password?: string } = {},
): Promise<TestUser> {
  const id = randomUUID();
  const name = overrides.name ?? `Test User ${id.slice(0, 8)}`;
  const email = overrides.email ?? `user-${id}@example.test`;
  const password = overrides.password ?? `pw-${id.slice(0, 12)}-9`;
  const res = await request<{ success: boolean; token?: string; user?: { id: string; email: string }; error?: string }>(
    baseUrl,
    '/api/auth/signup',
    { json: { name, email, password } },
  );
  if (res.status !== 201 || !res.body.token || !res.body.user) {
    throw new Error(`createTestUser: sign-up answered ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { id: res.body.user.id, email: res.body.user.email, name, password, token: res.body.token, cookie: `rs_session=${res.body.token}` };
}

/** Gives the user the admin role (admin-only endpoints check it on each request). */
export async function makeAdmin(knex: Knex, userId: string): Promise<void> {
  const updated = await knex('users').where({ id: userId }).update({ role: 'admin', updated_at: knex.fn.now() });
  if (updated !== 1) throw new Error(`makeAdmin: no user ${userId}`);
}
