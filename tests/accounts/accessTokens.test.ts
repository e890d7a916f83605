/**
 * Personal access tokens (issue 29, item 1): the service (create once, list, revoke, hash stored, expiry, last use),
 * the /api/account/tokens routes (session only), Bearer authentication with a token (401 for a bad one, counted
 * against the sign-in limits and logged), CSRF not applying to it, and the scope guard's refusals (403 naming the
 * missing scope; never members, billing writes, tokens, account writes or site administration).
 */
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import Router from '@koa/router';
import Koa from 'koa';
import pino from 'pino';
import { createApp } from '../../api/app';
import { errorHandler } from '../../api/middleware/errors';
import { DEFAULT_SIGN_IN_LIMITS } from '../../api/middleware/rateLimit';
import { describeRoute } from '../../api/openapi/describe';
import { guardTokenScopes } from '../../api/tokenScopes';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ACCESS_TOKEN_MSG, ACCESS_TOKENS_PER_USER, type TokenScope } from '../../domain/accessTokens';
import { createAccessToken, LAST_USE_WRITE_INTERVAL_SECONDS, listAccessTokens } from '../../services/accounts/accessTokens';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWorkspace, inWorkspace, joinWorkspace } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
const servers: TestServer[] = [];
/** the app's log lines, to find the audit line of a refused token */
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  knex = testKnex();
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  const appLogger = pino({ level: 'info' }, sink) as unknown as typeof logger;
  // an address of this file's own (X-Forwarded-For through one trusted hop), so bad tokens spend no other file's budget
  server = await serve(createApp({ config: { ...loadConfig(), trustProxyHops: 1 }, knex, logger: appLogger, signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `pat${randomUUID().slice(0, 6)}` } }));
  servers.push(server);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeTestKnex();
});

const address = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

async function newToken(user: TestUser, scopes: TokenScope[], extra: { name?: string; expiresAt?: string } = {}) {
  const res = await request<{ token: string; accessToken: { id: string; prefix: string; scopes: string[] } }>(server.baseUrl, '/api/account/tokens', {
    token: user.token,
    json: { name: extra.name ?? `CLI ${scopes.join('+')}`, scopes, ...(extra.expiresAt ? { expiresAt: extra.expiresAt } : {}) },
  });
  if (res.status !== 201) throw new Error(`create token answered ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.token, id: res.body.accessToken.id, view: res.body.accessToken };
}

const withToken = (token: string, path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) =>
  request(server.baseUrl, path, { ...init, headers: { 'x-forwarded-for': address(), ...(init.headers ?? {}) }, token });

describe('creating, listing and revoking tokens', () => {
  it('shows the token once, stores only its sha256 and its first characters, and lists it without either', async () => {
    const user = await createTestUser(server.baseUrl);
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const { token, id, view } = await newToken(user, ['generate', 'read'], { name: '  Listing site  ', expiresAt });
    expect(token).toMatch(/^rs_pat_[A-Za-z0-9_-]{43}$/);
    expect(view).toMatchObject({ name: 'Listing site', prefix: token.slice(0, 12), scopes: ['read', 'generate'], lastUsedAt: null, expired: false });

    const row = await knex('access_tokens').where({ id }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(new Date(row.expires_at).toISOString()).toBe(expiresAt);

    const list = await request<{ tokens: Array<Record<string, unknown>> }>(server.baseUrl, '/api/account/tokens', { token: user.token });
    expect(list.status).toBe(200);
    expect(list.body.tokens).toEqual([expect.objectContaining({ id, name: 'Listing site', prefix: token.slice(0, 12) })]);
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(JSON.stringify(list.body)).not.toContain(row.token_hash);
  });

  it('refuses a bad name, no or unknown scopes and an expiry in the past or beyond a year, with the reason', async () => {
    const user = await createTestUser(server.baseUrl);
    const create = (json: unknown) => request(server.baseUrl, '/api/account/tokens', { token: user.token, json });
    const cases: Array<[unknown, string]> = [
      [{ name: '   ', scopes: ['read'] }, ACCESS_TOKEN_MSG.nameRequired],
      [{ name: 'x'.repeat(101), scopes: ['read'] }, ACCESS_TOKEN_MSG.nameTooLong],
      [{ name: 'ci', scopes: [] }, ACCESS_TOKEN_MSG.scopesRequired],
      [{ name: 'ci' }, ACCESS_TOKEN_MSG.scopesRequired],
      [{ name: 'ci', scopes: ['read', 'admin'] }, ACCESS_TOKEN_MSG.scopeUnknown],
      [{ name: 'ci', scopes: ['read'], expiresAt: new Date(Date.now() - 1000).toISOString() }, ACCESS_TOKEN_MSG.expiryPast],
      [{ name: 'ci', scopes: ['read'], expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, ACCESS_TOKEN_MSG.expiryTooFar],
      [{ name: 'ci', scopes: ['read'], expiresAt: 'tomorrow' }, 'expiresAt must be an ISO 8601 date and time'],
    ];
    for (const [json, message] of cases) {
      const res = await create(json);
      expect({ json, status: res.status, error: res.body.error }).toEqual({ json, status: 400, error: message });
    }
    expect(await knex('access_tokens').where({ user_id: user.id }).count<{ n: string }[]>('* as n')).toEqual([{ n: '0' }]);
  });

  it(`allows ${ACCESS_TOKENS_PER_USER} active tokens per user, then says to revoke one (409); a revoked one frees its place`, async () => {
    const user = await createTestUser(server.baseUrl);
    for (let i = 0; i < ACCESS_TOKENS_PER_USER; i += 1) await createAccessToken(knex, user.id, { name: `t${i}`, scopes: ['read'] });
    const refused = await request(server.baseUrl, '/api/account/tokens', { token: user.token, json: { name: 'one more', scopes: ['read'] } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'ACCESS_TOKEN_LIMIT', error: ACCESS_TOKEN_MSG.tooMany });
    const [first] = await listAccessTokens(knex, user.id);
    expect((await request(server.baseUrl, `/api/account/tokens/${first.id}`, { method: 'DELETE', token: user.token })).status).toBe(200);
    expect((await request(server.baseUrl, '/api/account/tokens', { token: user.token, json: { name: 'one more', scopes: ['read'] } })).status).toBe(201);
  });

  it("revokes: the token is refused (401) from the next request on, leaves the list, and another user's id is 404", async () => {
    const user = await createTestUser(server.baseUrl);
    const other = await createTestUser(server.baseUrl);
    const { token, id } = await newToken(user, ['read']);
    expect((await withToken(token, '/api/projects/list')).status).toBe(200);
    expect((await request(server.baseUrl, `/api/account/tokens/${id}`, { method: 'DELETE', token: other.token })).status).toBe(404);
    expect((await withToken(token, '/api/projects/list')).status).toBe(200);
    const revoked = await request(server.baseUrl, `/api/account/tokens/${id}`, { method: 'DELETE', token: user.token });
    expect(revoked.status).toBe(200);
    const after = await withToken(token, '/api/projects/list');
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ code: 'ACCESS_TOKEN_INVALID', error: ACCESS_TOKEN_MSG.invalid });
    expect((await request(server.baseUrl, '/api/account/tokens', { token: user.token })).body.tokens).toEqual([]);
    expect((await request(server.baseUrl, `/api/account/tokens/${id}`, { method: 'DELETE', token: user.token })).status).toBe(404);
    expect((await request(server.baseUrl, '/api/account/tokens/not-an-id', { method: 'DELETE', token: user.token })).status).toBe(400);
  });

  it('signing out with a token is refused (400, saying tokens are revoked on the Security page), and the token and the session keep working', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token } = await newToken(user, ['read']);
    const signOut = await request(server.baseUrl, '/api/auth/signout', { token, json: {} });
    expect({ status: signOut.status, body: signOut.body }).toEqual({ status: 400, body: { success: false, error: ACCESS_TOKEN_MSG.notSignedOut, code: 'ACCESS_TOKEN_NOT_SIGNED_OUT' } });
    expect((await withToken(token, '/api/projects/list')).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(200);
  });

  it('a token cannot list, create or revoke tokens', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token, id } = await newToken(user, ['read', 'generate', 'approve', 'billing:read']);
    for (const [method, path, json] of [
      ['GET', '/api/account/tokens', undefined],
      ['POST', '/api/account/tokens', { name: 'more', scopes: ['read'] }],
      ['DELETE', `/api/account/tokens/${id}`, undefined],
    ] as const) {
      const res = await withToken(token, path, { method, json });
      expect({ method, status: res.status, code: res.body.code }).toEqual({ method, status: 403, code: 'TOKEN_NOT_ALLOWED' });
    }
    expect(await listAccessTokens(knex, user.id)).toHaveLength(1);
  });
});

describe('authenticating with a token', () => {
  it('acts as its user: reads their projects and profile with `read`', async () => {
    const user = await createTestUser(server.baseUrl, { name: 'Token Reader' });
    const { token } = await newToken(user, ['read']);
    const profile = await withToken(token, '/api/profile');
    expect(profile.status).toBe(200);
    expect(JSON.stringify(profile.body)).toContain('Token Reader');
    const workspaces = await withToken(token, '/api/workspaces');
    expect(workspaces.status).toBe(200);
    expect(JSON.stringify(workspaces.body)).toContain(user.id);
  });

  it('refuses an unknown, malformed or expired token (401), and a session token still works as before', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token, id } = await newToken(user, ['read']);
    await knex('access_tokens').where({ id }).update({ expires_at: knex.raw(`now() - interval '1 second'`) });
    for (const bad of [token, `rs_pat_${'A'.repeat(43)}`, 'rs_pat_short']) {
      const res = await withToken(bad, '/api/projects/list');
      expect({ bad, status: res.status, code: res.body.code }).toEqual({ bad, status: 401, code: 'ACCESS_TOKEN_INVALID' });
    }
    expect((await request(server.baseUrl, '/api/projects/list', { token: user.token })).status).toBe(200);
    const list = await request<{ tokens: Array<{ expired: boolean }> }>(server.baseUrl, '/api/account/tokens', { token: user.token });
    expect(list.body.tokens).toEqual([expect.objectContaining({ id, expired: true })]);
  });

  it('logs each refused token with the reason and address, never the token', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token, id } = await newToken(user, ['read']);
    await request(server.baseUrl, `/api/account/tokens/${id}`, { method: 'DELETE', token: user.token });
    const from = address();
    await request(server.baseUrl, '/api/projects/list', { token, headers: { 'x-forwarded-for': from } });
    const line = logLines.find((l) => l.audit === 'access_token_refused' && l.tokenId === id);
    expect(line).toMatchObject({ reason: 'revoked', userId: user.id, ip: from, prefix: token.slice(0, 12) });
    expect(JSON.stringify(logLines)).not.toContain(token);
  });

  it('records the last use (time and address), writing it again only after a minute or from another address', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token, id } = await newToken(user, ['read']);
    const use = (ip: string) => request(server.baseUrl, '/api/projects/list', { token, headers: { 'x-forwarded-for': ip } });
    const read = () => knex('access_tokens').where({ id }).first('last_used_at', 'last_used_ip');
    expect(await read()).toEqual({ last_used_at: null, last_used_ip: null });
    await use('203.0.113.7');
    const first = await read();
    expect(first.last_used_ip).toBe('203.0.113.7');
    expect(first.last_used_at).toBeInstanceOf(Date);
    // set it a little into the past so a write would show: within the minute, the same address does not write
    await knex('access_tokens').where({ id }).update({ last_used_at: knex.raw(`now() - interval '10 seconds'`) });
    const marked = await read();
    await use('203.0.113.7');
    expect(await read()).toEqual(marked);
    await use('203.0.113.8');
    const moved = await read();
    expect(moved.last_used_ip).toBe('203.0.113.8');
    expect(moved.last_used_at.getTime()).toBeGreaterThan(marked.last_used_at.getTime());
    await knex('access_tokens').where({ id }).update({ last_used_at: knex.raw(`now() - make_interval(secs => ?)`, [LAST_USE_WRITE_INTERVAL_SECONDS + 1]) });
    const old = await read();
    await use('203.0.113.8');
    expect((await read()).last_used_at.getTime()).toBeGreaterThan(old.last_used_at.getTime());
    const list = await request<{ tokens: Array<{ lastUsedIp: string; lastUsedAt: string }> }>(server.baseUrl, '/api/account/tokens', { token: user.token });
    expect(list.body.tokens[0]).toMatchObject({ lastUsedIp: '203.0.113.8', lastUsedAt: expect.any(String) });
  });

  it('is not subject to the CSRF check (a cookie-authenticated write from another site still is)', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token } = await newToken(user, ['generate']);
    const foreign = { origin: 'https://evil.example', 'x-forwarded-for': address() };
    const byToken = await request(server.baseUrl, '/api/projects', { token, json: { name: 'From a script' }, headers: foreign });
    expect(byToken.status).toBe(201);
    const byCookie = await request(server.baseUrl, '/api/projects', { json: { name: 'From a page' }, headers: { ...foreign, cookie: user.cookie } });
    expect(byCookie.status).toBe(403);
    expect(byCookie.body.code).toBe('CSRF_REJECTED');
  });

  it('counts bad tokens against the sign-in limits of the address: locked, it gets 429 for tokens and sign-ins alike', async () => {
    const limited = await serve(
      createApp({
        config: { ...loadConfig(), trustProxyHops: 1 },
        knex,
        logger,
        signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `patl${randomUUID().slice(0, 6)}`, perIp: { points: 3, durationSeconds: 600, blockSeconds: 900 } },
      }),
    );
    servers.push(limited);
    const user = await createTestUser(limited.baseUrl);
    const { token } = await (async () => {
      const res = await request<{ token: string }>(limited.baseUrl, '/api/account/tokens', { token: user.token, json: { name: 'ci', scopes: ['read'] } });
      return res.body;
    })();
    const ip = '192.0.2.44';
    const call = (t: string) => request(limited.baseUrl, '/api/projects/list', { token: t, headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 3; i += 1) expect((await call(`rs_pat_${randomUUID().replace(/-/g, '').padEnd(43, 'x')}`)).status).toBe(401);
    const locked = await call(token);
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('RATE_LIMITED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    const signIn = await request(limited.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password }, headers: { 'x-forwarded-for': ip } });
    expect(signIn.status).toBe(429);
    // another address is not affected
    expect((await request(limited.baseUrl, '/api/projects/list', { token, headers: { 'x-forwarded-for': '192.0.2.45' } })).status).toBe(200);
  });
});

describe('scopes', () => {
  it('refuses a call outside the scopes with 403 naming the missing scope, and changes nothing', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token } = await newToken(user, ['read']);
    const before = await knex('projects').where({ workspace_id: user.id }).count<{ n: string }[]>('* as n');
    const res = await withToken(token, '/api/projects', { json: { name: 'Not allowed' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "generate" scope', requiredScope: 'generate' });
    expect(await knex('projects').where({ workspace_id: user.id }).count<{ n: string }[]>('* as n')).toEqual(before);
    const approve = await withToken(token, '/api/approvals/approve', { json: { approvalId: randomUUID() } });
    expect(approve.body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "approve" scope' });
    const purchases = await withToken(token, '/api/stripe/purchases');
    expect(purchases.body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "billing:read" scope' });
    // the scope given: allowed
    const { token: writer } = await newToken(user, ['generate']);
    expect((await withToken(writer, '/api/projects', { json: { name: 'Allowed' } })).status).toBe(201);
    // `generate` alone does not read
    expect((await withToken(writer, '/api/projects/list')).body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "read" scope' });
  });

  it('never manages members, billing, webhooks, the workspace or the account, whatever the scopes; nor site administration', async () => {
    const owner = await createTestUser(server.baseUrl);
    await makeAdmin(knex, owner.id);
    const team = await createTeamWorkspace(server.baseUrl, { owner });
    const { token } = await newToken(owner, ['read', 'generate', 'approve', 'billing:read']);
    const never: Array<[string, string, unknown, string]> = [
      ['POST', `/api/workspaces/${team.id}/invitations`, { email: 'x@example.test', role: 'viewer' }, ACCESS_TOKEN_MSG.neverManage],
      ['PATCH', `/api/workspaces/${team.id}`, { name: 'Renamed' }, ACCESS_TOKEN_MSG.neverManage],
      ['DELETE', `/api/workspaces/${team.id}`, undefined, ACCESS_TOKEN_MSG.neverManage],
      ['POST', '/api/stripe/create-checkout-session', { packageId: 'small' }, ACCESS_TOKEN_MSG.neverManage],
      ['PATCH', '/api/profile', { name: 'Renamed' }, ACCESS_TOKEN_MSG.neverAccount],
      ['POST', '/api/profile/password', { currentPassword: owner.password, newPassword: 'another-pass-1' }, ACCESS_TOKEN_MSG.neverAccount],
      ['POST', '/api/workspaces', { name: 'By token' }, ACCESS_TOKEN_MSG.neverAccount],
      ['GET', '/api/account/exports', undefined, ACCESS_TOKEN_MSG.neverAccount],
      ['POST', '/api/account/delete', { confirmEmail: owner.email }, ACCESS_TOKEN_MSG.neverAccount],
      ['GET', '/api/admin/users', undefined, ACCESS_TOKEN_MSG.neverAdmin],
    ];
    for (const [method, path, json, error] of never) {
      const res = await withToken(token, path, { method, json, headers: inWorkspace(team.id) });
      expect({ method, path, status: res.status, code: res.body.code, error: res.body.error }).toEqual({ method, path, status: 403, code: 'TOKEN_NOT_ALLOWED', error });
    }
    expect(await knex('workspaces').where({ id: team.id }).first('name')).toEqual({ name: team.name });
    expect(await knex('workspace_invitations').where({ workspace_id: team.id }).count<{ n: string }[]>('* as n')).toEqual([{ n: '0' }]);
    // reads it may do: billing reads, the members list, the user's workspaces
    expect((await withToken(token, '/api/stripe/purchases', { headers: inWorkspace(team.id) })).status).toBe(200);
    expect((await withToken(token, `/api/workspaces/${team.id}/members`)).status).toBe(200);
  });

  it("still applies the user's role: a viewer's `generate` token cannot upload or generate in the team workspace", async () => {
    const team = await createTeamWorkspace(server.baseUrl);
    const viewer = await joinWorkspace(server.baseUrl, team, 'viewer');
    const { token } = await newToken(viewer, ['read', 'generate']);
    const res = await withToken(token, '/api/projects', { json: { name: 'Viewer project' }, headers: inWorkspace(team.id) });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    expect((await withToken(token, '/api/projects/list', { headers: inWorkspace(team.id) })).status).toBe(200);
    // a workspace the user is not in: 404, as for the user
    const stranger = await createTeamWorkspace(server.baseUrl);
    expect((await withToken(token, '/api/projects/list', { headers: inWorkspace(stranger.id) })).status).toBe(404);
  });

  it('refuses tokens on the routes that answer their own sign-in text, by scope, before they read anything', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token } = await newToken(user, ['read']);
    const form = new FormData();
    form.set('file', new Blob([Buffer.from('x')], { type: 'image/png' }), 'x.png');
    const upload = await request(server.baseUrl, '/api/upload/renders', { token, body: form, headers: { 'x-forwarded-for': address() } });
    expect(upload.status).toBe(403);
    expect(upload.body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "generate" scope' });
    const invalid = await request(server.baseUrl, '/api/upload/renders', { token: `rs_pat_${'B'.repeat(43)}`, body: form, headers: { 'x-forwarded-for': address() } });
    expect(invalid.status).toBe(401);
  });

  it('refuses tokens on a route without a describeRoute record (deny by default), and lets sessions through as before', async () => {
    const user = await createTestUser(server.baseUrl);
    const { token } = await newToken(user, ['read', 'generate', 'approve', 'billing:read']);
    const router = new Router();
    router.get('/api/undescribed', (ctx) => {
      ctx.body = { success: true, reached: true };
    });
    describeRoute(router, { method: 'get', path: '/api/described', tag: 'Test', summary: 'a read', access: 'session', workspace: 'read', responses: {} });
    router.get('/api/described', (ctx) => {
      ctx.body = { success: true, reached: true };
    });
    guardTokenScopes({ knex }, [router]);
    const app = new Koa({ proxy: true, maxIpsCount: 1 });
    app.use(errorHandler);
    app.use(router.routes());
    const bare = await serve(app);
    servers.push(bare);
    const call = (path: string, bearer?: string) => request(bare.baseUrl, path, { token: bearer, headers: { 'x-forwarded-for': address() } });
    const refused = await call('/api/undescribed', token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'TOKEN_NOT_ALLOWED', error: ACCESS_TOKEN_MSG.notAccepted });
    expect(await call('/api/described', token)).toMatchObject({ status: 200, body: { reached: true } });
    // the guard looks only at access tokens: without one, the route's own checks decide (here, none)
    expect(await call('/api/undescribed')).toMatchObject({ status: 200, body: { reached: true } });
  });
});
