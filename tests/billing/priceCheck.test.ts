/**
 * STRIPE_PRICE_* set: each Price is checked against its package (exists, active, one-time, NZD, unit_amount equal to
 * the displayed amount) at start, by the readiness check and before a checkout; a package whose Price does not
 * match is refused with 503 and an error in the log, never charged at another amount. The local Stripe server
 * answers GET /v1/prices/:id as Stripe does (through the real SDK).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { BILLING_MSG } from '../../domain/billing';
import { findCreditPackage } from '../../domain/billing';
import { checkConfiguredPrices, checkPricesAtStart, pricePackageProblem } from '../../services/billing/stripePrices';
import { createTestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { checkout, startBillingHarness, type BillingHarness } from './harness';

let h: BillingHarness;
const PRICES = { small: 'price_small_ok', medium: 'price_medium_without_gst', large: 'price_large_missing' };

beforeAll(async () => {
  h = await startBillingHarness(
    { stripePriceIds: PRICES },
    {
      prices: {
        price_small_ok: 28750, // 250.00 x 1.15
        price_medium_without_gst: 64900, // the base price, not the displayed 746.35
        price_recurring: { unitAmount: 28750, type: 'recurring' },
        price_usd: { unitAmount: 28750, currency: 'usd' },
        price_archived: { unitAmount: 28750, active: false },
      },
    },
  );
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

function captureLogger(): { logger: pino.Logger; lines: () => Array<{ level: number; msg: string; packageId?: string }> } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      out.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines: () => out.flatMap((t) => t.trim().split('\n')).map((l) => JSON.parse(l)) };
}

describe('configured Stripe Prices against the packages', () => {
  it('sells a package whose Price matches, at that Price', async () => {
    const user = await createTestUser(h.baseUrl);
    const res = await checkout(h, user, { packageId: 'small', userId: user.id });
    expect(res.status).toBe(200);
    const sent = h.fake.sessionCreates.at(-1)!;
    expect(sent.form.line_items).toEqual([{ price: 'price_small_ok', quantity: '1' }]);
    expect(h.fake.sessions.get(res.body.sessionId as string)?.amount_total).toBe(28750);
  });

  it('refuses a package whose Price charges another amount or does not exist: 503, no session, an error in the log', async () => {
    const user = await createTestUser(h.baseUrl);
    const before = h.fake.sessionCreates.length;
    for (const packageId of ['medium', 'large']) {
      const res = await checkout(h, user, { packageId, userId: user.id });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ success: false, error: BILLING_MSG.packageUnavailable, code: 'PACKAGE_PRICE_MISMATCH' });
    }
    expect(h.fake.sessionCreates.length).toBe(before);
    expect(await h.knex('credit_purchases').where({ workspace_id: user.id })).toEqual([]);
  });

  it('logs each mismatch as an error at start', async () => {
    const { logger, lines } = captureLogger();
    const checks = await checkPricesAtStart(h.config, logger);
    expect(checks).toEqual([
      { packageId: 'small', priceId: 'price_small_ok', ok: true, problem: null, unverified: false },
      {
        packageId: 'medium',
        priceId: 'price_medium_without_gst',
        ok: false,
        problem: 'Stripe Price price_medium_without_gst of package "medium" charges 649.00 NZD but the package is shown at 746.35 NZD',
        unverified: false,
      },
      { packageId: 'large', priceId: 'price_large_missing', ok: false, problem: 'Stripe Price price_large_missing of package "large" does not exist in this Stripe account', unverified: false },
    ]);
    const errors = lines().filter((l) => l.level === 50);
    expect(errors.map((l) => l.packageId)).toEqual(['medium', 'large']);
    expect(errors[0].msg).toBe('credit package "medium" is not sold: Stripe Price price_medium_without_gst of package "medium" charges 649.00 NZD but the package is shown at 746.35 NZD');
  });

  it('reports the mismatches in the readiness check without taking the instance out of rotation', async () => {
    const res = await request(h.baseUrl, '/health/ready');
    expect(res.body.degraded).toEqual(['billing']);
    expect(res.body.checks.billing).toMatchObject({
      ok: false,
      packages: [
        { packageId: 'small', priceId: 'price_small_ok', ok: true, problem: null },
        { packageId: 'medium', ok: false, problem: expect.stringContaining('charges 649.00 NZD but the package is shown at 746.35 NZD') },
        { packageId: 'large', ok: false, problem: expect.stringContaining('does not exist') },
      ],
    });
    expect(res.body.checks.billing.error).toContain('price_medium_without_gst');
    expect(res.body.failing).not.toContain('billing');
  });

  it('refuses a recurring, a non-NZD and an archived Price', async () => {
    const { logger } = captureLogger();
    for (const [priceId, problem] of [
      ['price_recurring', 'is a recurring price; a credit package needs a one-time price'],
      ['price_usd', 'is in USD; credit packages are sold in NZD'],
      ['price_archived', 'is archived (inactive)'],
    ]) {
      const [check] = await checkConfiguredPrices({ ...h.config, stripePriceIds: { small: priceId } }, logger, 0);
      expect(check).toMatchObject({ packageId: 'small', priceId, ok: false, problem: `Stripe Price ${priceId} of package "small" ${problem}` });
    }
  });

  it('counts a Stripe that does not answer as unverified, and refuses the purchase then too', async () => {
    const { logger } = captureLogger();
    const config = { ...h.config, stripeApiBase: 'http://127.0.0.1:9', stripePriceIds: { small: 'price_small_ok' } };
    const [check] = await checkConfiguredPrices(config, logger, 0);
    expect(check).toMatchObject({ ok: false, unverified: true, problem: 'Stripe Price price_small_ok of package "small" could not be checked: Stripe did not answer' });
  });

  it('compares with the displayed amount: stored cents x 1.15, rounded', () => {
    const large = findCreditPackage('large')!;
    const price = { id: 'price_x', active: true, type: 'one_time' as const, currency: 'nzd' };
    expect(pricePackageProblem(large, { ...price, unit_amount: 137425 })).toBeNull();
    expect(pricePackageProblem(large, { ...price, unit_amount: 137424 })).toBe('Stripe Price price_x of package "large" charges 1374.24 NZD but the package is shown at 1374.25 NZD');
    expect(pricePackageProblem(large, { ...price, unit_amount: null })).toContain('charges no fixed amount');
  });
});
