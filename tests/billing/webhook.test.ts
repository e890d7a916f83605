import type Stripe from 'stripe';
import { reserveCredits, checkLedgerInvariant, deductCredits } from '../../services/billing/credits';
import { createTestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { balance, ledger, purchaseRow, startBillingHarness, userWithOpenCheckout, type BillingHarness } from './harness';

let h: BillingHarness;

beforeAll(async () => {
  h = await startBillingHarness();
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function eventRows(eventId: string): Promise<number> {
  const row = await h.knex('stripe_events').where({ id: eventId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

async function postRaw(body: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${h.baseUrl}/api/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: await res.json() };
}

function completed(sessionId: string): Stripe.Event {
  return h.fake.event('checkout.session.completed', h.fake.pay(sessionId));
}

describe('POST /api/stripe/webhook: signature', () => {
  it('refuses a missing, wrong or stale signature and a tampered body with 400, writing nothing', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h);
    const event = completed(sessionId);
    const { payload, signature } = h.fake.sign(event);
    const wrongSecret = h.fake.sign(event, 'whsec_someone_else').signature;
    const stale = `t=${Math.floor(Date.now() / 1000) - 3600},${signature.split(',')[1]}`;
    const tampered = payload.replace('"paid"', '"paid" ');

    const answers = [
      await postRaw(payload, {}),
      await postRaw(payload, { 'stripe-signature': wrongSecret }),
      await postRaw(payload, { 'stripe-signature': stale }),
      await postRaw(payload, { 'stripe-signature': 'garbage' }),
      await postRaw(tampered, { 'stripe-signature': signature }),
    ];

    for (const answer of answers) {
      expect(answer).toEqual({ status: 400, body: { success: false, error: 'Invalid Stripe signature', code: 'INVALID_SIGNATURE' } });
    }
    expect(await eventRows(event.id)).toBe(0);
    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
    expect((await purchaseRow(h.knex, sessionId)).status).toBe('open');
  });

  it('reads the exact bytes: a body that is not JSON with a valid signature is refused by the SDK, not by a JSON parser', async () => {
    const payload = 'not json at all';
    const signature = h.fake.sign({ id: 'x' } as Stripe.Event).signature.replace(/v1=.*/, 'v1=00');
    const res = await postRaw(payload, { 'stripe-signature': signature });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_SIGNATURE');
  });

  it('needs no session: the signature is the credential', async () => {
    const { sessionId } = await userWithOpenCheckout(h, 'small');
    const res = await h.fake.deliver(completed(sessionId));
    expect(res).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
  });
});

describe('POST /api/stripe/webhook: fulfilment', () => {
  it("credits the package once: a 'purchase' ledger row keyed by the session id, created by the buyer, the purchase completed", async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'medium');
    const event = completed(sessionId);

    const res = await h.fake.deliver(event);

    expect(res).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
    expect(await balance(h.knex, user.id)).toEqual({ credits: 35, reserved: 0, purchased: 30 });
    const rows = await ledger(h.knex, user.id);
    expect(rows.map((r) => [r.transaction_type, r.amount])).toEqual([
      ['signup_bonus', 5],
      ['purchase', 30],
    ]);
    const session = h.fake.sessions.get(sessionId)!;
    expect(rows[1]).toMatchObject({
      idempotency_key: sessionId,
      created_by: user.id,
      created_by_email: user.email,
      metadata: { packageId: 'medium', packageName: 'Medium Project', credits: 30, amountCents: 74635, currency: 'nzd', stripeSessionId: sessionId, paymentIntentId: session.payment_intent, stripeEventId: event.id },
    });
    expect(await purchaseRow(h.knex, sessionId)).toMatchObject({ status: 'completed', payment_intent_id: session.payment_intent, completed_at: expect.any(Date) });
    const stored = await h.knex('stripe_events').where({ id: event.id }).first();
    expect(stored).toMatchObject({ type: 'checkout.session.completed', processed_at: expect.any(Date) });
    expect(stored.payload.data.object.id).toBe(sessionId);
    expect((await checkLedgerInvariant(h.knex, user.id)).ok).toBe(true);
  });

  it('changes nothing on 100 replays of the same event', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    const event = completed(sessionId);
    expect((await h.fake.deliver(event)).body).toEqual({ received: true, outcome: 'credited' });

    const outcomes = new Set<string>();
    for (let i = 0; i < 100; i += 1) {
      const replay = await h.fake.deliver(event);
      expect(replay.status).toBe(200);
      outcomes.add((replay.body as { outcome: string }).outcome);
    }

    expect([...outcomes]).toEqual(['duplicate_event']);
    expect(await balance(h.knex, user.id)).toEqual({ credits: 17, reserved: 0, purchased: 12 });
    expect((await ledger(h.knex, user.id)).filter((r) => r.transaction_type === 'purchase')).toHaveLength(1);
    expect(await eventRows(event.id)).toBe(1);
  });

  it('credits once under 10 concurrent deliveries of one event', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'large');
    const event = completed(sessionId);

    const answers = await Promise.all(Array.from({ length: 10 }, () => h.fake.deliver(event)));

    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const outcomes = answers.map((a) => (a.body as { outcome: string }).outcome).sort();
    expect(outcomes).toEqual(['credited', ...Array(9).fill('duplicate_event')]);
    expect(await balance(h.knex, user.id)).toEqual({ credits: 77, reserved: 0, purchased: 72 });
    expect((await ledger(h.knex, user.id)).filter((r) => r.transaction_type === 'purchase')).toHaveLength(1);
  });

  it('credits once when two different events (and their concurrent copies) report the same session', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'medium');
    const first = completed(sessionId);
    const second = h.fake.event('checkout.session.async_payment_succeeded', h.fake.sessions.get(sessionId));

    const answers = await Promise.all([first, second, first, second, first, second].map((e) => h.fake.deliver(e)));

    expect(answers.every((a) => a.status === 200)).toBe(true);
    const outcomes = answers.map((a) => (a.body as { outcome: string }).outcome).sort();
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'already_credited')).toHaveLength(1);
    expect(await balance(h.knex, user.id)).toEqual({ credits: 35, reserved: 0, purchased: 30 });
    expect(await eventRows(first.id)).toBe(1);
    expect(await eventRows(second.id)).toBe(1);
  });

  it('waits for async_payment_succeeded when the session completes unpaid (delayed payment methods)', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    const unpaid = h.fake.event('checkout.session.completed', h.fake.pay(sessionId, 'unpaid'));

    expect((await h.fake.deliver(unpaid)).body).toEqual({ received: true, outcome: 'awaiting_payment' });
    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
    expect(await purchaseRow(h.knex, sessionId)).toMatchObject({ status: 'open', payment_intent_id: expect.stringMatching(/^pi_/) });

    const succeeded = h.fake.event('checkout.session.async_payment_succeeded', h.fake.pay(sessionId, 'paid'));
    expect((await h.fake.deliver(succeeded)).body).toEqual({ received: true, outcome: 'credited' });
    expect(await balance(h.knex, user.id)).toEqual({ credits: 17, reserved: 0, purchased: 12 });
    expect((await purchaseRow(h.knex, sessionId)).status).toBe('completed');
  });

  it('marks a failed async payment and an expired session, crediting nothing', async () => {
    const failed = await userWithOpenCheckout(h, 'small');
    const expired = await userWithOpenCheckout(h, 'small');

    const a = await h.fake.deliver(h.fake.event('checkout.session.async_payment_failed', h.fake.sessions.get(failed.sessionId)));
    const b = await h.fake.deliver(h.fake.event('checkout.session.expired', h.fake.sessions.get(expired.sessionId)));

    expect([a.body, b.body]).toEqual([
      { received: true, outcome: 'payment_failed' },
      { received: true, outcome: 'expired' },
    ]);
    expect((await purchaseRow(h.knex, failed.sessionId)).status).toBe('failed');
    expect((await purchaseRow(h.knex, expired.sessionId)).status).toBe('expired');
    expect((await balance(h.knex, failed.user.id)).credits).toBe(5);
  });

  it('records a session whose purchase row is missing from its metadata, and ignores sessions that are not ours', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).delete();
    expect((await h.fake.deliver(completed(sessionId))).body).toEqual({ received: true, outcome: 'credited' });
    expect(await purchaseRow(h.knex, sessionId)).toMatchObject({ workspace_id: user.id, package_id: 'small', credits: 12, status: 'completed' });

    const foreign = h.fake.event('checkout.session.completed', { id: 'cs_test_other_shop', object: 'checkout.session', payment_status: 'paid', metadata: {}, client_reference_id: null });
    expect(await h.fake.deliver(foreign)).toEqual({ status: 200, body: { received: true, outcome: 'unknown_session' } });
  });

  it('answers 200 to an unknown event type and changes nothing but its record', async () => {
    const { user } = await userWithOpenCheckout(h, 'small');
    const event = h.fake.event('customer.created', { id: 'cus_test_1', object: 'customer' });

    expect(await h.fake.deliver(event)).toEqual({ status: 200, body: { received: true, outcome: 'ignored' } });
    expect(await eventRows(event.id)).toBe(1);
    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
  });
});

describe('POST /api/stripe/webhook: refunds', () => {
  async function paidPurchase(packageId: string) {
    const bought = await userWithOpenCheckout(h, packageId);
    expect((await h.fake.deliver(completed(bought.sessionId))).body).toEqual({ received: true, outcome: 'credited' });
    return bought;
  }

  it('takes the purchased credits back on a full refund, found through the payment intent; replays change nothing', async () => {
    const { user, sessionId } = await paidPurchase('medium');
    const charge = h.fake.refundedCharge(sessionId, 74635);
    const event = h.fake.event('charge.refunded', charge);

    expect((await h.fake.deliver(event)).body).toEqual({ received: true, outcome: 'refunded' });
    expect((await h.fake.deliver(event)).body).toEqual({ received: true, outcome: 'duplicate_event' });
    // the same refund reported again under another event id
    expect((await h.fake.deliver(h.fake.event('charge.refunded', charge))).body).toEqual({ received: true, outcome: 'refund_already_applied' });

    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
    const refund = (await ledger(h.knex, user.id)).filter((r) => r.transaction_type === 'refund');
    expect(refund).toHaveLength(1);
    expect(refund[0]).toMatchObject({
      amount: -30,
      metadata: { reason: 'stripe_refund', creditsClaimed: 30, creditsTaken: 30, shortfall: 0, refundedAmountCents: 74635, chargeId: charge.id, purchasedCreditsRevoked: 30, totalCreditsPurchasedAfter: 0 },
    });
    expect(await purchaseRow(h.knex, sessionId)).toMatchObject({ status: 'refunded', refunded_amount_cents: 74635, credits_claimed_back: 30, credits_reversed: 30 });
    expect((await checkLedgerInvariant(h.knex, user.id)).ok).toBe(true);
  });

  it('never takes a balance below zero or below what pending approvals hold; the shortfall is recorded', async () => {
    const { user, sessionId } = await paidPurchase('small'); // 5 + 12 = 17
    await deductCredits(h.knex, { workspaceId: user.id, amount: 8, description: 'spent', idempotencyKey: `spent:${user.id}` }); // 9 left
    await reserveCredits(h.knex, { workspaceId: user.id, contentType: 'clip', idempotencyKey: `held:${user.id}` }); // 4 held, 5 available

    const res = await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 28750)));

    expect(res.body).toEqual({ received: true, outcome: 'refunded' });
    expect(await balance(h.knex, user.id)).toEqual({ credits: 4, reserved: 4, purchased: 0 });
    const refund = (await ledger(h.knex, user.id)).find((r) => r.metadata.reason === 'stripe_refund');
    expect(refund).toMatchObject({ transaction_type: 'refund', amount: -5, metadata: { creditsClaimed: 12, creditsTaken: 5, shortfall: 7, purchasedCreditsRevoked: 12, totalCreditsPurchasedAfter: 0 } });
    const purchase = await purchaseRow(h.knex, sessionId);
    expect(purchase).toMatchObject({ status: 'refunded', credits_claimed_back: 12, credits_reversed: 5 });
    expect(purchase.metadata.refunds).toEqual([expect.objectContaining({ creditsClaimed: 12, creditsTaken: 5, shortfall: 7 })]);
    expect((await checkLedgerInvariant(h.knex, user.id)).ok).toBe(true);
  });

  it('records the whole shortfall on a ledger row of 0 credits when nothing is available, and still revokes the purchase', async () => {
    const { user, sessionId } = await paidPurchase('small'); // 17
    await deductCredits(h.knex, { workspaceId: user.id, amount: 17, description: 'spent', idempotencyKey: `spent-all:${user.id}` });

    expect((await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 28750)))).status).toBe(200);

    expect(await balance(h.knex, user.id)).toEqual({ credits: 0, reserved: 0, purchased: 0 });
    expect((await ledger(h.knex, user.id)).filter((r) => r.metadata.reason === 'stripe_refund')).toEqual([
      expect.objectContaining({ transaction_type: 'refund', amount: 0, metadata: expect.objectContaining({ creditsTaken: 0, shortfall: 12, purchasedCreditsRevoked: 12, totalCreditsPurchasedAfter: 0 }) }),
    ]);
    expect((await checkLedgerInvariant(h.knex, user.id)).ok).toBe(true);
    const purchase = await purchaseRow(h.knex, sessionId);
    expect(purchase).toMatchObject({ status: 'refunded', credits_claimed_back: 12, credits_reversed: 0 });
    expect(purchase.metadata.refunds[0]).toMatchObject({ creditsClaimed: 12, creditsTaken: 0, shortfall: 12 });
  });

  it('takes back the refunded share of a partial refund, then the rest when the refund completes', async () => {
    const { user, sessionId } = await paidPurchase('large'); // 5 + 72 = 77, paid 137425
    const half = await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 68712)));
    expect(half.body).toEqual({ received: true, outcome: 'refunded' });
    // floor(72 x 68712 / 137425) = 35 taken back, and off the purchase total
    expect(await balance(h.knex, user.id)).toEqual({ credits: 77 - 35, reserved: 0, purchased: 72 - 35 });
    expect((await purchaseRow(h.knex, sessionId)).status).toBe('partially_refunded');

    // an older event arriving late changes nothing
    const older = await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 10000)));
    expect(older.body).toEqual({ received: true, outcome: 'refund_already_applied' });

    await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 137425)));
    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
    const rows = (await ledger(h.knex, user.id)).filter((r) => r.transaction_type === 'refund');
    expect(rows.map((r) => [r.amount, r.metadata.purchasedCreditsRevoked, r.metadata.totalCreditsPurchasedAfter])).toEqual([
      [-35, 35, 37],
      [-37, 37, 0],
    ]);
    expect((await checkLedgerInvariant(h.knex, user.id)).ok).toBe(true);
    expect(await purchaseRow(h.knex, sessionId)).toMatchObject({ status: 'refunded', credits_claimed_back: 72, credits_reversed: 72 });
  });

  it('ignores refunds of payments that are not credit purchases', async () => {
    const charge = { id: 'ch_other', object: 'charge', amount: 1000, amount_refunded: 1000, refunded: true, payment_intent: 'pi_not_ours', currency: 'nzd' };
    expect((await h.fake.deliver(h.fake.event('charge.refunded', charge))).body).toEqual({ received: true, outcome: 'unknown_payment' });
  });
});

describe('purchase status and history', () => {
  it("answers the owner's purchase with the balance, 404 for anyone else's or a malformed id", async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'medium');
    const stranger = await createTestUser(h.baseUrl);

    const open = await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token: user.token });
    expect(open.status).toBe(200);
    expect(open.body.data).toMatchObject({ purchase: { sessionId, status: 'open', packageName: 'Medium Project', credits: 30 }, availableCredits: 5 });

    await h.fake.deliver(completed(sessionId));
    const done = await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token: user.token });
    expect(done.body.data).toMatchObject({ purchase: { status: 'completed', amountCents: 74635, currency: 'nzd' }, availableCredits: 35, credits: 35 });

    expect((await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token: stranger.token })).status).toBe(404);
    expect((await request(h.baseUrl, '/api/stripe/purchases/not-a-session', { token: user.token })).status).toBe(404);
    expect((await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`)).status).toBe(401);

    const history = await request(h.baseUrl, '/api/stripe/purchases', { token: user.token });
    expect(history.body.data).toEqual([expect.objectContaining({ sessionId, packageName: 'Medium Project', credits: 30, amountCents: 74635, status: 'completed' })]);
    expect((await request(h.baseUrl, '/api/stripe/purchases', { token: stranger.token })).body.data).toEqual([]);
  });

  it('answers credits added and spent per week by kind', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    await h.fake.deliver(completed(sessionId));

    const res = await request(h.baseUrl, '/api/credits/weekly-usage?weeks=4', { token: user.token });

    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(4);
    expect(res.body.data[3]).toMatchObject({ added: 17, spent: { image: 0, clip: 0, assembly: 0 }, refunded: 0, adjusted: { added: 0, removed: 0 }, removed: 0 });
    expect(res.body.data[0].added).toBe(0);
    expect((await request(h.baseUrl, '/api/credits/weekly-usage?weeks=0', { token: user.token })).status).toBe(400);
    expect((await request(h.baseUrl, '/api/credits/weekly-usage?weeks=99', { token: user.token })).status).toBe(400);
  });
});
