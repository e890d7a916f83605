/**
 * GET /api/stripe/purchases/:sessionId tells the return page where the checkout stands: from our records once the
 * webhook has spoken (credited, failed, expired), else from Stripe's session (open: awaiting payment; complete and
 * unpaid: a delayed method still processing; complete and paid: the webhook is on its way; expired). A Stripe that
 * does not answer leaves it confirming, never failed.
 */
import { logger } from '../../config/logger';
import { getPurchaseStatus } from '../../services/billing/billing';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startBillingHarness, userWithOpenCheckout, type BillingHarness } from './harness';

let h: BillingHarness;

beforeAll(async () => {
  h = await startBillingHarness();
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function status(token: string, sessionId: string): Promise<{ status: number; data: any }> {
  const res = await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token });
  return { status: res.status, data: res.body.data };
}

describe('the return page status of a checkout', () => {
  it('open, then processing (a delayed method), then credited when the webhook lands', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');

    expect(await status(user.token, sessionId)).toEqual({
      status: 200,
      data: expect.objectContaining({ checkout: { state: 'awaiting_payment', sessionStatus: 'open', paymentStatus: 'unpaid' }, availableCredits: 5 }),
    });

    // a bank debit: the session completes unpaid, the money comes days later
    const unpaid = h.fake.pay(sessionId, 'unpaid');
    expect((await status(user.token, sessionId)).data.checkout).toEqual({ state: 'processing', sessionStatus: 'complete', paymentStatus: 'unpaid' });
    expect((await h.fake.deliver(h.fake.event('checkout.session.completed', unpaid))).body).toEqual({ received: true, outcome: 'awaiting_payment' });
    expect((await status(user.token, sessionId)).data).toMatchObject({ purchase: { status: 'open' }, checkout: { state: 'processing' } });

    const paid = h.fake.pay(sessionId, 'paid');
    expect((await status(user.token, sessionId)).data.checkout).toEqual({ state: 'confirming', sessionStatus: 'complete', paymentStatus: 'paid' });
    expect((await h.fake.deliver(h.fake.event('checkout.session.async_payment_succeeded', paid))).body).toEqual({ received: true, outcome: 'credited' });

    const credited = await status(user.token, sessionId);
    expect(credited.data).toMatchObject({ purchase: { status: 'completed', credits: 12 }, checkout: { state: 'credited' }, availableCredits: 17, credits: 17 });
  });

  it('failed when the delayed payment fails', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    const unpaid = h.fake.pay(sessionId, 'unpaid');
    await h.fake.deliver(h.fake.event('checkout.session.completed', unpaid));
    expect((await h.fake.deliver(h.fake.event('checkout.session.async_payment_failed', unpaid))).body).toEqual({ received: true, outcome: 'payment_failed' });

    expect((await status(user.token, sessionId)).data).toMatchObject({ purchase: { status: 'failed' }, checkout: { state: 'failed' }, availableCredits: 5 });
  });

  it('expired as soon as Stripe says so, and still after the expiry webhook', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'medium');
    const expired = h.fake.expire(sessionId);
    expect((await status(user.token, sessionId)).data).toMatchObject({ purchase: { status: 'open' }, checkout: { state: 'expired', sessionStatus: 'expired' } });

    await h.fake.deliver(h.fake.event('checkout.session.expired', expired));
    expect((await status(user.token, sessionId)).data).toMatchObject({ purchase: { status: 'expired' }, checkout: { state: 'expired' } });
  });

  it('stays confirming, not failed, when Stripe does not answer', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    h.fake.pay(sessionId);
    const unreachable = { knex: h.knex, logger, config: { ...h.config, stripeApiBase: 'http://127.0.0.1:9' } };
    const reply = await getPurchaseStatus(unreachable, user.id, sessionId);
    expect(reply.checkout).toEqual({ state: 'confirming', sessionStatus: null, paymentStatus: null });
  });
});
