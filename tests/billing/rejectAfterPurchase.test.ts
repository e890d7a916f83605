/**
 * DESIGN.md "Credits": rejecting needs a past purchase. End to end: refused before, then a Checkout Session paid
 * through the fake Stripe, its webhook credits the package, and the same item's rejection goes through the
 * approval workflow (real dev server and workers) and releases its reservation.
 */
import { MSG } from '../../domain/messages';
import { approvalStatusQuery } from '../../workflows';
import { closeTestKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe } from '../support/fakeStripe';
import { request } from '../support/http';
import { creditState, decide, seedPendingImage, startHarness, userWithRender, type Harness } from '../imageEdit/harness';
import { APP_PUBLIC_URL } from './harness';

let h: Harness;
let fake: FakeStripe;

beforeAll(async () => {
  fake = await startFakeStripe();
  h = await startHarness('billing-reject', {
    config: { publicUrl: APP_PUBLIC_URL, stripeSecretKey: FAKE_STRIPE_SECRET_KEY, stripeWebhookSecret: fake.webhookSecret, stripeApiBase: fake.baseUrl },
  });
  fake.webhookUrl = `${h.baseUrl}/api/stripe/webhook`;
});

afterAll(async () => {
  await h?.close();
  await fake?.close();
  await closeTestKnex();
});

describe('rejecting after a paid purchase', () => {
  it('is refused before any purchase and works once the webhook has credited a package', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, user.id, projectId);

    const refused = await decide(h, user, 'reject', item.approvalId);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('REJECTION_REQUIRES_PURCHASE');
    expect(refused.body.error).toBe(MSG.rejectionRequiresPurchase);

    const session = await request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId: 'small', userId: user.id } });
    expect(session.status).toBe(200);
    // the buyer pays on the hosted page: the fake completes the session and delivers the signed webhook
    const paid = await fetch(session.body.url, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${APP_PUBLIC_URL}/?view=account&tab=billing&purchase=success&session_id=${session.body.sessionId}`);
    expect(fake.deliveries.at(-1)).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 17, reserved: 1 });

    const rejected = await decide(h, user, 'reject', item.approvalId);

    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ success: true });
    expect(await h.client.workflow.getHandle(item.workflowId).query(approvalStatusQuery)).toBe('rejected');
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 17, reserved: 0 });
    expect((await h.knex('pending_approvals').where({ id: item.approvalId }).first()).status).toBe('rejected');
  });

  async function paidSession(user: { id: string; token: string }, packageId: string): Promise<string> {
    const session = await request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId, userId: user.id } });
    expect(session.status).toBe(200);
    const paid = await fetch(session.body.url, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(fake.deliveries.at(-1)).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
    return session.body.sessionId as string;
  }

  it('is refused again once the only purchase was refunded in full', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, user.id, projectId);
    const sessionId = await paidSession(user, 'small');

    const refund = await fake.deliver(fake.event('charge.refunded', fake.refundedCharge(sessionId, 28750)));
    expect(refund).toEqual({ status: 200, body: { received: true, outcome: 'refunded' } });
    expect((await h.knex('profiles').where({ id: user.id }).first('total_credits_purchased')).total_credits_purchased).toBe(0);

    const refused = await decide(h, user, 'reject', item.approvalId);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('REJECTION_REQUIRES_PURCHASE');
    expect((await h.knex('pending_approvals').where({ id: item.approvalId }).first()).status).toBe('pending');
  });

  it('still allows rejecting after a partial refund, which keeps the unrefunded share as purchased', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, user.id, projectId);
    const sessionId = await paidSession(user, 'small'); // 12 credits, 28750 cents

    // half refunded: floor(12 x 14375 / 28750) = 6 credits off the purchase total
    expect(((await fake.deliver(fake.event('charge.refunded', fake.refundedCharge(sessionId, 14375)))).body as { outcome: string }).outcome).toBe('refunded');
    expect((await h.knex('profiles').where({ id: user.id }).first('total_credits_purchased')).total_credits_purchased).toBe(6);

    const rejected = await decide(h, user, 'reject', item.approvalId);
    expect(rejected.status).toBe(200);
    expect((await h.knex('pending_approvals').where({ id: item.approvalId }).first()).status).toBe('rejected');
  });
});
