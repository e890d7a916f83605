/**
 * The API document covers exactly the routes the app mounts (the @koa/router stacks of buildRouters), is served at
 * /api/openapi.json with the schemas the routes validate with, and /api/docs serves its reference page under the
 * app's strict CSP.
 */
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { documentedRoutes, mountedRoutes } from '../../api/openapi/document';
import { buildRouters } from '../../api/routes';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let knex: Knex;
let server: TestServer;
let routers: Router[];

beforeAll(async () => {
  knex = testKnex();
  const deps = { config: loadConfig(), knex, logger };
  routers = buildRouters(deps);
  server = await serve(createApp(deps));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

describe('the API document', () => {
  it('describes every route the app mounts, and no route that is not mounted', () => {
    const mounted = mountedRoutes(routers).map(key).sort();
    const documented = documentedRoutes(routers).map(key).sort();
    expect(mounted.length).toBeGreaterThan(50);
    expect({ undocumented: mounted.filter((r) => !documented.includes(r)), notMounted: documented.filter((r) => !mounted.includes(r)) }).toEqual({
      undocumented: [],
      notMounted: [],
    });
  });

  it('is served at /api/openapi.json without a session, with one operation per mounted route', async () => {
    const res = await request<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(server.baseUrl, '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    const served = Object.entries(res.body.paths).flatMap(([path, item]) => Object.keys(item).map((method) => key({ method, path })));
    expect(served.sort()).toEqual(mountedRoutes(routers).map(key).sort());
  });

  it("carries the routes' own validation rules (from their zod schemas) and their answers", async () => {
    const { body: doc } = await request<any>(server.baseUrl, '/api/openapi.json');
    const signup = doc.paths['/api/auth/signup'].post;
    expect(signup.security).toEqual([]);
    expect(signup.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['email', 'password'],
      additionalProperties: false,
      properties: { name: { type: 'string', maxLength: 200 } },
    });
    expect(Object.keys(signup.responses).sort()).toEqual(['201', '400', '409', '413', '503']);

    const adminSearch = doc.paths['/api/admin/users'].get;
    expect(adminSearch.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query', required: false, schema: expect.objectContaining({ pattern: '^\\d{1,3}$' }) })]),
    );
    const rename = doc.paths['/api/projects/{id}/content/{source}/{itemId}'].patch;
    expect(rename.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'source', in: 'path', schema: expect.objectContaining({ enum: ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] }) }),
      ]),
    );
    expect(rename.security).toEqual([{ accessToken: ['generate'] }, { bearerAuth: [] }, { sessionCookie: [] }]);
    expect(rename['x-token-scope']).toBe('generate');
    const timeout = doc.paths['/api/projects/list'].get.responses['503'];
    expect(timeout.description).toContain('Query timeout after <ms>ms');
    expect(doc.paths['/api/upload/renders'].post.requestBody.content['multipart/form-data'].schema.properties.file).toMatchObject({ format: 'binary' });
    expect(doc.paths['/api/stripe/webhook'].post.responses['400'].description).toContain('signature');
  });
});

describe('personal access tokens in the document', () => {
  it('declares the access token scheme beside the session ones, and each operation the scope a token needs (null: none may)', async () => {
    const { body: doc } = await request<any>(server.baseUrl, '/api/openapi.json');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['accessToken', 'bearerAuth', 'sessionCookie']);
    expect(doc.components.securitySchemes.accessToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const op = (path: string, method: string) => doc.paths[path][method];
    expect(op('/api/projects/list', 'get')['x-token-scope']).toBe('read');
    expect(op('/api/approvals/approve', 'post').security).toEqual([{ accessToken: ['approve'] }, { bearerAuth: [] }, { sessionCookie: [] }]);
    expect(op('/api/stripe/purchases', 'get')['x-token-scope']).toBe('billing:read');
    expect(op('/api/profile', 'get')['x-token-scope']).toBe('read');
    for (const [path, method] of [
      ['/api/stripe/create-checkout-session', 'post'],
      ['/api/workspaces/{id}/invitations', 'post'],
      ['/api/workspaces/{id}', 'delete'],
      ['/api/account/tokens', 'get'],
      ['/api/account/tokens', 'post'],
      ['/api/profile', 'patch'],
      ['/api/admin/users', 'get'],
    ]) {
      expect({ path, method, scope: op(path, method)['x-token-scope'], security: op(path, method).security }).toEqual({
        path,
        method,
        scope: null,
        security: [{ bearerAuth: [] }, { sessionCookie: [] }],
      });
    }
    expect(op('/api/auth/signin', 'post')).not.toHaveProperty('x-token-scope');
  });
});

describe('GET /api/docs', () => {
  it('serves the reference page and its files from the app itself, under the strict CSP', async () => {
    const page = await request<string>(server.baseUrl, '/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(['/api/docs/assets/swagger-ui-bundle.js', '/api/docs/assets/docs-page.js']);
    expect(page.body).not.toMatch(/<script>|<style|style="/);
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript'],
      ['docs-page.js', 'text/javascript'],
      ['swagger-ui.css', 'text/css'],
    ]) {
      const res = await fetch(`${server.baseUrl}/api/docs/assets/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
      expect((await res.text()).length).toBeGreaterThan(100);
    }
    expect((await request(server.baseUrl, '/api/docs/assets/package.json')).status).toBe(404);
    expect((await request(server.baseUrl, '/api/docs/assets/..%2F..%2Fpackage.json')).status).toBe(404);
  });
});
