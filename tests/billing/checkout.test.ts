import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { FAKE_STRIPE_SECRET_KEY } from '../support/fakeStripe';
import { APP_PUBLIC_URL, checkout, purchaseRow, startBillingHarness, type BillingHarness } from './harness';

let h: BillingHarness;
let user: TestUser;

beforeAll(async () => {
  h = await startBillingHarness();
  user = await createTestUser(h.baseUrl);
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function purchaseCount(userId: string): Promise<number> {
  const row = await h.knex('credit_purchases').where({ workspace_id: userId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

describe('POST /api/stripe/create-checkout-session', () => {
  it('creates a payment-mode session for the package through the Stripe API and records an open purchase', async () => {
    const res = await checkout(h, user, {
      packageId: 'medium',
      userId: user.id,
      email: user.email,
      credits: 30,
      successUrl: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=cancelled`,
    });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cs_test_/), sessionId: expect.stringMatching(/^cs_test_/) });
    const sent = h.fake.sessionCreates.at(-1)!;
    expect(sent.authorization).toBe(`Bearer ${FAKE_STRIPE_SECRET_KEY}`);
    expect(sent.form).toMatchObject({
      mode: 'payment',
      client_reference_id: user.id,
      customer_email: user.email,
      metadata: { userId: user.id, packageId: 'medium', credits: '30' },
      payment_intent_data: { metadata: { userId: user.id, packageId: 'medium' } },
      line_items: [{ quantity: '1', price_data: { currency: 'nzd', unit_amount: '74635', product_data: { name: 'Medium Project (30 credits)' } } }],
      success_url: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=cancelled`,
    });
    expect(await purchaseRow(h.knex, res.body.sessionId)).toMatchObject({
      workspace_id: user.id,
      package_id: 'medium',
      credits: 30,
      amount_cents: 74635,
      currency: 'nzd',
      status: 'open',
      completed_at: null,
    });
  });

  it('sells exactly the package to a client that sends other credits or another priceId', async () => {
    const liar = await createTestUser(h.baseUrl);
    const res = await checkout(h, liar, { packageId: 'small', credits: 5000, priceId: 'price_large_for_free', userId: liar.id, email: 'someone-else@example.test' });

    expect(res.status).toBe(200);
    const sent = h.fake.sessionCreates.at(-1)!;
    expect(sent.form.line_items).toEqual([{ quantity: '1', price_data: { currency: 'nzd', unit_amount: '28750', product_data: { name: 'Small Project (12 credits)' } } }]);
    expect(sent.form.customer_email).toBe(liar.email);
    expect(sent.form.metadata).toEqual({ userId: liar.id, workspaceId: liar.id, packageId: 'small', credits: '12' });
    expect(await purchaseRow(h.knex, res.body.sessionId)).toMatchObject({ credits: 12, amount_cents: 28750, package_id: 'small' });
  });

  it('adds the session id to a success URL without one, and uses the Billing tab when none is given', async () => {
    const withoutId = await checkout(h, user, { packageId: 'large', successUrl: '/?view=account&tab=billing&purchase=success#top', cancelUrl: '/?view=account' });
    expect(withoutId.status).toBe(200);
    expect(h.fake.sessionCreates.at(-1)!.form).toMatchObject({
      success_url: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}#top`,
      cancel_url: `${APP_PUBLIC_URL}/?view=account`,
    });

    const defaults = await checkout(h, user, { packageId: 'large' });
    expect(defaults.status).toBe(200);
    expect(h.fake.sessionCreates.at(-1)!.form).toMatchObject({
      success_url: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=cancelled`,
    });
  });

  it.each([
    ['another host', { successUrl: 'https://evil.example/steal' }],
    ['a protocol-relative URL', { successUrl: '//evil.example/steal' }],
    ['another port of the same host', { successUrl: 'http://studio.example.test:8080/' }],
    ['https instead of the app scheme', { cancelUrl: 'https://studio.example.test/' }],
    ['credentials in the URL', { successUrl: 'http://attacker@studio.example.test/' }],
    ['a javascript: URL', { cancelUrl: 'javascript:alert(1)' }],
  ])('refuses return URLs off the app origin (%s): 400, nothing sent to Stripe or stored', async (_label, urls) => {
    const before = h.fake.sessionCreates.length;
    const purchases = await purchaseCount(user.id);

    const res = await checkout(h, user, { packageId: 'medium', ...urls });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Return URLs must point to this app', code: 'INVALID_RETURN_URL' });
    expect(h.fake.sessionCreates.length).toBe(before);
    expect(await purchaseCount(user.id)).toBe(purchases);
  });

  it("refuses to act for another user's id with 403", async () => {
    const other = await createTestUser(h.baseUrl);
    const before = h.fake.sessionCreates.length;

    const res = await checkout(h, user, { packageId: 'medium', userId: other.id, email: other.email });

    expect(res.status).toBe(403);
    expect(h.fake.sessionCreates.length).toBe(before);
    expect(await purchaseCount(other.id)).toBe(0);
  });

  it("answers 401 with the spec's text without a session", async () => {
    const res = await checkout(h, null, { packageId: 'medium' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Please sign in to purchase credits', code: 'LOGIN_REQUIRED' });
  });

  it('refuses an unknown package and a malformed payload with 400', async () => {
    const unknown = await checkout(h, user, { packageId: 'huge' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ success: false, error: 'Unknown credit package', code: 'UNKNOWN_PACKAGE' });

    const missing = await checkout(h, user, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('Unknown credit package');

    const extra = await request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId: 'small', amount: 1 } });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toBe('Unknown field(s): amount');
  });

  it("answers 502 with 'Failed to create checkout session' when Stripe fails, and records nothing", async () => {
    const purchases = await purchaseCount(user.id);
    // the SDK retries twice on a 500: fail all three attempts
    h.fake.failNextCreates = { count: 3, status: 500 };

    const res = await checkout(h, user, { packageId: 'small' });

    expect(res.status).toBe(502);
    expect(res.body).toEqual({ success: false, error: 'Failed to create checkout session', code: 'CHECKOUT_FAILED' });
    expect(await purchaseCount(user.id)).toBe(purchases);
    h.fake.failNextCreates = { count: 0, status: 500 };
  });
});

describe('checkout configuration', () => {
  it('GET /api/stripe/purchasing says test mode for a test key, live for a live key, unavailable without a key or webhook secret', async () => {
    expect(await request(h.baseUrl, '/api/stripe/purchasing', { method: 'GET', token: user.token })).toMatchObject({ status: 200, body: { success: true, data: { mode: 'test' } } });
    expect((await request(h.baseUrl, '/api/stripe/purchasing', { method: 'GET' })).status).toBe(401);
    const cases: Array<[Partial<{ stripeSecretKey: string; stripeWebhookSecret: string }>, string]> = [
      [{ stripeSecretKey: 'sk_live_render_studio_example' }, 'live'],
      [{ stripeSecretKey: 'rk_test_render_studio_example' }, 'test'],
      [{ stripeSecretKey: '' }, 'unavailable'],
      [{ stripeWebhookSecret: '' }, 'unavailable'],
    ];
    for (const [overrides, mode] of cases) {
      const other = await startBillingHarness(overrides);
      try {
        const res = await request(other.baseUrl, '/api/stripe/purchasing', { method: 'GET', token: user.token });
        expect({ overrides, status: res.status, body: res.body }).toEqual({ overrides, status: 200, body: { success: true, data: { mode } } });
      } finally {
        await other.close();
      }
    }
  });

  it('sells nothing when the webhook secret is unset (nothing paid could be credited): 503 before Stripe is asked', async () => {
    const noWebhook = await startBillingHarness({ stripeWebhookSecret: '' });
    try {
      const buyer = await createTestUser(noWebhook.baseUrl);
      const res = await checkout(noWebhook, buyer, { packageId: 'small' });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ success: false, code: 'STRIPE_NOT_CONFIGURED' });
      expect(noWebhook.fake.requests).toEqual([]);
    } finally {
      await noWebhook.close();
    }
  });

  it('answers 503 with a clear message when no Stripe key is configured', async () => {
    const unconfigured = await startBillingHarness({ stripeSecretKey: '' });
    try {
      const buyer = await createTestUser(unconfigured.baseUrl);
      const res = await checkout(unconfigured, buyer, { packageId: 'medium' });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        success: false,
        error: 'Credit purchases are not available: Stripe is not configured on this server',
        code: 'STRIPE_NOT_CONFIGURED',
      });
      expect(unconfigured.fake.requests).toEqual([]);
    } finally {
      await unconfigured.close();
    }
  });

  it("sells a package by its Stripe Price when STRIPE_PRICE_<ID> is set (the amount is the Price's)", async () => {
    const priced = await startBillingHarness({ stripePriceIds: { medium: 'price_medium_live' } }, { prices: { price_medium_live: 74635 } });
    try {
      const buyer = await createTestUser(priced.baseUrl);
      const res = await checkout(priced, buyer, { packageId: 'medium', priceId: 'price_something_else' });
      expect(res.status).toBe(200);
      expect(priced.fake.sessionCreates.at(-1)!.form.line_items).toEqual([{ price: 'price_medium_live', quantity: '1' }]);
      expect(await purchaseRow(priced.knex, res.body.sessionId)).toMatchObject({ stripe_price_id: 'price_medium_live', credits: 30, amount_cents: 74635 });
    } finally {
      await priced.close();
    }
  });
});
