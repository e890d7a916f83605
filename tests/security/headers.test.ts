import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { runBackend } from '../support/objectStorage';

let dist: string;
const servers: TestServer[] = [];

async function start(overrides: Partial<AppConfig>): Promise<TestServer> {
  const server = await serve(createApp({ config: { ...loadConfig(), frontendDist: dist, ...overrides }, knex: testKnex(), logger }));
  servers.push(server);
  return server;
}

beforeAll(async () => {
  dist = await fs.mkdtemp(path.join(os.tmpdir(), 'headers-dist-'));
  await fs.mkdir(path.join(dist, 'assets'));
  await fs.writeFile(path.join(dist, 'index.html'), '<!doctype html><html><head><script type="module" src="/assets/app.js"></script></head><body></body></html>');
  await fs.writeFile(path.join(dist, 'assets', 'app.js'), 'console.log(1);\n//# sourceMappingURL=app.js.map\n');
  await fs.writeFile(path.join(dist, 'assets', 'app.js.map'), '{"version":3,"sources":["src/main.tsx"],"mappings":""}');
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await fs.rm(dist, { recursive: true, force: true });
  await closeTestKnex();
});

function expectSecurityHeaders(headers: Headers): void {
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("connect-src 'self'");
  expect(csp).toContain("object-src 'none'");
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
  expect(headers.get('x-frame-options')).toBe('DENY');
}

describe('security headers', () => {
  it('are on the app page, API answers, refusals and unknown paths; no HSTS over plain http', async () => {
    const server = await start({});
    const answers = await Promise.all([
      request(server.baseUrl, '/'),
      request(server.baseUrl, '/projects/deep/link'),
      request(server.baseUrl, '/api/health'),
      request(server.baseUrl, '/api/projects/list'),
      request(server.baseUrl, '/api/no-such-route'),
      request(server.baseUrl, '/api/auth/signin', { json: {} }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, expect.any(Number), 401, 401, 400]);
    for (const answer of answers) {
      expectSecurityHeaders(answer.headers);
      expect(answer.headers.get('strict-transport-security')).toBeNull();
      expect(answer.headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
    }
  });

  it('send HSTS and upgrade-insecure-requests when PUBLIC_URL is https', async () => {
    const server = await start({ publicUrl: 'https://studio.example' });
    const res = await request(server.baseUrl, '/');
    expectSecurityHeaders(res.headers);
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=31536000/);
    expect(res.headers.get('content-security-policy')).toContain('upgrade-insecure-requests');
  });

  it('leave a stored file its own sandboxing CSP and nosniff, and it still serves', async () => {
    const server = await start({});
    const user = await createTestUser(server.baseUrl);
    const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Files' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    const sharp = (await import('sharp')).default;
    const bytes = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#88aacc' } }).png().toBuffer();
    form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'tiny.png');
    const upload = await request<{ render: { data: { file_url: string } }; url: string }>(server.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
    expect(upload.status).toBe(200);
    const content = await request<{ content: Array<{ signed_url: string }> }>(server.baseUrl, `/api/projects/${project.body.project.id}/content`, { token: user.token });
    const link = content.body.content[0].signed_url;
    const file = await fetch(new URL(link, server.baseUrl));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    if (runBackend() === 's3') {
      // served by the object storage, on its own origin: nothing of an uploaded file runs as the app
      expect(new URL(link).origin).not.toBe(new URL(server.baseUrl).origin);
    } else {
      expect(file.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('serve no source maps in production, and do in development', async () => {
    const production = await start({ nodeEnv: 'production' });
    const development = await start({ nodeEnv: 'development' });
    expect((await request(production.baseUrl, '/assets/app.js.map')).status).toBe(404);
    expect((await request(production.baseUrl, '/assets/APP.JS.MAP')).status).toBe(404);
    expect((await request(production.baseUrl, '/assets/app.js')).status).toBe(200);
    expect((await request(development.baseUrl, '/assets/app.js.map')).status).toBe(200);
  });
});
