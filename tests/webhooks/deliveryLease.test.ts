/**
 * The send lease on a webhook delivery (migration 20261128000600, activities/webhookDelivery.ts): while one execution
 * of the send activity holds it, a second execution of the same delivery (Temporal's retry after missed heartbeats,
 * another worker) sends nothing and fails with a retryable WebhookDeliveryLeased whose delay is the lease's rest; once
 * the first has recorded a 2xx, the second finds the delivery settled. A lapsed lease (a dead sender) is taken over;
 * a cancelled send gives its lease back at once. The activity runs in Temporal's mock activity environment, against
 * the run's database and a real receiver verifying signatures.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookDeliveryActivities, WEBHOOK_DELIVERY_LEASED } from '../../activities/webhookDelivery';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { signUp } from '../../services/accounts/accounts';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS } from '../../services/integrations/webhookDeliverySettings';
import { recordWebhookEvent } from '../../services/integrations/webhookOutbox';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { closeTestKnex, testKnex } from '../support/db';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';

let knex: Knex;
let receiver: WebhookReceiver;
let activities: ReturnType<typeof createWebhookDeliveryActivities>;
let workspaceId: string;

beforeAll(async () => {
  knex = testKnex();
  const secret = newWebhookSecret();
  receiver = await startWebhookReceiver(secret);
  const { user } = await signUp(knex, { name: 'Lease Owner', email: `lease-${randomUUID()}@example.test`, password: `pw-${randomUUID()}-1` }, { sessionTtlDays: 1 });
  workspaceId = user.id;
  // no relay serves this endpoint: only the test's own executions send its deliveries
  await knex('webhook_endpoints').insert({ workspace_id: workspaceId, url: receiver.url, event_types: ['job.started'], secret, created_by: user.id });
  activities = createWebhookDeliveryActivities({ knex, config: loadConfig(), logger }, { ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS, timeoutMs: 60_000 });
});

afterAll(async () => {
  receiver?.release(200);
  await receiver?.close();
  await closeTestKnex();
});

/** A new job.started event and its one delivery to the endpoint. */
async function newDelivery(): Promise<{ deliveryId: string; eventId: string }> {
  const jobId = randomUUID();
  const recorded = await knex.transaction((trx) =>
    recordWebhookEvent(trx, {
      workspaceId,
      type: 'job.started',
      resourceId: jobId,
      data: { workspaceId, projectId: null, jobId, kind: 'image', status: 'started', startedBy: null, approvalId: null, draftId: null, draftImageId: null, error: null, href: `/api/jobs/${jobId}` },
    }),
  );
  const row = await knex('webhook_deliveries').where({ event_id: recorded!.eventId }).first<{ id: string }>('id');
  return { deliveryId: row.id, eventId: recorded!.eventId };
}

const send = (deliveryId: string, env = new MockActivityEnvironment()) => env.run(activities.sendWebhookDelivery, deliveryId);
const requestsFor = (eventId: string) => receiver.received.filter((r) => r.id === eventId);
const deliveryRow = (id: string) =>
  knex('webhook_deliveries').where({ id }).first<{ status: string; attempts: number; lease_token: string | null; lease_expires_at: Date | null }>('status', 'attempts', 'lease_token', 'lease_expires_at');

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function leasedFailure(run: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  const failure = err as ApplicationFailure;
  expect(failure.type).toBe(WEBHOOK_DELIVERY_LEASED);
  expect(failure.nonRetryable).toBeFalsy();
  return failure;
}

const delayMs = (failure: ApplicationFailure) => Number(failure.nextRetryDelay);

it('a second execution of a delivery being sent sends nothing and retries after the lease; after the 2xx it finds the delivery settled', async () => {
  const { deliveryId, eventId } = await newDelivery();
  receiver.answer = (r) => (r.id === eventId ? 'hold' : 200);
  const first = send(deliveryId);
  await until('the first send to reach the receiver', () => requestsFor(eventId).length === 1);
  const leased = await deliveryRow(deliveryId);
  expect(leased).toMatchObject({ status: 'pending', attempts: 0, lease_token: expect.any(String) });

  // the retry Temporal makes when the first execution's heartbeats stop arriving, while it still waits for its answer
  const failure = await leasedFailure(send(deliveryId));
  expect(delayMs(failure)).toBeGreaterThan(0);
  expect(delayMs(failure)).toBeLessThanOrEqual(DEFAULT_WEBHOOK_DELIVERY_SETTINGS.leaseMs);
  expect(requestsFor(eventId)).toHaveLength(1);

  receiver.release(200);
  await expect(first).resolves.toEqual({ outcome: 'succeeded', statusCode: 200, endpointDisabled: false });
  expect(await deliveryRow(deliveryId)).toEqual({ status: 'succeeded', attempts: 1, lease_token: null, lease_expires_at: null });

  // the retry once the lease is over: the delivery is settled, nothing is sent
  await expect(send(deliveryId)).resolves.toEqual({ outcome: 'skipped', reason: 'succeeded' });
  expect(requestsFor(eventId).map((r) => [r.answered, r.verified])).toEqual([[200, true]]);
  expect(await knex('webhook_delivery_attempts').where({ delivery_id: deliveryId })).toHaveLength(1);
});

it('an unexpired lease of another sender is waited for with its remaining time; a lapsed one (a dead sender) is taken over and the event sent', async () => {
  receiver.answer = () => 200;
  const { deliveryId, eventId } = await newDelivery();
  await knex('webhook_deliveries')
    .where({ id: deliveryId })
    .update({ lease_token: randomUUID(), lease_expires_at: knex.raw(`now() + interval '1 hour'`) });
  const failure = await leasedFailure(send(deliveryId));
  expect(delayMs(failure)).toBeGreaterThan(3_500_000);
  expect(delayMs(failure)).toBeLessThanOrEqual(3_600_000);
  expect(requestsFor(eventId)).toHaveLength(0);

  await knex('webhook_deliveries')
    .where({ id: deliveryId })
    .update({ lease_expires_at: knex.raw(`now() - interval '1 second'`) });
  await expect(send(deliveryId)).resolves.toEqual({ outcome: 'succeeded', statusCode: 200, endpointDisabled: false });
  expect(requestsFor(eventId).map((r) => r.answered)).toEqual([200]);
  expect(await deliveryRow(deliveryId)).toEqual({ status: 'succeeded', attempts: 1, lease_token: null, lease_expires_at: null });
});

it('a send cancelled before its answer records nothing and gives its lease back, so the next execution sends at once', async () => {
  const { deliveryId, eventId } = await newDelivery();
  let requests = 0;
  // the first request of this event gets no answer until the connection closes
  receiver.answer = (r) => (r.id === eventId && requests++ === 0 ? 'hold' : 200);
  const env = new MockActivityEnvironment();
  const cancelled = send(deliveryId, env).then(
    () => null,
    (e: unknown) => e,
  );
  await until('the first send to reach the receiver', () => requestsFor(eventId).length === 1);
  env.cancel();
  expect(await cancelled).toBeInstanceOf(Error);
  expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', attempts: 0, lease_token: null, lease_expires_at: null });

  await expect(send(deliveryId)).resolves.toEqual({ outcome: 'succeeded', statusCode: 200, endpointDisabled: false });
  expect(requestsFor(eventId).map((r) => r.answered)).toEqual([null, 200]);
});
