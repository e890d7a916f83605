/**
 * `npm start`'s local test-mode checkout (devStripe/main.ts) as the process it runs: when it runs
 * (config/env.ts localStripeFrom), the one API key it accepts, its labelled checkout page, the signed
 * checkout.session.completed webhook it delivers (and re-delivers when the app does not take it, as Stripe does), and
 * the sessions it keeps across a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Stripe from 'stripe';
import { ConfigError, localStripeFrom } from '../../config/env';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number>; portOpen(port: number): Promise<boolean> };

const ROOT = path.resolve(__dirname, '..', '..');
const KEY = 'sk_test_local_0123456789abcdef0123456789abcdef';
const WEBHOOK_SECRET = 'whsec_local_test_0123456789abcdef0123456789abcdef';

describe('localStripeFrom (when npm start runs the local test-mode checkout)', () => {
  it('runs without a Stripe key outside production, never with a key, never in production', () => {
    expect(localStripeFrom({ NODE_ENV: 'development' })).toEqual({ enabled: true, port: 0 });
    expect(localStripeFrom({})).toEqual({ enabled: true, port: 0 });
    expect(localStripeFrom({ LOCAL_STRIPE_PORT: '12111' })).toEqual({ enabled: true, port: 12111 });
    expect(localStripeFrom({ STRIPE_SECRET_KEY: 'sk_test_real' }).enabled).toBe(false);
    expect(localStripeFrom({ STRIPE_SECRET_KEY: 'sk_test_real', LOCAL_STRIPE: 'on' }).enabled).toBe(false);
    expect(localStripeFrom({ NODE_ENV: 'production' }).enabled).toBe(false);
    expect(localStripeFrom({ LOCAL_STRIPE: 'off' }).enabled).toBe(false);
  });

  it('refuses LOCAL_STRIPE=on in production and values it does not know, naming the variable', () => {
    expect(() => localStripeFrom({ NODE_ENV: 'production', LOCAL_STRIPE: 'on' })).toThrow(ConfigError);
    expect(() => localStripeFrom({ NODE_ENV: 'production', LOCAL_STRIPE: 'on' })).toThrow(/LOCAL_STRIPE=on is refused with NODE_ENV=production/);
    expect(() => localStripeFrom({ LOCAL_STRIPE: 'yes' })).toThrow(/LOCAL_STRIPE must be "on" or "off"/);
    expect(() => localStripeFrom({ LOCAL_STRIPE_PORT: '70000' })).toThrow(/LOCAL_STRIPE_PORT must be a port number/);
  });
});

interface Received {
  signature: string;
  payload: string;
}

/** The app's webhook endpoint as far as the service can tell: answers `statuses` in turn (then 200). */
async function startWebhookReceiver(statuses: number[]): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ signature: String(req.headers['stripe-signature'] ?? ''), payload: Buffer.concat(chunks).toString('utf8') });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status === 200 ? { received: true } : { success: false, error: 'Service unavailable' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/stripe/webhook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function startService(port: number, webhookUrl: string, stateFile: string): { child: ChildProcess; exited: Promise<void>; output: () => string } {
  const env: NodeJS.ProcessEnv = { ...process.env, STRIPE_SECRET_KEY: KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, LOG_LEVEL: 'info', SERVICE_NAME: 'stripe' };
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'devStripe/main.ts', '--port', String(port), '--host', '127.0.0.1', '--public-url', `http://localhost:${port}`, '--webhook-url', webhookUrl, '--state-file', stateFile],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, output: () => out };
}

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the local test-mode checkout service (devStripe/main.ts)', () => {
  let dir: string;
  let running: ReturnType<typeof startService> | null = null;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-local-stripe-'));
  });

  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('checks out through its labelled page, delivers the signed webhook until the app takes it, and keeps sessions across a restart', async () => {
    const receiver = await startWebhookReceiver([503]);
    const port = await services.freePort();
    const stateFile = path.join(dir, 'stripe-test', 'state.json');
    running = startService(port, receiver.url, stateFile);
    try {
      await waitUntil(() => services.portOpen(port), 'the service listens', 30_000);
      const base = `http://127.0.0.1:${port}`;

      // the app's SDK, pointed at it as the API is; another key is refused as Stripe refuses it
      const sdk = new Stripe(KEY, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
      const intruder = new Stripe('sk_test_someone_else', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
      await expect(intruder.checkout.sessions.list()).rejects.toMatchObject({ statusCode: 401 });
      const session = await sdk.checkout.sessions.create({
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: 'nzd', unit_amount: 14940, product_data: { name: 'Small Project (12 credits)' } } }],
        metadata: { packageId: 'small', userId: 'u1', credits: '12' },
        success_url: 'http://127.0.0.1:3000/?view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}',
        cancel_url: 'http://127.0.0.1:3000/?view=account&tab=billing&purchase=cancelled',
      });
      // browsers are sent to the public address it was given
      expect(session.url).toBe(`http://localhost:${port}/checkout/${session.id}`);

      const page = await (await fetch(`${base}/checkout/${session.id}`)).text();
      expect(page).toContain('Test mode: no real payment');
      expect(page).toContain('Pay NZD 149.40 for Small Project (12 credits)');

      const paid = await fetch(`${base}/checkout/${session.id}`, { method: 'POST', redirect: 'manual' });
      expect(paid.status).toBe(303);
      expect(paid.headers.get('location')).toBe(`http://127.0.0.1:3000/?view=account&tab=billing&purchase=success&session_id=${session.id}`);
      // the first delivery met a 503: it comes again (after 5 s), signed with the webhook secret as Stripe signs
      await waitUntil(() => receiver.received.length >= 2, 'the webhook is delivered again', 20_000);
      for (const delivery of receiver.received) {
        const event = Stripe.webhooks.constructEvent(delivery.payload, delivery.signature, WEBHOOK_SECRET);
        expect(event.type).toBe('checkout.session.completed');
        expect(event.data.object).toMatchObject({ id: session.id, status: 'complete', payment_status: 'paid', metadata: { packageId: 'small' } });
      }
      expect(() => Stripe.webhooks.constructEvent(receiver.received[0].payload, receiver.received[0].signature, 'whsec_another')).toThrow();
      expect(running.output()).toContain('the app did not take a webhook');
      // a second Pay on the same page charges nothing again
      await fetch(`${base}/checkout/${session.id}`, { method: 'POST', redirect: 'manual' });
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(2);

      const open = await sdk.checkout.sessions.create({
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: 'nzd', unit_amount: 100, product_data: { name: 'Open one' } } }],
        success_url: 'http://127.0.0.1:3000/ok',
      });

      // restarted (on another port): the paid session is still paid, the open one still payable at the new address
      running.child.kill('SIGTERM');
      await running.exited;
      const nextPort = await services.freePort();
      running = startService(nextPort, receiver.url, stateFile);
      await waitUntil(() => services.portOpen(nextPort), 'the restarted service listens', 30_000);
      const again = new Stripe(KEY, { host: '127.0.0.1', port: nextPort, protocol: 'http', maxNetworkRetries: 0 });
      expect(await again.checkout.sessions.retrieve(session.id)).toMatchObject({ status: 'complete', payment_status: 'paid' });
      expect((await again.checkout.sessions.retrieve(open.id)).url).toBe(`http://localhost:${nextPort}/checkout/${open.id}`);
      expect(await (await fetch(`http://127.0.0.1:${nextPort}/checkout/${open.id}`)).text()).toContain('Pay NZD 1.00 for Open one');
      expect(fs.statSync(stateFile).mode & 0o777).toBe(0o600);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
