import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { routerDispatch } from '../../api/routes';

/**
 * routerDispatch (api/routes/index.ts) runs only the routers with a route under a request's first two path segments.
 * It must answer every request exactly as mounting each router's routes() and allowedMethods() in turn does: same
 * status, body, Allow header and matched route, for hits, misses, wrong methods, unknown methods, OPTIONS, case,
 * trailing slashes, encoded and non-ASCII paths. Routers shaped like the app's: r.use() middleware, parameters
 * after the second segment, two routers sharing a prefix, one-segment paths.
 */
function routers(): Router[] {
  const named = (name: string) => (ctx: Koa.Context) => {
    ctx.body = { name, params: ctx.params };
  };
  const health = new Router();
  health.get('/health/live', named('live'));
  health.get('/api/health', named('health'));
  const metrics = new Router();
  metrics.get('/metrics', named('metrics'));
  const credits = new Router();
  credits.get('/api/credits/summary', named('summary'));
  credits.get('/api/credits/limits', named('limits'));
  const projects = new Router();
  projects.use(async (ctx, next) => {
    ctx.set('x-projects-use', '1');
    await next();
  });
  projects.get('/api/projects/list', named('list'));
  projects.post('/api/projects', named('create'));
  projects.get('/api/projects/:id', named('project'));
  projects.delete('/api/projects/:id', named('delete'));
  const assembly = new Router();
  assembly.get('/api/projects/:id/aesthetic', named('aesthetic'));
  assembly.post('/api/video/assemble', named('assemble'));
  const files = new Router();
  files.get('/api/files/:bucket/*path', named('file'));
  const docs = new Router();
  docs.get('/api/openapi.json', named('openapi'));
  return [health, metrics, credits, projects, assembly, files, docs];
}

function appWith(mount: (app: Koa, rs: Router[]) => void): Koa {
  const app = new Koa();
  app.use(async (ctx, next) => {
    await next();
    ctx.set('x-matched-route', String((ctx as { _matchedRoute?: string })._matchedRoute ?? '-'));
  });
  mount(app, routers());
  // what comes after the routers (the static front end in the app)
  app.use(async (ctx, next) => {
    if (ctx.path === '/index.html' && ctx.method === 'GET') ctx.body = 'page';
    await next();
  });
  return app;
}

const plain = appWith((app, rs) => {
  for (const r of rs) {
    app.use(r.routes());
    app.use(r.allowedMethods());
  }
});
const dispatched = appWith((app, rs) => {
  app.use(routerDispatch(rs));
});

let servers: http.Server[] = [];
let ports: number[] = [];

beforeAll(async () => {
  servers = [http.createServer(plain.callback()), http.createServer(dispatched.callback())];
  ports = await Promise.all(
    servers.map((s) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)))),
  );
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

function send(port: number, method: string, path: string): Promise<{ status: number; body: string; allow?: string; route?: string; use?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          allow: res.headers.allow as string | undefined,
          route: res.headers['x-matched-route'] as string | undefined,
          use: res.headers['x-projects-use'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const PATHS = [
  '/',
  '/index.html',
  '/metrics',
  '/metrics/',
  '/METRICS',
  '/health/live',
  '/health',
  '/api',
  '/api/',
  '/api/health',
  '/api/health/',
  '/api/credits/summary',
  '/API/Credits/Summary',
  '/api/credits/summary/',
  '/api/credits/summary/x',
  '/api/credits',
  '/api/credits/',
  '/api/cr%65dits/summary',
  '//api/credits/summary',
  '/api/projects',
  '/api/projects/',
  '/api/projects/list',
  '/api/projects/abc',
  '/api/projects/abc/aesthetic',
  '/api/projects/abc/nothing',
  '/api/video/assemble',
  '/api/files/renders/a/b.png',
  '/api/files/renders',
  '/api/openapi.json',
  '/api/openapi.JSON',
  '/api/unknown/thing',
  '/api/pr\u00f6jects/abc',
  '/api/credits/summ\u00e4ry',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'];

describe('routerDispatch', () => {
  it('answers every request exactly as the routers mounted one after another', async () => {
    const differences: string[] = [];
    for (const path of PATHS) {
      for (const method of METHODS) {
        const encoded = encodeURI(path).replace(/%25/g, '%');
        const [a, b] = await Promise.all(ports.map((port) => send(port, method, encoded)));
        if (JSON.stringify(a) !== JSON.stringify(b)) differences.push(`${method} ${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it('still routes: a hit, a parameter, a 405 with Allow and an unknown method', async () => {
    const port = ports[1];
    expect(JSON.parse((await send(port, 'GET', '/api/credits/summary')).body)).toEqual({ name: 'summary', params: {} });
    expect(JSON.parse((await send(port, 'GET', '/api/projects/p1/aesthetic')).body)).toEqual({ name: 'aesthetic', params: { id: 'p1' } });
    const wrong = await send(port, 'POST', '/api/credits/summary');
    expect([wrong.status, wrong.allow]).toEqual([405, 'HEAD, GET']);
    expect((await send(port, 'TRACE', '/anything')).status).toBe(501);
    expect((await send(port, 'GET', '/api/projects/list')).use).toBe('1');
  });
});
