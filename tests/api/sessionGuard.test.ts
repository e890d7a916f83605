import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Knex } from 'knex';
import Koa from 'koa';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { assertSelf, currentUser, isApiPath, isPublicApiRoute, requireAdmin, requireAuth } from '../../api/middleware/auth';
import { errorHandler } from '../../api/middleware/errors';
import { RequestError } from '../../api/validation';
import { buildRouters } from '../../api/routes';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser, makeAdmin } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let deps: AppDeps;
let server: TestServer;
let probe: TestServer;

/** A small app that uses the middleware the way resource routers do. */
function probeApp(): Koa {
  const router = new Router();
  router.get('/probe/self', requireAuth(deps), (ctx) => {
    const userId = typeof ctx.query.userId === 'string' ? ctx.query.userId : undefined;
    ctx.body = { success: true, actingFor: assertSelf(ctx, userId).id };
  });
  router.get('/probe/admin', requireAuth(deps), requireAdmin, (ctx) => {
    ctx.body = { success: true, admin: currentUser(ctx).email };
  });
  router.get('/probe/own-text', requireAuth(deps, { unauthenticatedMessage: 'Sign in to use the probe' }), (ctx) => {
    if (ctx.query.fail === '401') throw new RequestError(401, 'Rejected by the handler');
    ctx.body = { success: true, user: currentUser(ctx).id };
  });
  const app = new Koa();
  app.use(errorHandler);
  app.use(router.routes());
  return app;
}

beforeAll(async () => {
  knex = testKnex();
  deps = { config: loadConfig(), knex, logger };
  server = await serve(createApp(deps));
  probe = await serve(probeApp());
});

afterAll(async () => {
  await server.close();
  await probe.close();
  await closeTestKnex();
});

/** Every route the app mounts, with its parameters filled in. */
function mountedRoutes(): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  for (const router of buildRouters(deps)) {
    for (const layer of router.stack) {
      const path = String(layer.path)
        .replace(/\{[^}]*\}/g, '')
        .replace(/:(\w+)/g, () => randomUUID())
        .replace(/\*\w*/g, 'x');
      for (const method of layer.methods) if (method !== 'HEAD') routes.push({ method, path });
    }
  }
  return routes;
}

describe('the app-wide session guard', () => {
  it('answers 401 without a session on every mounted route that is not public', async () => {
    // the guard covers /api; the health probes (/health/live, /health/ready) sit outside it, open by design, and so
    // does /metrics, which has its own rule (loopback or METRICS_TOKEN; tests/metrics/httpMetrics.test.ts), and a review
    // link's page, whose token is its credential (api/routes/guestReview.ts, tests/review/reviewLinks.test.ts)
    const routes = mountedRoutes().filter((r) => isApiPath(r.path) && !isPublicApiRoute(r.method, r.path));
    expect(mountedRoutes().filter((r) => !isApiPath(r.path)).map((r) => r.path.replace(/^\/r\/[^/]+$/, '/r/:token'))).toEqual(['/health/live', '/health/ready', '/metrics', '/r/:token']);
    expect(routes.length).toBeGreaterThan(3);
    expect(routes).toEqual(expect.arrayContaining([{ method: 'GET', path: '/api/auth/me' }, { method: 'PATCH', path: '/api/profile' }]));
    const answers = await Promise.all(
      routes.map(async (r) => ({ ...r, res: await request(server.baseUrl, r.path, { method: r.method, json: ['GET', 'DELETE'].includes(r.method) ? undefined : {} }) })),
    );
    for (const { method, path, res } of answers) {
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, status: 401, body: { success: false, error: 'Authentication required' } });
    }
  });

  it.each(['/API/PROFILE', '/api//profile', '/api/%70rofile', '/api/profile/', '/api'])('is not bypassed by the spelling %s', async (path) => {
    const res = await request(server.baseUrl, path);
    expect(res.status).toBe(401);
  });

  it('leaves sign-up, sign-in, sign-out and health open', async () => {
    expect((await request(server.baseUrl, '/api/health')).status).toBe(200);
    expect((await request(server.baseUrl, '/health/live')).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/signout', { method: 'POST' })).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/signin', { json: {} })).status).toBe(400);
    expect((await request(server.baseUrl, '/api/auth/signup', { json: {} })).status).toBe(400);
  });

  it('classifies public routes by method and exact path', () => {
    expect(isPublicApiRoute('POST', '/api/auth/signin')).toBe(true);
    expect(isPublicApiRoute('GET', '/api/auth/signin')).toBe(false);
    expect(isPublicApiRoute('POST', '/api/auth/signin/extra')).toBe(false);
    expect(isPublicApiRoute('HEAD', '/api/health')).toBe(true);
    expect(isPublicApiRoute('GET', '/api/files/renders/a.png')).toBe(true);
    expect(isPublicApiRoute('GET', '/api/filesystem')).toBe(false);
  });
});

describe('assertSelf', () => {
  it("acts for the session's user when the userId is absent or their own, and refuses another id with 403", async () => {
    const user = await createTestUser(server.baseUrl);
    const none = await request(probe.baseUrl, '/probe/self', { token: user.token });
    const own = await request(probe.baseUrl, `/probe/self?userId=${user.id}`, { token: user.token });
    const other = await request(probe.baseUrl, `/probe/self?userId=${randomUUID()}`, { token: user.token });
    expect([none.status, none.body.actingFor]).toEqual([200, user.id]);
    expect([own.status, own.body.actingFor]).toEqual([200, user.id]);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ success: false, error: 'You do not have permission to act for another user' });
  });

  it('answers 401 before anything else without a session', async () => {
    const res = await request(probe.baseUrl, `/probe/self?userId=${randomUUID()}`);
    expect(res.status).toBe(401);
  });
});

describe('requireAuth with a route\'s own 401 text', () => {
  it('answers a request without a session with that text and code LOGIN_REQUIRED', async () => {
    const res = await request(probe.baseUrl, '/probe/own-text');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Sign in to use the probe', code: 'LOGIN_REQUIRED' });
  });

  it("lets a signed-in user through and leaves the handler's own 401 as it is", async () => {
    const user = await createTestUser(server.baseUrl);
    const ok = await request(probe.baseUrl, '/probe/own-text', { token: user.token });
    expect([ok.status, ok.body.user]).toEqual([200, user.id]);
    const handler401 = await request(probe.baseUrl, '/probe/own-text?fail=401', { token: user.token });
    expect(handler401.status).toBe(401);
    expect(handler401.body).toEqual({ success: false, error: 'Rejected by the handler' });
  });
});

describe('requireAdmin', () => {
  it('refuses ordinary users with 403 and lets admins through', async () => {
    const user = await createTestUser(server.baseUrl);
    const refused = await request(probe.baseUrl, '/probe/admin', { token: user.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: 'Admin access required' });
    await makeAdmin(knex, user.id);
    const allowed = await request(probe.baseUrl, '/probe/admin', { token: user.token });
    expect([allowed.status, allowed.body.admin]).toEqual([200, user.email]);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.role).toBe('admin');
  });
});
