import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

const EVIL = 'http://evil.example';
const PUBLIC_URL = 'https://studio.example';

let knex: Knex;
let server: TestServer;
let httpsServer: TestServer;

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
  httpsServer = await serve(createApp({ config: { ...loadConfig(), publicUrl: PUBLIC_URL, cookieSecure: false }, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await httpsServer.close();
  await closeTestKnex();
});

async function projectCount(userId: string): Promise<number> {
  const [{ count }] = await knex('projects').where({ workspace_id: userId }).count<{ count: string }[]>('* as count');
  return Number(count);
}

/** A cookie-authenticated request as a browser sends it, with the given provenance headers. */
function cookiePost(user: TestUser, path: string, headers: Record<string, string>, body: { json?: unknown; text?: string } = {}) {
  const base = server.baseUrl;
  if (body.text !== undefined) {
    return request(base, path, { method: 'POST', body: body.text, headers: { cookie: user.cookie, 'content-type': 'text/plain', ...headers } });
  }
  return request(base, path, { method: 'POST', json: body.json ?? {}, headers: { cookie: user.cookie, ...headers } });
}

describe('CSRF: cookie-authenticated writes must come from the app itself', () => {
  it('refuses a cross-site JSON POST with 403 and creates nothing', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await cookiePost(user, '/api/projects', { origin: EVIL }, { json: { name: 'Planted' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'Cross-site request refused', code: 'CSRF_REJECTED' });
    expect(await projectCount(user.id)).toBe(0);
  });

  it('refuses a cross-site text/plain sign-out, and the session stays valid', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await cookiePost(user, '/api/auth/signout', { origin: EVIL, 'sec-fetch-site': 'cross-site' }, { text: '{}' });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie()).toEqual([]);
    const me = await request(server.baseUrl, '/api/auth/me', { headers: { cookie: user.cookie } });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);
  });

  it('refuses without Origin when Sec-Fetch-Site says cross-site or same-site, or the Referer is another site', async () => {
    const user = await createTestUser(server.baseUrl);
    const cases: Record<string, string>[] = [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { referer: `${EVIL}/page` }, { origin: 'null' }];
    for (const headers of cases) {
      const res = await cookiePost(user, '/api/projects', headers, { json: { name: 'Planted' } });
      expect([JSON.stringify(headers), res.status]).toEqual([JSON.stringify(headers), 403]);
    }
    // PATCH and DELETE are state-changing too
    const patch = await request(server.baseUrl, '/api/profile', { method: 'PATCH', json: { name: 'Evil' }, headers: { cookie: user.cookie, origin: EVIL } });
    expect(patch.status).toBe(403);
    expect(await projectCount(user.id)).toBe(0);
  });

  it('accepts a same-origin POST by Origin, by Sec-Fetch-Site or by Referer, and one from a client that sends none', async () => {
    const user = await createTestUser(server.baseUrl);
    const cases: Record<string, string>[] = [{ origin: server.baseUrl }, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, { referer: `${server.baseUrl}/projects` }, {}];
    for (const headers of cases) {
      const res = await cookiePost(user, '/api/projects', headers, { json: { name: `Mine ${randomUUID().slice(0, 6)}` } });
      expect([JSON.stringify(headers), res.status]).toEqual([JSON.stringify(headers), 201]);
    }
    expect(await projectCount(user.id)).toBe(cases.length);
    const signOut = await cookiePost(user, '/api/auth/signout', { origin: server.baseUrl });
    expect(signOut.status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/me', { headers: { cookie: user.cookie } })).status).toBe(401);
  });

  it('accepts PUBLIC_URL as an origin beside the one the request was addressed to', async () => {
    const user = await createTestUser(httpsServer.baseUrl);
    const res = await request(httpsServer.baseUrl, '/api/projects', { json: { name: 'Behind a proxy' }, headers: { cookie: user.cookie, origin: PUBLIC_URL } });
    expect(res.status).toBe(201);
  });

  it('exempts Bearer-token requests, whatever their Origin', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'API client' }, headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } });
    expect(res.status).toBe(201);
  });

  it('leaves requests without a session cookie alone: public routes such as sign-in answer as before', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password }, headers: { origin: EVIL } });
    expect(res.status).toBe(200);
    const unsigned = await request(server.baseUrl, '/api/stripe/webhook', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', origin: EVIL } });
    expect(unsigned.status).not.toBe(403);
  });
});

describe('session cookie naming', () => {
  it('is Secure and __Host- prefixed when PUBLIC_URL is https, and read back under that name', async () => {
    const res = await request(httpsServer.baseUrl, '/api/auth/signup', { json: { name: 'Tls', email: `tls-${randomUUID()}@example.test`, password: 'secure-pass-1' } });
    expect(res.status).toBe(201);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-rs_session='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/;\s*secure/i);
    expect(cookie).toMatch(/;\s*path=\/(;|$)/i);
    expect(cookie).not.toMatch(/domain=/i);
    expect(res.headers.getSetCookie().some((c) => c.startsWith('rs_session='))).toBe(false);
    const me = await request(httpsServer.baseUrl, '/api/auth/me', { headers: { cookie: `__Host-rs_session=${res.body.token}` } });
    expect(me.status).toBe(200);
  });

  it('keeps the plain rs_session name, not Secure, for a local http PUBLIC_URL', async () => {
    const res = await request(server.baseUrl, '/api/auth/signup', { json: { name: 'Local', email: `local-${randomUUID()}@example.test`, password: 'secure-pass-1' } });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('rs_session='));
    expect(cookie).toBeDefined();
    expect(cookie).not.toMatch(/;\s*secure/i);
  });
});
