import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FalQueueClient } from '../../providers/fal/queueClient';
import { FAL_WEBHOOK_TOLERANCE_SECONDS, falWebhookKeysFrom, verifyFalWebhook } from '../../providers/fal/webhookSignature';
import { FAKE_FAL_USER_ID, signedFalWebhookHeaders, startFakeFal, type FakeFal } from '../support/fakeFal';

const KEY = 'webhook-signature-key';
const MODEL = 'fake/video-webhook';

/** Node's view of the headers: lower-case names. */
function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** A receiver for the fake's webhooks: keeps each request's headers and exact body. */
async function startReceiver(): Promise<{ url: string; received: Array<{ headers: http.IncomingHttpHeaders; body: Buffer }>; next: () => Promise<void>; close: () => Promise<void> }> {
  const received: Array<{ headers: http.IncomingHttpHeaders; body: Buffer }> = [];
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      waiting.splice(0).forEach((resolve) => resolve());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback?clip=1`;
  return {
    url,
    received,
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("fal's webhook signature (ED25519 over request id, user id, timestamp, body sha256; keys from a JWKS)", () => {
  let fal: FakeFal;

  beforeAll(async () => {
    fal = await startFakeFal({ apiKey: KEY, models: { [MODEL]: { kind: 'video', behaviour: 'succeed' } } });
  });

  afterAll(async () => {
    await fal?.close();
  });

  const body = Buffer.from(JSON.stringify({ request_id: 'req-1', gateway_request_id: 'req-1', status: 'OK', payload: { video: { url: 'https://example.test/v.mp4' } } }));
  const now = () => Date.now();

  it('verifies a callback the fake signs with the key it publishes', async () => {
    const keys = falWebhookKeysFrom(fal.jwksUrl);
    const verdict = await verifyFalWebhook(lower(signedFalWebhookHeaders(fal.signingKey, 'req-1', body)), body, keys, now());
    expect(verdict).toEqual({ ok: true, requestId: 'req-1', userId: FAKE_FAL_USER_ID });
  });

  it('refuses a changed body, another key, another request id and missing headers', async () => {
    const keys = falWebhookKeysFrom(fal.jwksUrl);
    const headers = lower(signedFalWebhookHeaders(fal.signingKey, 'req-1', body));
    const changed = Buffer.from(body.toString('utf8').replace('"OK"', '"ERROR"'));
    expect(await verifyFalWebhook(headers, changed, keys, now())).toEqual({ ok: false, reason: 'bad_signature' });

    const forger = generateKeyPairSync('ed25519').privateKey;
    expect(await verifyFalWebhook(lower(signedFalWebhookHeaders(forger, 'req-1', body)), body, keys, now())).toEqual({ ok: false, reason: 'bad_signature' });

    expect(await verifyFalWebhook({ ...headers, 'x-fal-webhook-request-id': 'req-2' }, body, keys, now())).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await verifyFalWebhook({ ...headers, 'x-fal-webhook-user-id': 'someone-else' }, body, keys, now())).toEqual({ ok: false, reason: 'bad_signature' });

    const { 'x-fal-webhook-signature': _dropped, ...unsigned } = headers;
    expect(await verifyFalWebhook(unsigned, body, keys, now())).toEqual({ ok: false, reason: 'missing_headers' });
    expect(await verifyFalWebhook({ ...headers, 'x-fal-webhook-signature': 'not hex' }, body, keys, now())).toEqual({ ok: false, reason: 'missing_headers' });
  });

  it(`refuses a timestamp more than ${FAL_WEBHOOK_TOLERANCE_SECONDS} s from now, either way, even when correctly signed`, async () => {
    const keys = falWebhookKeysFrom(fal.jwksUrl);
    const at = Math.floor(Date.now() / 1000);
    const signedAt = (timestampSeconds: number) => lower(signedFalWebhookHeaders(fal.signingKey, 'req-1', body, { timestampSeconds }));
    expect(await verifyFalWebhook(signedAt(at - FAL_WEBHOOK_TOLERANCE_SECONDS - 5), body, keys, at * 1000)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(await verifyFalWebhook(signedAt(at + FAL_WEBHOOK_TOLERANCE_SECONDS + 5), body, keys, at * 1000)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect((await verifyFalWebhook(signedAt(at - FAL_WEBHOOK_TOLERANCE_SECONDS + 5), body, keys, at * 1000)).ok).toBe(true);
  });

  it('fetches the key set once and keeps it', async () => {
    const fetches = () => fal.log.filter((entry) => entry.path === '/.well-known/jwks.json').length;
    const before = fetches();
    const keys = falWebhookKeysFrom(fal.jwksUrl);
    for (const id of ['a', 'b', 'c']) {
      expect((await verifyFalWebhook(lower(signedFalWebhookHeaders(fal.signingKey, id, body)), body, keys, now())).ok).toBe(true);
    }
    expect(fetches() - before).toBe(1);
  });

  it('says the keys are unavailable when the key set cannot be read, rather than calling the callback forged', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const keys = falWebhookKeysFrom(`http://127.0.0.1:${port}/.well-known/jwks.json`);
    expect(await verifyFalWebhook(lower(signedFalWebhookHeaders(fal.signingKey, 'req-1', body)), body, keys, now())).toEqual({ ok: false, reason: 'keys_unavailable' });
  });

  it("submits with fal_webhook, and the fake's callback for the finished job verifies", async () => {
    const receiver = await startReceiver();
    try {
      const client = new FalQueueClient({ baseUrl: fal.baseUrl, apiKey: KEY });
      const arrived = receiver.next();
      const { requestId } = await client.submit(MODEL, { prompt: 'zoom', image_url: 'data:image/jpeg;base64,AA==' }, undefined, receiver.url);
      expect(fal.jobs.find((job) => job.requestId === requestId)?.webhookUrl).toBe(receiver.url);
      await arrived;
      const [callback] = receiver.received;
      const message = JSON.parse(callback.body.toString('utf8')) as { request_id: string; status: string; payload: { video: { url: string } } };
      expect(message).toMatchObject({ request_id: requestId, status: 'OK' });
      expect(message.payload.video.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
      const verdict = await verifyFalWebhook(callback.headers, callback.body, falWebhookKeysFrom(fal.jwksUrl), now());
      expect(verdict).toEqual({ ok: true, requestId, userId: FAKE_FAL_USER_ID });
      // nobody polled it, and it reads COMPLETED
      expect((await client.status(MODEL, requestId)).status).toBe('COMPLETED');
    } finally {
      await receiver.close();
    }
  });
});
