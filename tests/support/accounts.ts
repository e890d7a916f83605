import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
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

/**
 * Marks the account's e-mail verified, as opening its verification link would: in `knex` when given (a test whose app
 * runs on a database of its own), else in the run's database (DATABASE_URL) over a connection of its own.
 */
export async function markTestUserVerified(userId: string, knex?: Knex): Promise<void> {
  let updated: number;
  if (knex) {
    updated = await knex('users').where({ id: userId }).update({ email_verified_at: knex.fn.now() });
  } else {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      updated = (await client.query('update users set email_verified_at = now() where id = $1', [userId])).rowCount ?? 0;
    } finally {
      await client.end();
    }
  }
  if (updated !== 1) throw new Error(`markTestUserVerified: no user ${userId} in that database (pass the app's knex: createTestUser(url, { knex }))`);
}

/**
 * Signs a new user up through the HTTP API (a unique e-mail per call); the user starts with 5 credits. The account's
 * e-mail is verified (DESIGN.md "Accounts") unless `verified: false`; `knex` is the app's database when it is not the
 * run's.
 */
export async function createTestUser(
  baseUrl: string,
  overrides: { name?: string; email?: string; password?: string; verified?: boolean; knex?: Knex } = {},
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
  if (overrides.verified !== false) await markTestUserVerified(res.body.user.id, overrides.knex);
  return { id: res.body.user.id, email: res.body.user.email, name, password, token: res.body.token, cookie: `rs_session=${res.body.token}` };
}

/** Gives the user the admin role (admin-only endpoints check it on each request). */
export async function makeAdmin(knex: Knex, userId: string): Promise<void> {
  const updated = await knex('users').where({ id: userId }).update({ role: 'admin', updated_at: knex.fn.now() });
  if (updated !== 1) throw new Error(`makeAdmin: no user ${userId}`);
}
