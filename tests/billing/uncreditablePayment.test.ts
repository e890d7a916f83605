/**
 * A payment that completes for an account that was deleted (or is being deleted) cannot be credited: the webhook
 * records it and starts `payment-refund-<session id>` (real Temporal, a worker of this file's own queue), whose
 * activity refunds it in full through Stripe's refund API (the local Stripe-speaking server, through the real SDK)
 * under an Idempotency-Key made of the session id. Once, however often the payment is reported.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import Stripe from 'stripe';
import { createPaymentRefundActivities } from '../../activities/paymentRefund';
import { logger } from '../../config/logger';
import { paymentRefundWorkflowId } from '../../domain/workflowContracts/paymentRefund';
import { applyStripeEvent } from '../../services/billing/billing';
import { refundIdempotencyKey, refundUncreditablePayment } from '../../services/billing/paymentRefunds';
import { closeTestKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY } from '../support/fakeStripe';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { quietRuntime } from '../imageEdit/harness';
import { balance, purchaseRow, startBillingHarness, userWithOpenCheckout, type BillingHarness } from './harness';

let h: BillingHarness;
let client: Client;
let closeClient: () => Promise<void>;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
const queue = uniqueTaskQueue('payment-refund');

beforeAll(async () => {
  h = await startBillingHarness({}, {}, { taskQueues: { accountData: queue } });
  ({ client, close: closeClient } = await testClient());
  quietRuntime();
  connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  worker = await Worker.create({
    connection,
    taskQueue: queue,
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH! },
    activities: createPaymentRefundActivities({ knex: h.knex, config: h.config, logger }),
  });
  running = worker.run();
});

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await closeClient?.();
  await h?.close();
  await closeTestKnex();
});

async function refundRow(sessionId: string): Promise<Record<string, any> | undefined> {
  return h.knex('stripe_refunds').where({ stripe_session_id: sessionId }).first();
}

function refundRequests(sessionId: string) {
  const intent = h.fake.sessions.get(sessionId)?.payment_intent;
  return h.fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds' && r.form.payment_intent === intent);
}

describe('a payment for an account that can no longer be credited', () => {
  it('is refunded in full once through Stripe, even when the webhook is delivered twice, and recorded', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'medium'); // 74635 cents
    // the account is deleted while the buyer is on the checkout page (its rows cascade, the purchase row too)
    await h.knex('users').where({ id: user.id }).delete();
    const event = h.fake.event('checkout.session.completed', h.fake.pay(sessionId));

    expect(await h.fake.deliver(event)).toEqual({ status: 200, body: { received: true, outcome: 'refund_scheduled' } });
    expect(await h.fake.deliver(event)).toEqual({ status: 200, body: { received: true, outcome: 'duplicate_event' } });
    // the same payment reported under another event id joins the same refund
    const again = h.fake.event('checkout.session.async_payment_succeeded', h.fake.sessions.get(sessionId));
    expect(await h.fake.deliver(again)).toEqual({ status: 200, body: { received: true, outcome: 'refund_already_scheduled' } });

    const result = await client.workflow.getHandle(paymentRefundWorkflowId(sessionId)).result();

    const refunds = h.fake.refundsOf(sessionId);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: 74635, currency: 'nzd', status: 'succeeded', metadata: { stripeSessionId: sessionId, userId: user.id, reason: 'account_deleted' } });
    expect(result).toEqual({ status: 'refunded', refundId: refunds[0].id, amountCents: 74635 });
    expect(refundRequests(sessionId).map((r) => r.idempotencyKey)).toEqual([refundIdempotencyKey(sessionId)]);
    expect(await refundRow(sessionId)).toMatchObject({
      status: 'refunded',
      stripe_refund_id: refunds[0].id,
      amount_cents: 74635,
      currency: 'nzd',
      workspace_id: user.id,
      package_id: 'medium',
      reason: 'account_deleted',
      stripe_event_id: event.id,
      payment_intent_id: h.fake.sessions.get(sessionId)?.payment_intent,
    });
    expect(await h.knex('credit_purchases').where({ stripe_session_id: sessionId })).toEqual([]);
    expect(await h.knex('credit_transactions').where({ idempotency_key: sessionId })).toEqual([]);
  });

  it('refunds instead of crediting an account being deleted', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small'); // 28750 cents
    await h.knex('users').where({ id: user.id }).update({ deletion_requested_at: h.knex.fn.now() });

    const res = await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(sessionId)));
    expect(res.body).toEqual({ received: true, outcome: 'refund_scheduled' });
    await client.workflow.getHandle(paymentRefundWorkflowId(sessionId)).result();

    expect(h.fake.refundsOf(sessionId).map((r) => r.amount)).toEqual([28750]);
    expect(await refundRow(sessionId)).toMatchObject({ status: 'refunded', reason: 'account_being_deleted', workspace_id: user.id });
    expect(await balance(h.knex, user.id)).toEqual({ credits: 5, reserved: 0, purchased: 0 });
    expect((await purchaseRow(h.knex, sessionId)).status).toBe('open');
  });

  it('a retried activity whose first attempt died after Stripe answered gets the same Refund back, not a second one', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    await h.knex('users').where({ id: user.id }).delete();
    const paid = h.fake.pay(sessionId);
    const input = {
      sessionId,
      paymentIntentId: String(paid.payment_intent),
      amountCents: 28750,
      currency: 'nzd',
      userId: user.id,
      packageId: 'small',
      reason: 'account_deleted' as const,
      eventId: 'evt_test_direct',
    };
    const deps = { knex: h.knex, config: h.config, logger };
    const first = await refundUncreditablePayment(deps, input);
    // the crash: the row never learnt of the refund
    await h.knex('stripe_refunds').where({ stripe_session_id: sessionId }).update({ status: 'pending', stripe_refund_id: null });

    const retried = await refundUncreditablePayment(deps, input);
    const third = await refundUncreditablePayment(deps, input);

    expect(retried).toEqual(first);
    expect(third).toEqual(first);
    expect(h.fake.refundsOf(sessionId)).toHaveLength(1);
    expect(refundRequests(sessionId)).toHaveLength(2); // the third call found the row refunded and asked nothing
    expect(await refundRow(sessionId)).toMatchObject({ status: 'refunded', stripe_refund_id: first.refundId });
  });

  it('records a refund Stripe refuses for good as failed and does not retry it', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    await h.knex('users').where({ id: user.id }).delete();
    const session = { ...h.fake.pay(sessionId), payment_intent: 'pi_test_not_at_stripe' } as Stripe.Checkout.Session;

    expect((await h.fake.deliver(h.fake.event('checkout.session.completed', session))).body).toEqual({ received: true, outcome: 'refund_scheduled' });
    await expect(client.workflow.getHandle(paymentRefundWorkflowId(sessionId)).result()).rejects.toThrow();

    const row = await refundRow(sessionId);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, stripe_refund_id: null });
    expect(row?.last_error).toContain("No such payment_intent: 'pi_test_not_at_stripe'");
  });
});

describe('when the refund cannot be started', () => {
  it('rolls the event back and answers 503, so Stripe delivers it again; the retry records and starts the refund', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'small');
    await h.knex('users').where({ id: user.id }).delete();
    const event = h.fake.event('checkout.session.completed', h.fake.pay(sessionId));
    const down = async () => {
      throw new Error('Temporal is unreachable');
    };

    await expect(applyStripeEvent(h.knex, event, down)).rejects.toMatchObject({ status: 503, code: 'REFUND_START_FAILED' });
    expect(await h.knex('stripe_events').where({ id: event.id })).toEqual([]);
    expect(await refundRow(sessionId)).toBeUndefined();
    await expect(applyStripeEvent(h.knex, event)).rejects.toThrow('no refund starter is configured');
    expect(await h.knex('stripe_events').where({ id: event.id })).toEqual([]);

    // Stripe's retry reaches the app, whose starter works
    expect(await h.fake.deliver(event)).toEqual({ status: 200, body: { received: true, outcome: 'refund_scheduled' } });
    await client.workflow.getHandle(paymentRefundWorkflowId(sessionId)).result();
    expect(h.fake.refundsOf(sessionId).map((r) => r.amount)).toEqual([28750]);
    expect(await refundRow(sessionId)).toMatchObject({ status: 'refunded', stripe_event_id: event.id });
  });
});

describe('the local Stripe server: POST /v1/refunds as Stripe answers it', () => {
  it('honours the Idempotency-Key and refuses a different request under the same key', async () => {
    const { sessionId } = await userWithOpenCheckout(h, 'small');
    const intent = String(h.fake.pay(sessionId).payment_intent);
    const url = new URL(h.fake.baseUrl);
    const stripe = new Stripe(FAKE_STRIPE_SECRET_KEY, { host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0 });

    const partial = await stripe.refunds.create({ payment_intent: intent, amount: 1000 }, { idempotencyKey: `k1-${sessionId}` });
    const replay = await stripe.refunds.create({ payment_intent: intent, amount: 1000 }, { idempotencyKey: `k1-${sessionId}` });
    expect(partial).toMatchObject({ object: 'refund', amount: 1000, payment_intent: intent, status: 'succeeded' });
    expect(replay.id).toBe(partial.id);
    await expect(stripe.refunds.create({ payment_intent: intent, amount: 2000 }, { idempotencyKey: `k1-${sessionId}` })).rejects.toMatchObject({ type: 'StripeIdempotencyError' });

    const rest = await stripe.refunds.create({ payment_intent: intent }, { idempotencyKey: `k2-${sessionId}` });
    expect(rest.amount).toBe(28750 - 1000);
    await expect(stripe.refunds.create({ payment_intent: intent }, { idempotencyKey: `k3-${sessionId}` })).rejects.toMatchObject({ code: 'charge_already_refunded' });
    await expect(stripe.refunds.create({ payment_intent: 'pi_test_unknown' })).rejects.toMatchObject({ code: 'resource_missing', statusCode: 400 });
    expect(h.fake.refundsOf(sessionId).map((r) => r.amount)).toEqual([1000, 27750]);
  });
});
