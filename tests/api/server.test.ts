import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { startServer } from '../../api/server';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

const ROOT = path.resolve(__dirname, '..', '..');
let knex: Knex;
let dist: string;
let server: TestServer;

beforeAll(async () => {
  knex = testKnex();
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-dist-'));
  fs.mkdirSync(path.join(dist, 'assets'));
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>render studio</title><div id="root"></div>');
  fs.writeFileSync(path.join(dist, 'assets', 'index-3f2a1b.js'), 'console.log("app")');
  fs.writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  server = await serve(createApp({ config: { ...loadConfig(), frontendDist: dist }, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
  fs.rmSync(dist, { recursive: true, force: true });
});

describe('serving the built front end', () => {
  it('serves index.html at / and for app paths (SPA fallback), never cached', async () => {
    for (const p of ['/', '/projects', '/account?view=security']) {
      const res = await fetch(`${server.baseUrl}${p}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<div id="root">');
    }
  });

  it('serves hashed assets with a long immutable cache, and other files as they are', async () => {
    const asset = await fetch(`${server.baseUrl}/assets/index-3f2a1b.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('max-age=31536000,immutable');
    expect(await asset.text()).toBe('console.log("app")');
    const icon = await fetch(`${server.baseUrl}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/svg/);
  });

  it('answers 404 for missing assets and files instead of the page', async () => {
    expect((await fetch(`${server.baseUrl}/assets/gone-123.js`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/missing.png`)).status).toBe(404);
  });

  it('never serves files outside the folder', async () => {
    const res = await fetch(`${server.baseUrl}/..%2f..%2fpackage.json`);
    expect(await res.text()).not.toContain('render-studio');
  });

  it('keeps /api paths out of the fallback', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/unknown-route', { token: user.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Not found' });
  });
});

describe('startServer', () => {
  it('listens on the configured host and port, answers health, and closes', async () => {
    const running = await startServer({ ...loadConfig(), port: 0, host: '127.0.0.1', frontendDist: dist });
    try {
      const res = await request(running.url, '/api/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, status: 'ok' });
    } finally {
      await running.close();
    }
    await expect(fetch(`${running.url}/api/health`)).rejects.toThrow();
  });
});

describe('api/server.ts as a process', () => {
  it('stops gracefully on SIGTERM with exit code 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SERVICE_NAME: 'api', FRONTEND_DIST: dist },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Array<Record<string, unknown>> = [];
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        for (const part of parts.filter(Boolean)) {
          const line = JSON.parse(part) as Record<string, unknown>;
          lines.push(line);
          if (line.msg === 'api listening') resolve(String(line.url));
        }
      });
      exited.then((code) => reject(new Error(`server exited early with ${code}`)));
    });
    const health = await request(url, '/api/health');
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['api listening', 'api stopping', 'api stopped']));
    const requestLine = lines.find((l) => l.msg === 'request');
    expect(requestLine).toMatchObject({ service: 'api', method: 'GET', path: '/api/health', status: 200 });
    expect(requestLine?.requestId).toBe(health.headers.get('x-request-id'));
  });
});
