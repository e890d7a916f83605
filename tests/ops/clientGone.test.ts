import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../../api/app';
import { isClientGone } from '../../api/middleware/errors';
import { loadConfig, type AppConfig } from '../../config/env';
import { createStorage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { serve, type TestServer } from '../support/http';

/** Every line the app logs, at every level. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, sink), lines };
}

const ERROR = 50;
const BIG_FILE_BYTES = 64 * 1024 * 1024;
let storageDir: string;
let config: AppConfig;
let server: TestServer;
const captured = capturingLogger();

beforeAll(async () => {
  storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-client-gone-'));
  // its own folder on local disk whatever the run's backend: the subject is the API's own /api/files streaming;
  // no Stripe: purchases and webhooks are refused as on a server without it
  config = { ...loadConfig(), storageBackend: 'local', storageDir, stripeSecretKey: '', stripeWebhookSecret: '' };
  const app = createApp({ config, knex: testKnex(), logger: captured.logger });
  app.use(async (ctx, next) => {
    if (ctx.path === '/api/test/explode') throw new Error('disk on fire');
    await next();
  });
  server = await serve(app);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
  fs.rmSync(storageDir, { recursive: true, force: true });
});

/** Sends `head` (and `body`) on a raw socket, reads until `readBytes` came back (0: nothing), then drops the connection. */
function rawExchange(head: string, body: Buffer | null, readBytes: number): Promise<number> {
  const { port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = 0;
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (readBytes > 0 && received >= readBytes) socket.destroy();
    });
    socket.once('close', () => resolve(received));
    socket.write(head);
    if (body) socket.write(body);
    if (readBytes === 0) setTimeout(() => socket.destroy(), 300);
  });
}

/** Waits until the server has logged the request line for `path` (written once the request is over). */
async function requestLogged(pathPrefix: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (captured.lines.filter((l) => l.msg === 'request' && String(l.path).startsWith(pathPrefix)).length < count) {
    if (Date.now() > deadline) throw new Error(`no request line for ${pathPrefix}: ${JSON.stringify(captured.lines.slice(-5))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // errors of a piped response are emitted just after the request line
  await new Promise((r) => setTimeout(r, 300));
}

const errorsLogged = () => captured.lines.filter((l) => (l.level as number) >= ERROR);

describe('a client that goes away', () => {
  it('mid-download of a large file: logged as routine, not as an error', async () => {
    const storage = createStorage(config);
    await storage.objects.put('clips', 'gone/big.mp4', Buffer.alloc(BIG_FILE_BYTES, 7));
    const url = storage.urls.sign('clips', 'gone/big.mp4');
    for (let i = 0; i < 3; i += 1) {
      const received = await rawExchange(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, null, 2 * 1024 * 1024);
      expect(received).toBeLessThan(BIG_FILE_BYTES);
    }
    await requestLogged('/api/files/', 3);
    // the piped response's failure is logged after the request line, as routine: wait for that line rather than
    // expecting it within a fixed time, then no line may be at error level
    const wentAway = () => captured.lines.some((l) => l.msg === 'client went away' && l.level === 20);
    for (const deadline = Date.now() + 30_000; !wentAway() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    expect(wentAway()).toBe(true);
    expect(errorsLogged()).toEqual([]);
  });

  it('mid-way through a request body (upload and JSON): no error-level line', async () => {
    const user = await createTestUser(server.baseUrl);
    const boundary = 'xxBOUNDARYxx';
    const part = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="render.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      Buffer.alloc(512 * 1024, 1),
    ]);
    const uploadHead = [
      'POST /api/upload/renders HTTP/1.1',
      'Host: 127.0.0.1',
      `Authorization: Bearer ${user.token}`,
      `Content-Type: multipart/form-data; boundary=${boundary}`,
      `Content-Length: ${10 * 1024 * 1024}`,
      '',
      '',
    ].join('\r\n');
    await rawExchange(uploadHead, part, 0);
    const jsonHead = ['POST /api/auth/signin HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Length: 5000', '', ''].join('\r\n');
    await rawExchange(jsonHead, Buffer.from('{"email": "half@exa'), 0);
    await requestLogged('/api/upload/renders', 1);
    await requestLogged('/api/auth/signin', 1);
    expect(errorsLogged()).toEqual([]);
  });

  it('still logs a real failure at error level, with its stack', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await fetch(`${server.baseUrl}/api/test/explode`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(res.status).toBe(500);
    await res.text();
    const logged = errorsLogged();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ msg: 'unhandled error', err: { message: 'disk on fire' } });
    expect(String((logged[0].err as { stack?: string }).stack)).toContain('clientGone.test.ts');
  });
});

describe('an expected refusal', () => {
  it('is a warn line without a stack, however often it is asked for (Stripe not configured: checkout and webhook)', async () => {
    const user = await createTestUser(server.baseUrl);
    const before = captured.lines.length;
    for (let i = 0; i < 3; i++) {
      const checkout = await fetch(`${server.baseUrl}/api/stripe/create-checkout-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ packageId: 'medium' }),
      });
      expect(checkout.status).toBe(503);
      expect(((await checkout.json()) as { code: string }).code).toBe('STRIPE_NOT_CONFIGURED');
      const webhook = await fetch(`${server.baseUrl}/api/stripe/webhook`, { method: 'POST', headers: { 'stripe-signature': 't=1,v1=x', 'content-type': 'application/json' }, body: '{}' });
      expect(webhook.status).toBe(503);
      await webhook.text();
    }
    const lines = captured.lines.slice(before);
    expect(lines.filter((l) => Number(l.level) >= ERROR)).toEqual([]);
    const refusals = lines.filter((l) => l.code === 'STRIPE_NOT_CONFIGURED');
    expect(refusals).toHaveLength(6);
    for (const line of refusals) {
      expect(line).toMatchObject({ level: 40, status: 503, msg: 'Credit purchases are not available: Stripe is not configured on this server' });
      expect(JSON.stringify(line)).not.toContain('stack');
    }
  });
});

describe('isClientGone', () => {
  const connected = { req: { destroyed: false, complete: false, closed: false, readableAborted: false, socket: { destroyed: false } }, res: { destroyed: false } } as never;
  const dropped = { req: { destroyed: true, complete: false, closed: true, readableAborted: true, socket: { destroyed: true } }, res: { destroyed: true } } as never;

  it('is true for a reset, a broken pipe or a premature close of a dropped connection', () => {
    for (const err of [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }), Object.assign(new Error('Parse Error: Invalid EOF state'), { code: 'HPE_INVALID_EOF_STATE' })]) {
      expect(isClientGone(err, dropped)).toBe(true);
    }
  });

  it('is false for the same codes while the client is still connected (an upstream failed), and for other errors', () => {
    expect(isClientGone(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), connected)).toBe(false);
    expect(isClientGone(new Error('disk on fire'), dropped)).toBe(false);
  });
});
