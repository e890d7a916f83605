/**
 * The built front end as the API serves it: precompressed brotli/gzip copies chosen by Accept-Encoding,
 * year-long immutable caching for hashed assets and no-cache for index.html, byte ranges for videos, and no
 * source maps in production. The browser-side counterpart (a real build in Chromium) is
 * tests/browser/landingBundle.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Koa from 'koa';
import { staticFrontend } from '../../api/middleware/staticFrontend';
import { serve, type TestServer } from '../support/http';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A plain GET that shows the bytes on the wire (fetch would decompress them and hide Content-Encoding). */
function rawGet(baseUrl: string, pathname: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // Connection: close, so no kept-alive socket is cut by the server's close at the end of the file
    const req = http.request(`${baseUrl}${pathname}`, { method, headers: { connection: 'close', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      // settled when the server has closed the socket, i.e. finished its side too
      req.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const SCRIPT = `console.log(${JSON.stringify('render studio '.repeat(400))});`;
const VIDEO = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

let dist: string;
let production: TestServer;
let development: TestServer;

function appFor(serveSourceMaps: boolean): Koa {
  const app = new Koa();
  // a client that has all the bytes may close before the server's stream reports 'finish' (a benign
  // "Premature close"); statuses and bodies are what these tests check
  app.silent = true;
  app.use(staticFrontend(dist, { serveSourceMaps }));
  return app;
}

beforeAll(async () => {
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-static-'));
  fs.mkdirSync(path.join(dist, 'assets'));
  const html = `<!doctype html><title>render studio</title><div id="root"></div>${'<!-- padding -->'.repeat(100)}`;
  const files: Record<string, string | Buffer> = {
    'index.html': html,
    'assets/index-3f2a1b.js': SCRIPT,
    'assets/index-3f2a1b.js.map': '{"version":3}',
    'assets/hero-a1b2c3.mp4': VIDEO,
  };
  for (const [name, data] of Object.entries(files)) fs.writeFileSync(path.join(dist, name), data);
  // what the build's precompress step writes beside text files
  for (const name of ['index.html', 'assets/index-3f2a1b.js']) {
    const data = fs.readFileSync(path.join(dist, name));
    fs.writeFileSync(path.join(dist, `${name}.br`), zlib.brotliCompressSync(data));
    fs.writeFileSync(path.join(dist, `${name}.gz`), zlib.gzipSync(data));
  }
  production = await serve(appFor(false));
  development = await serve(appFor(true));
});

afterAll(async () => {
  await production?.close();
  await development?.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

describe('static front end: compression', () => {
  it('serves the brotli copy of a script to a browser that accepts br, with Vary and the script type', async () => {
    const res = await rawGet(production.baseUrl, '/assets/index-3f2a1b.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers.vary).toMatch(/Accept-Encoding/i);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.body.length).toBeLessThan(SCRIPT.length / 5);
    expect(zlib.brotliDecompressSync(res.body).toString()).toBe(SCRIPT);
  });

  it('serves gzip when brotli is not accepted, and the plain file when nothing is', async () => {
    const gz = await rawGet(production.baseUrl, '/assets/index-3f2a1b.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.body).toString()).toBe(SCRIPT);
    const plain = await rawGet(production.baseUrl, '/assets/index-3f2a1b.js', { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
  });

  it('compresses index.html too, for / and for app paths', async () => {
    for (const p of ['/', '/projects?view=approvals']) {
      const res = await rawGet(production.baseUrl, p, { 'accept-encoding': 'br' });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(zlib.brotliDecompressSync(res.body).toString()).toContain('<div id="root">');
    }
  });
});

describe('static front end: caching', () => {
  it('caches hashed assets for a year as immutable, and never caches index.html', async () => {
    const asset = await rawGet(production.baseUrl, '/assets/index-3f2a1b.js', { 'accept-encoding': 'br' });
    expect(asset.headers['cache-control']).toBe('max-age=31536000,immutable');
    const page = await rawGet(production.baseUrl, '/', { 'accept-encoding': 'br' });
    expect(page.headers['cache-control']).toBe('no-cache');
  });
});

describe('static front end: videos', () => {
  it('answers byte ranges for a video, with the immutable cache and the video type', async () => {
    const whole = await rawGet(production.baseUrl, '/assets/hero-a1b2c3.mp4');
    expect(whole.status).toBe(200);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect(whole.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(whole.body.equals(VIDEO)).toBe(true);

    const part = await rawGet(production.baseUrl, '/assets/hero-a1b2c3.mp4', { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${VIDEO.length}`);
    expect(part.body.equals(VIDEO.subarray(100, 200))).toBe(true);

    const tail = await rawGet(production.baseUrl, '/assets/hero-a1b2c3.mp4', { range: 'bytes=4990-' });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(VIDEO.subarray(4990))).toBe(true);

    const past = await rawGet(production.baseUrl, '/assets/hero-a1b2c3.mp4', { range: 'bytes=9000-' });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${VIDEO.length}`);
  });

  it('answers 404 for a missing video and never leaves the folder', async () => {
    expect((await rawGet(production.baseUrl, '/assets/gone-123.mp4')).status).toBe(404);
    const escape = await rawGet(production.baseUrl, '/assets/..%2f..%2f..%2fetc%2fpasswd.mp4');
    expect([403, 404]).toContain(escape.status);
    expect(escape.body.toString()).not.toContain('root:');
  });
});

describe('static front end: source maps', () => {
  it('never serves a .map in production, and does in development', async () => {
    expect((await rawGet(production.baseUrl, '/assets/index-3f2a1b.js.map')).status).toBe(404);
    const dev = await rawGet(development.baseUrl, '/assets/index-3f2a1b.js.map');
    expect(dev.status).toBe(200);
    expect(dev.body.toString()).toBe('{"version":3}');
  });
});
