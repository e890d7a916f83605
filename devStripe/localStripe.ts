/**
 * A local HTTP server speaking the Stripe API paths the app uses: the test-mode checkout `npm start` runs when no
 * Stripe key is set (devStripe/main.ts), and the Stripe the tests talk to (tests/support/fakeStripe.ts). No Stripe
 * emulator supports Checkout Sessions, so this one does. The app's SDK is pointed at it through STRIPE_API_BASE
 * (host / port / protocol options):
 * - POST /v1/checkout/sessions (form-encoded, as the SDK sends it) answers a Checkout Session shaped like Stripe's,
 *   whose `url` is a hosted checkout page served here;
 * - GET /v1/checkout/sessions/:id;
 * - GET /checkout/:id is that page (devStripe/checkoutPage.ts: "Test mode: no real payment", a Pay button, and one for
 *   a bank debit that completes the session unpaid, as delayed methods do); POST /checkout/:id pays: the session
 *   completes, a `checkout.session.completed` event signed exactly as Stripe signs it (the SDK's
 *   generateTestHeaderString, with the webhook secret) is delivered to the app's webhook, and the browser is
 *   redirected to success_url;
 * - GET /checkout/:id/cancel sends the browser to cancel_url;
 * - GET /favicon.ico answers the checkout page's icon (the page links it inline; a browser asks here for any other
 *   page it shows, such as the text of an unknown checkout);
 * - POST /v1/refunds (payment_intent, optional amount) answers a Refund object; an Idempotency-Key seen before
 *   answers the first answer again (a different request under the same key is refused, as Stripe does);
 * - GET /v1/prices/:id answers the Price (type, currency, unit_amount, active) the options describe.
 * Tests also build and deliver events themselves (replays, refunds, async payments).
 */
import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { CHECKOUT_FAVICON_SVG, checkoutPageHtml } from './checkoutPage';

type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

/** Stripe's form encoding (`a[b][0][c]=v`) back into objects; numeric keys become arrays. */
export function parseStripeForm(body: string): FormObject {
  const root: FormObject = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const parts = rawKey.replace(/\]/g, '').split('[');
    let node: FormObject = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as FormObject;
    });
  }
  const arrays = (v: FormValue): FormValue => {
    if (typeof v === 'string' || Array.isArray(v)) return v;
    const keys = Object.keys(v);
    const mapped = Object.fromEntries(keys.map((k) => [k, arrays(v[k])]));
    return keys.length > 0 && keys.every((k, i) => k === String(i)) ? keys.map((k) => mapped[k]) : mapped;
  };
  return arrays(root) as FormObject;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  form: FormObject;
}

/** A Price of the account: its unit amount in cents, or the fields that matter. */
export type LocalPrice = number | { unitAmount: number | null; currency?: string; type?: 'one_time' | 'recurring'; active?: boolean };

export interface LocalStripeOptions {
  /** Price ids the account knows (a number: a one-time NZD price of that many cents). */
  prices?: Record<string, LocalPrice>;
  /** The webhook endpoint's signing secret (whsec_...): every event delivered is signed with it. */
  webhookSecret: string;
  /** The one API key accepted (`Authorization: Bearer <key>`); unset: any `sk_` key, as tests use. */
  secretKey?: string;
  /** Where paid checkouts deliver their webhook (the app's /api/stripe/webhook); may be set later. */
  webhookUrl?: string;
  /**
   * Waits before re-delivering an event the webhook did not take (a network error or a non-2xx answer), as Stripe
   * retries; empty (the default): one delivery, whatever the answer.
   */
  retryDelaysMs?: number[];
  /** The address browsers reach the checkout page at; unset: the address it listens on. */
  publicBaseUrl?: string;
  /** Called after each change of the account's state (a session, a payment, a refund): the dev service saves it. */
  onChange?: () => void;
  /** Where a failed delivery is reported (the dev service logs it); unset: silent. */
  onDeliveryProblem?: (problem: string) => void;
  /** Keep every API request and webhook answer in `requests` / `deliveries` (tests read them); default true. */
  record?: boolean;
}

interface NormalPrice {
  unitAmount: number | null;
  currency: string;
  type: 'one_time' | 'recurring';
  active: boolean;
}

function normalPrice(price: LocalPrice): NormalPrice {
  if (typeof price === 'number') return { unitAmount: price, currency: 'nzd', type: 'one_time', active: true };
  return { unitAmount: price.unitAmount, currency: price.currency ?? 'nzd', type: price.type ?? 'one_time', active: price.active ?? true };
}

export interface DeliveryResult {
  status: number;
  body: unknown;
}

/** What the dev service keeps across restarts (the account's sessions, refunds and idempotent answers). */
export interface LocalStripeState {
  sessions: Stripe.Checkout.Session[];
  /** What each session sells, by name, for its page. */
  products: Array<[string, string]>;
  refunds: Stripe.Refund[];
  idempotent: Array<[string, { request: string; status: number; body: unknown }]>;
}

function id(prefix: string): string {
  return `${prefix}_test_${randomBytes(12).toString('hex')}`;
}

function stripeError(res: ServerResponse, status: number, message: string, type = 'invalid_request_error'): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify({ error: { type, message } }));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export class LocalStripe {
  readonly sessions = new Map<string, Stripe.Checkout.Session>();
  readonly requests: RecordedRequest[] = [];
  /** Where paid checkouts deliver their webhook (the app's /api/stripe/webhook). */
  webhookUrl: string;
  /**
   * When the hosted page delivers the webhook: before redirecting (default), or this many ms after it (Stripe makes
   * no promise about the order, so the app's return page must wait for the webhook).
   */
  webhookDelayMs: number | null = null;
  /** The next n session creations answer this HTTP status (a Stripe outage). */
  failNextCreates: { count: number; status: number } = { count: 0, status: 500 };
  readonly webhookSecret: string;
  readonly deliveries: DeliveryResult[] = [];
  /** A delayed delivery still under way (see webhookDelayMs). */
  pendingDelivery: Promise<DeliveryResult> | null = null;
  private readonly prices: Record<string, NormalPrice>;
  /** Refunds made, by id, in order. */
  readonly refunds = new Map<string, Stripe.Refund>();
  /** What each session sells, by name (price_data's product name), for its page. */
  private readonly productNames = new Map<string, string>();
  /** The first answer to each Idempotency-Key of a POST, with the request it answered. */
  private readonly idempotent = new Map<string, { request: string; status: number; body: unknown }>();
  private readonly signer = new Stripe('sk_test_signing_only');
  private readonly options: LocalStripeOptions;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private server: http.Server | null = null;
  /** The address it listens on (API calls). */
  baseUrl = '';

  constructor(options: LocalStripeOptions) {
    this.options = options;
    this.prices = Object.fromEntries(Object.entries(options.prices ?? {}).map(([id, price]) => [id, normalPrice(price)]));
    this.webhookSecret = options.webhookSecret;
    this.webhookUrl = options.webhookUrl ?? '';
  }

  /** The address browsers open checkout pages at. */
  get publicBaseUrl(): string {
    return (this.options.publicBaseUrl ?? this.baseUrl).replace(/\/+$/, '');
  }

  async start(port = 0, host = '127.0.0.1'): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => stripeError(res, 500, String(err), 'api_error'));
    });
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    this.baseUrl = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await this.pendingDelivery?.catch(() => undefined);
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  }

  /** The account's state, for the dev service to keep across restarts. */
  snapshot(): LocalStripeState {
    return { sessions: [...this.sessions.values()], products: [...this.productNames], refunds: [...this.refunds.values()], idempotent: [...this.idempotent] };
  }

  /** Takes back a snapshot; open sessions' pages move to this server's address (its port may have changed). */
  restore(state: LocalStripeState): void {
    for (const session of state.sessions) {
      const url = session.status === 'open' ? `${this.publicBaseUrl}/checkout/${session.id}` : session.url;
      this.sessions.set(session.id, { ...session, url } as Stripe.Checkout.Session);
    }
    for (const [sessionId, name] of state.products ?? []) this.productNames.set(sessionId, name);
    for (const refund of state.refunds) this.refunds.set(refund.id, refund);
    for (const [key, answer] of state.idempotent) this.idempotent.set(key, answer);
  }

  /** The checkout-session creations the app sent, parsed. */
  get sessionCreates(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
  }

  private changed(): void {
    this.options.onChange?.();
  }

  private authorized(authorization: string | undefined): boolean {
    if (this.options.secretKey) return authorization === `Bearer ${this.options.secretKey}`;
    return authorization?.startsWith('Bearer sk_') ?? false;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const body = await readBody(req);
    if (url.pathname.startsWith('/v1/')) {
      const authorization = req.headers.authorization;
      if (this.options.record !== false) {
        this.requests.push({
          method: req.method ?? 'GET',
          path: url.pathname,
          authorization,
          idempotencyKey: req.headers['idempotency-key'] as string | undefined,
          form: parseStripeForm(body),
        });
      }
      if (!this.authorized(authorization)) return stripeError(res, 401, 'Invalid API Key provided', 'invalid_request_error');
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') return this.createSession(res, parseStripeForm(body));
      if (req.method === 'POST' && url.pathname === '/v1/refunds') {
        return this.idempotently(res, req.headers['idempotency-key'] as string | undefined, `${url.pathname}?${body}`, () => this.createRefund(parseStripeForm(body)));
      }
      const price = /^\/v1\/prices\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && price) return this.retrievePrice(res, decodeURIComponent(price[1]));
      const found = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && found) {
        const session = this.sessions.get(found[1]);
        return session ? json(res, 200, session) : stripeError(res, 404, `No such checkout.session: '${found[1]}'`);
      }
      return stripeError(res, 404, `Unrecognized request URL (${req.method}: ${url.pathname}).`);
    }
    if (req.method === 'GET' && url.pathname === '/favicon.ico') {
      res.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' });
      res.end(CHECKOUT_FAVICON_SVG);
      return;
    }
    const page = /^\/checkout\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    const session = page ? this.sessions.get(page[1]) : undefined;
    if (!page || !session) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('No such checkout (it may belong to an earlier start of this test-mode checkout). Go back to the app and buy again.');
      return;
    }
    if (page[2]) return this.redirect(res, session.cancel_url ?? '/');
    if (req.method === 'GET') return this.checkoutPage(res, session);
    if (req.method === 'POST') {
      // a page reloaded or posted twice: Stripe shows a completed session as done, and never charges it again
      if (session.status !== 'open') return this.redirect(res, this.successUrlOf(session));
      // a delayed method (a bank debit): the session completes unpaid; async_payment_succeeded or _failed follows later
      const paid = this.pay(session.id, url.searchParams.get('method') === 'bank_debit' ? 'unpaid' : 'paid');
      const event = this.event('checkout.session.completed', paid);
      if (this.webhookDelayMs === null) await this.deliverUntilTaken(event);
      else this.pendingDelivery = new Promise((resolve) => setTimeout(resolve, this.webhookDelayMs!)).then(() => this.deliverUntilTaken(event));
      return this.redirect(res, this.successUrlOf(paid));
    }
    res.writeHead(405);
    res.end();
  }

  private successUrlOf(session: Stripe.Checkout.Session): string {
    return (session.success_url ?? '/').replace('{CHECKOUT_SESSION_ID}', session.id);
  }

  /** Stripe's idempotency: a key seen before answers its first answer; the same key with other parameters is refused. */
  private idempotently(res: ServerResponse, key: string | undefined, request: string, run: () => { status: number; body: unknown }): void {
    const earlier = key ? this.idempotent.get(key) : undefined;
    if (earlier) {
      if (earlier.request !== request) {
        return stripeError(res, 400, `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`, 'idempotency_error');
      }
      res.setHeader('idempotent-replayed', 'true');
      return json(res, earlier.status, earlier.body);
    }
    const answer = run();
    if (key) this.idempotent.set(key, { request, ...answer });
    this.changed();
    json(res, answer.status, answer.body);
  }

  private failure(status: number, message: string, code?: string): { status: number; body: unknown } {
    return { status, body: { error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) } } };
  }

  /** A refund of a paid session's PaymentIntent: the rest of the amount, or `amount` cents of it. */
  private createRefund(form: FormObject): { status: number; body: unknown } {
    const intent = form.payment_intent;
    if (typeof intent !== 'string') return this.failure(400, 'One of the following params should be provided for this request: payment_intent or charge.', 'parameter_missing');
    const session = [...this.sessions.values()].find((s) => s.payment_intent === intent && s.payment_status === 'paid');
    if (!session) return this.failure(400, `No such payment_intent: '${intent}'`, 'resource_missing');
    const total = session.amount_total ?? 0;
    const already = [...this.refunds.values()].filter((r) => r.payment_intent === intent).reduce((n, r) => n + r.amount, 0);
    const amount = typeof form.amount === 'string' ? Number(form.amount) : total - already;
    if (already >= total) return this.failure(400, `Charge for payment intent ${intent} has already been refunded.`, 'charge_already_refunded');
    if (!Number.isInteger(amount) || amount <= 0 || amount > total - already) {
      return this.failure(400, `Refund amount (${String(form.amount)}) is greater than unrefunded amount on charge (${total - already}).`, 'amount_too_large');
    }
    const refund = {
      id: id('re'),
      object: 'refund',
      amount,
      charge: `ch_for_${intent}`,
      created: Math.floor(Date.now() / 1000),
      currency: session.currency,
      metadata: (form.metadata ?? {}) as Record<string, string>,
      payment_intent: intent,
      reason: typeof form.reason === 'string' ? form.reason : null,
      status: 'succeeded',
    } as unknown as Stripe.Refund;
    this.refunds.set(refund.id, refund);
    return { status: 200, body: refund };
  }

  private retrievePrice(res: ServerResponse, priceId: string): void {
    const price = this.prices[priceId];
    if (!price) return stripeError(res, 404, `No such price: '${priceId}'`);
    json(res, 200, {
      id: priceId,
      object: 'price',
      active: price.active,
      billing_scheme: 'per_unit',
      created: Math.floor(Date.now() / 1000),
      currency: price.currency,
      livemode: false,
      lookup_key: null,
      metadata: {},
      nickname: null,
      product: `prod_for_${priceId}`,
      recurring: price.type === 'recurring' ? { interval: 'month', interval_count: 1, usage_type: 'licensed' } : null,
      tax_behavior: 'unspecified',
      type: price.type,
      unit_amount: price.unitAmount,
      unit_amount_decimal: price.unitAmount === null ? null : String(price.unitAmount),
    });
  }

  /** The refunds made of a paid session's payment. */
  refundsOf(sessionId: string): Stripe.Refund[] {
    const intent = this.sessions.get(sessionId)?.payment_intent;
    return [...this.refunds.values()].filter((r) => intent && r.payment_intent === intent);
  }

  private createSession(res: ServerResponse, form: FormObject): void {
    if (this.failNextCreates.count > 0) {
      this.failNextCreates.count -= 1;
      return stripeError(res, this.failNextCreates.status, 'Something went wrong on our end', 'api_error');
    }
    const items = (form.line_items ?? []) as FormObject[];
    if (form.mode !== 'payment') return stripeError(res, 400, 'mode must be payment in this local Stripe');
    if (!Array.isArray(items) || items.length === 0) return stripeError(res, 400, 'line_items is required');
    if (typeof form.success_url !== 'string') return stripeError(res, 400, 'Missing required param: success_url.');
    let amount = 0;
    let currency = 'nzd';
    const names: string[] = [];
    for (const item of items) {
      const quantity = Number(item.quantity ?? 1);
      if (typeof item.price === 'string') {
        const price = this.prices[item.price];
        if (price === undefined) return stripeError(res, 400, `No such price: '${item.price}'`);
        if (!price.active) return stripeError(res, 400, `The price specified is inactive: '${item.price}'`);
        if (price.type !== 'one_time') return stripeError(res, 400, 'You must provide at least one recurring price in `subscription` mode when using prices.');
        amount += (price.unitAmount ?? 0) * quantity;
        currency = price.currency;
      } else {
        const data = item.price_data as FormObject | undefined;
        if (!data || typeof data.unit_amount !== 'string' || typeof data.currency !== 'string') return stripeError(res, 400, 'price_data is incomplete');
        amount += Number(data.unit_amount) * quantity;
        currency = data.currency;
        const product = data.product_data as FormObject | undefined;
        if (product && typeof product.name === 'string') names.push(product.name);
      }
    }
    const sessionId = id('cs');
    const metadata = (form.metadata ?? {}) as Record<string, string>;
    const session = {
      id: sessionId,
      object: 'checkout.session',
      amount_subtotal: amount,
      amount_total: amount,
      cancel_url: typeof form.cancel_url === 'string' ? form.cancel_url : null,
      client_reference_id: typeof form.client_reference_id === 'string' ? form.client_reference_id : null,
      created: Math.floor(Date.now() / 1000),
      currency,
      customer: null,
      customer_email: typeof form.customer_email === 'string' ? form.customer_email : null,
      expires_at: Math.floor(Date.now() / 1000) + 86_400,
      livemode: false,
      metadata,
      mode: 'payment',
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: form.success_url,
      url: `${this.publicBaseUrl}/checkout/${sessionId}`,
    } as unknown as Stripe.Checkout.Session;
    this.sessions.set(sessionId, session);
    this.productNames.set(sessionId, names.join(', '));
    this.changed();
    json(res, 200, session);
  }

  private checkoutPage(res: ServerResponse, session: Stripe.Checkout.Session): void {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(checkoutPageHtml(session, this.productNames.get(session.id) || null));
  }

  private redirect(res: ServerResponse, location: string): void {
    res.writeHead(303, { location });
    res.end();
  }

  /** Marks a session paid (as Stripe does when the card succeeds) and returns it. */
  pay(sessionId: string, paymentStatus: 'paid' | 'unpaid' = 'paid'): Stripe.Checkout.Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`local stripe: no session ${sessionId}`);
    const paid = {
      ...session,
      status: 'complete',
      payment_status: paymentStatus,
      payment_intent: session.payment_intent ?? id('pi'),
    } as Stripe.Checkout.Session;
    this.sessions.set(sessionId, paid);
    this.changed();
    return paid;
  }

  /** Expires an unpaid session (as Stripe does after expires_at, or on POST /v1/checkout/sessions/:id/expire) and returns it. */
  expire(sessionId: string): Stripe.Checkout.Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`local stripe: no session ${sessionId}`);
    if (session.status !== 'open') throw new Error(`local stripe: session ${sessionId} is ${session.status}, only an open session expires`);
    const expired = { ...session, status: 'expired', url: null } as Stripe.Checkout.Session;
    this.sessions.set(sessionId, expired);
    this.changed();
    return expired;
  }

  /** An event as Stripe sends it, with a fresh id. */
  event(type: string, object: unknown): Stripe.Event {
    return {
      id: id('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    } as unknown as Stripe.Event;
  }

  /** The Charge a refund event carries for a paid session: `amountRefunded` cumulative, as Stripe reports it. */
  refundedCharge(sessionId: string, amountRefunded: number): Stripe.Charge {
    const session = this.sessions.get(sessionId);
    if (!session?.payment_intent) throw new Error(`local stripe: session ${sessionId} was not paid`);
    const amount = session.amount_total ?? 0;
    return {
      id: `ch_for_${String(session.payment_intent)}`,
      object: 'charge',
      amount,
      amount_captured: amount,
      amount_refunded: amountRefunded,
      currency: session.currency,
      paid: true,
      payment_intent: session.payment_intent,
      refunded: amountRefunded >= amount,
      status: 'succeeded',
    } as unknown as Stripe.Charge;
  }

  /** The body and the Stripe-Signature header Stripe would send for `event`. */
  sign(event: Stripe.Event, secret = this.webhookSecret): { payload: string; signature: string } {
    const payload = JSON.stringify(event, null, 2);
    return { payload, signature: this.signer.webhooks.generateTestHeaderString({ payload, secret }) };
  }

  /** Posts `event` to the webhook URL, signed; returns the app's answer (a network failure throws). */
  async deliver(event: Stripe.Event, url = this.webhookUrl): Promise<DeliveryResult> {
    if (!url) throw new Error('local stripe: webhookUrl is not set');
    const { payload, signature } = this.sign(event);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature }, body: payload });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    const result = { status: res.status, body };
    if (this.options.record !== false) this.deliveries.push(result);
    return result;
  }

  /**
   * Delivers `event` as the hosted page does: a webhook that does not take it (network error, non-2xx) is tried
   * again after each of retryDelaysMs, as Stripe retries. Returns the first answer (a network failure: status 0).
   */
  private async deliverUntilTaken(event: Stripe.Event, attempt = 0): Promise<DeliveryResult> {
    let result: DeliveryResult;
    try {
      result = await this.deliver(event);
    } catch (err) {
      result = { status: 0, body: String(err) };
    }
    if (result.status >= 200 && result.status < 300) return result;
    const delays = this.options.retryDelaysMs ?? [];
    const next = delays[attempt];
    const answer = result.status === 0 ? `no answer (${String(result.body)})` : `HTTP ${result.status} ${JSON.stringify(result.body)}`;
    this.options.onDeliveryProblem?.(
      `webhook ${event.type} (${event.id}) to ${this.webhookUrl}: ${answer}; ${next === undefined ? 'not retried' : `retrying in ${Math.round(next / 1000)}s`}`,
    );
    if (next !== undefined) {
      const timer = setTimeout(() => {
        this.retryTimers.delete(timer);
        void this.deliverUntilTaken(event, attempt + 1);
      }, next);
      timer.unref();
      this.retryTimers.add(timer);
    }
    return result;
  }
}
