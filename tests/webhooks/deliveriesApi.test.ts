/**
 * The delivery log API (issue 29, item 5) over real deliveries: an endpoint registered through the API pointing at a
 * local receiver, events delivered by the relay, workflow and activities on the run's Temporal dev server; the log
 * newest first in pages, one delivery with its attempts, "Send again" (the same event again, same webhook-id, marked
 * as a re-send of the delivery it sends again) and
 * "Send test event" arriving verified at the receiver; admins and owners only; bad input a clear 4xx; 409 while the
 * endpoint is off. Then the daily pruning: rows past the retention go, an event with a pending delivery stays.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createApp } from '../../api/app';
import { createWebhookDeliveryActivities } from '../../activities/webhookDelivery';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS, type WebhookDeliverySettings } from '../../services/integrations/webhookDeliverySettings';
import { pruneWebhookLog, type AttemptView, type DeliveryView } from '../../services/integrations/webhookDeliveries';
import { recordWebhookEvent } from '../../services/integrations/webhookOutbox';
import { startWebhookRelay, type WebhookRelay } from '../../services/integrations/webhookRelay';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';
import { createTeamWithRoles, createTeamWorkspace, type TeamWithRoles } from '../support/workspaces';

const queue = uniqueTaskQueue('webhook-log');
const settings: WebhookDeliverySettings = { ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS, retryBaseMs: 20, retryMaxMs: 200, sweepEveryMs: 1000, idleMs: 10_000 };
const ourEndpoints = new Set<string>();
let knex: Knex;
let server: TestServer;
let temporal: Awaited<ReturnType<typeof testClient>>;
let relay: WebhookRelay;
let worker: { stop: () => Promise<void> };
let receiver: WebhookReceiver;
let team: TeamWithRoles;
let endpointId: string;

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const base = () => `/api/workspaces/${team.id}/webhooks/${endpointId}`;

async function recordJob(jobId: string) {
  return knex.transaction((trx) =>
    recordWebhookEvent(trx, {
      workspaceId: team.id,
      type: 'job.started',
      resourceId: jobId,
      data: { workspaceId: team.id, projectId: null, jobId, kind: 'image', status: 'started', startedBy: null, approvalId: null, draftId: null, draftImageId: null, error: null, href: `/api/jobs/${jobId}` },
    }),
  );
}

async function allSettled(): Promise<boolean> {
  const rows = (await knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('status')) as Array<{ status: string }>;
  return rows.length > 0 && rows.every((r) => r.status !== 'pending');
}

// a bound to fail instead of hanging, not a speed requirement: workers start and Temporal answers slowly on a loaded machine
jest.setTimeout(300_000);

beforeAll(async () => {
  knex = testKnex();
  temporal = await testClient();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
  team = await createTeamWithRoles(server.baseUrl);
  receiver = await startWebhookReceiver(newWebhookSecret());
  const created = await request<{ endpoint: { id: string }; secret: string }>(server.baseUrl, `/api/workspaces/${team.id}/webhooks`, {
    token: team.admin.token,
    json: { url: receiver.url, eventTypes: ['job.started'] },
  });
  expect(created.status).toBe(201);
  endpointId = created.body.endpoint.id;
  ourEndpoints.add(endpointId);
  // the receiver verifies with the secret the API answered once
  receiver.useSecret(created.body.secret);

  relay = startWebhookRelay({ knex, databaseUrl: process.env.DATABASE_URL as string, client: temporal.client, taskQueue: queue, settings, logger, accepts: (id) => ourEndpoints.has(id) });
  await relay.ready();
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const w = await Worker.create({
    connection,
    taskQueue: queue,
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH as string },
    activities: createWebhookDeliveryActivities({ knex, config: loadConfig(), logger }, settings),
  });
  const running = w.run();
  worker = {
    stop: async () => {
      w.shutdown();
      await running;
      await connection.close();
    },
  };
});

afterAll(async () => {
  await worker?.stop();
  await relay?.close();
  await receiver?.close();
  await server?.close();
  await temporal?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

it('lists the log newest first in pages, shows attempts, sends again and sends a test event', async () => {
  const jobs = [randomUUID(), randomUUID(), randomUUID()];
  const eventIds: string[] = [];
  for (const jobId of jobs) eventIds.push((await recordJob(jobId))!.eventId);
  await waitFor('the deliveries', allSettled);

  const first = await request<{ deliveries: DeliveryView[]; nextCursor: string | null }>(server.baseUrl, `${base()}/deliveries?limit=2`, { token: team.admin.token });
  expect(first.status).toBe(200);
  expect(first.body.deliveries.map((d) => d.eventId)).toEqual([eventIds[2], eventIds[1]]);
  expect(first.body.deliveries[0]).toMatchObject({
    eventType: 'job.started',
    resourceId: jobs[2],
    status: 'succeeded',
    attempts: 1,
    lastStatusCode: 200,
    lastError: null,
    nextAttemptAt: null,
    responseBody: 'ok',
  });
  expect(first.body.deliveries[0].lastLatencyMs).toEqual(expect.any(Number));
  expect(JSON.parse(first.body.deliveries[0].requestBody!)).toMatchObject({ type: 'job.started', version: 1, data: { jobId: jobs[2] } });
  expect(first.body.nextCursor).toEqual(expect.any(String));
  const second = await request<{ deliveries: DeliveryView[]; nextCursor: string | null }>(server.baseUrl, `${base()}/deliveries?limit=2&cursor=${first.body.nextCursor}`, {
    token: team.owner.token,
  });
  expect(second.body.deliveries.map((d) => d.eventId)).toEqual([eventIds[0]]);
  expect(second.body.nextCursor).toBeNull();

  const deliveryId = second.body.deliveries[0].id;
  const one = await request<{ delivery: DeliveryView; attempts: AttemptView[] }>(server.baseUrl, `${base()}/deliveries/${deliveryId}`, { token: team.admin.token });
  expect(one.status).toBe(200);
  expect(one.body.delivery.id).toBe(deliveryId);
  expect(one.body.attempts).toEqual([{ attemptedAt: expect.any(String), statusCode: 200, error: null, latencyMs: expect.any(Number), requestBody: expect.any(String), responseBody: 'ok' }]);

  // Send again: a new delivery of the same event, same webhook-id at the receiver
  const again = await request<{ delivery: DeliveryView }>(server.baseUrl, `${base()}/deliveries/${deliveryId}/redeliver`, { method: 'POST', token: team.admin.token });
  expect(again.status).toBe(202);
  expect(again.body.delivery).toMatchObject({ eventId: eventIds[0], status: 'pending', attempts: 0 });
  expect(again.body.delivery.id).not.toBe(deliveryId);
  // the log tells the re-send from the original: it names the delivery it sends again
  expect(again.body.delivery.redeliveryOf).toEqual({ id: deliveryId, createdAt: second.body.deliveries[0].createdAt });
  expect(second.body.deliveries[0].redeliveryOf).toBeNull();
  const relisted = await request<{ deliveries: DeliveryView[] }>(server.baseUrl, `${base()}/deliveries?limit=1`, { token: team.admin.token });
  expect(relisted.body.deliveries[0]).toMatchObject({ id: again.body.delivery.id, redeliveryOf: { id: deliveryId } });
  const originalAgain = await request<{ delivery: DeliveryView }>(server.baseUrl, `${base()}/deliveries/${deliveryId}`, { token: team.admin.token });
  expect(originalAgain.body.delivery.redeliveryOf).toBeNull();
  await waitFor('the redelivery', async () => (await knex('webhook_deliveries').where({ id: again.body.delivery.id }).first('status')).status === 'succeeded');
  expect(receiver.received.filter((r) => r.id === eventIds[0] && r.answered === 200)).toHaveLength(2);

  // Send test event: webhook.test to this endpoint, though it subscribes to job.started only
  const test = await request<{ delivery: DeliveryView }>(server.baseUrl, `${base()}/test`, { method: 'POST', token: team.owner.token });
  expect(test.status).toBe(202);
  expect(test.body.delivery).toMatchObject({ eventType: 'webhook.test', status: 'pending', resourceId: endpointId });
  await waitFor('the test event', async () => receiver.received.find((r) => r.type === 'webhook.test' && r.answered === 200));
  const testEvent = receiver.received.find((r) => r.type === 'webhook.test')!;
  expect(testEvent).toMatchObject({ verified: true, id: test.body.delivery.eventId, data: { workspaceId: team.id, endpointId } });
});

it('is for admins and owners of the workspace only, and answers bad input with a 4xx', async () => {
  for (const user of [team.member, team.viewer]) {
    const res = await request(server.baseUrl, `${base()}/deliveries`, { token: user.token });
    expect(res.status).toBe(403);
    expect((await request(server.baseUrl, `${base()}/test`, { method: 'POST', token: user.token })).status).toBe(403);
  }
  expect((await request(server.baseUrl, `${base()}/deliveries`, { token: team.outsider.token })).status).toBe(404);
  // another workspace's endpoint is not found through this one
  const other = await createTeamWorkspace(server.baseUrl, { owner: team.outsider });
  expect((await request(server.baseUrl, `/api/workspaces/${other.id}/webhooks/${endpointId}/deliveries`, { token: team.outsider.token })).body).toMatchObject({
    code: 'WEBHOOK_ENDPOINT_NOT_FOUND',
  });
  const missing = await request(server.baseUrl, `${base()}/deliveries/${randomUUID()}`, { token: team.admin.token });
  expect(missing.status).toBe(404);
  expect(missing.body).toMatchObject({ success: false, code: 'WEBHOOK_DELIVERY_NOT_FOUND' });
  expect((await request(server.baseUrl, `${base()}/deliveries/not-a-uuid/redeliver`, { method: 'POST', token: team.admin.token })).status).toBe(404);
  for (const query of ['cursor=abc', 'limit=0', 'limit=101', 'limit=two']) {
    const res = await request(server.baseUrl, `${base()}/deliveries?${query}`, { token: team.admin.token });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
  }
});

it('refuses Send again and Send test event while the endpoint is off', async () => {
  const off = await request(server.baseUrl, base(), { method: 'PATCH', token: team.admin.token, json: { enabled: false } });
  expect(off.status).toBe(200);
  const list = await request<{ deliveries: DeliveryView[] }>(server.baseUrl, `${base()}/deliveries`, { token: team.admin.token });
  const before = list.body.deliveries.length;
  const again = await request(server.baseUrl, `${base()}/deliveries/${list.body.deliveries[0].id}/redeliver`, { method: 'POST', token: team.admin.token });
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ success: false, code: 'WEBHOOK_ENDPOINT_DISABLED' });
  expect((await request(server.baseUrl, `${base()}/test`, { method: 'POST', token: team.admin.token })).status).toBe(409);
  expect((await request<{ deliveries: DeliveryView[] }>(server.baseUrl, `${base()}/deliveries`, { token: team.admin.token })).body.deliveries).toHaveLength(before);
  await request(server.baseUrl, base(), { method: 'PATCH', token: team.admin.token, json: { enabled: true } });
});

it('prunes log rows past the retention, keeping events that still have a pending delivery and deliveries a kept re-send names', async () => {
  const old = new Date(Date.now() - 31 * 86_400_000);
  const recent = new Date(Date.now() - 29 * 86_400_000);
  const addEvent = async (at: Date, status: 'succeeded' | 'pending') => {
    const [event] = await knex('webhook_events')
      .insert({ workspace_id: team.id, type: 'job.started', resource_id: randomUUID(), payload: JSON.stringify({ type: 'job.started' }), created_at: at })
      .returning<Array<{ id: string }>>('id');
    const [delivery] = await knex('webhook_deliveries')
      .insert({ endpoint_id: endpointId, event_id: event.id, status, created_at: at, next_attempt_at: status === 'pending' ? new Date(Date.now() + 86_400_000) : null })
      .returning<Array<{ id: string }>>('id');
    await knex('webhook_delivery_attempts').insert({ delivery_id: delivery.id, attempted_at: at, status_code: 500, latency_ms: 3 });
    return { eventId: event.id, deliveryId: delivery.id };
  };
  const gone = await addEvent(old, 'succeeded');
  const stillPending = await addEvent(old, 'pending');
  const kept = await addEvent(recent, 'succeeded');
  // an old delivery sent again: kept while its re-send (still pending, so its event stays) is, so the log names it
  const resentOriginal = await addEvent(old, 'succeeded');
  const [resend] = await knex('webhook_deliveries')
    .insert({ endpoint_id: endpointId, event_id: resentOriginal.eventId, status: 'pending', redelivery_of: resentOriginal.deliveryId, next_attempt_at: new Date(Date.now() + 86_400_000) })
    .returning<Array<{ id: string }>>('id');
  // an old event sent again long ago: the original and its re-send go together with the event
  const resentLongAgo = await addEvent(old, 'succeeded');
  const [oldResend] = await knex('webhook_deliveries')
    .insert({ endpoint_id: endpointId, event_id: resentLongAgo.eventId, status: 'succeeded', created_at: old, redelivery_of: resentLongAgo.deliveryId })
    .returning<Array<{ id: string }>>('id');

  const removed = await pruneWebhookLog(knex, 30);
  expect(removed.events).toBeGreaterThanOrEqual(1);
  expect(await knex('webhook_events').where({ id: gone.eventId }).first()).toBeUndefined();
  expect(await knex('webhook_deliveries').where({ id: gone.deliveryId }).first()).toBeUndefined();
  // the pending delivery and its event stay (its old attempt goes); the recent ones stay whole
  expect(await knex('webhook_deliveries').where({ id: stillPending.deliveryId }).first('status')).toEqual({ status: 'pending' });
  expect(await knex('webhook_events').where({ id: stillPending.eventId }).first('id')).toEqual({ id: stillPending.eventId });
  expect(await knex('webhook_delivery_attempts').where({ delivery_id: stillPending.deliveryId }).first()).toBeUndefined();
  expect(await knex('webhook_delivery_attempts').where({ delivery_id: kept.deliveryId }).count<Array<{ count: string }>>('* as count')).toEqual([{ count: '1' }]);
  expect(await knex('webhook_events').where({ id: kept.eventId }).first('id')).toEqual({ id: kept.eventId });
  expect(await knex('webhook_deliveries').where({ id: resentOriginal.deliveryId }).first('id')).toEqual({ id: resentOriginal.deliveryId });
  expect(await knex('webhook_deliveries').where({ id: resend.id }).first('redelivery_of')).toEqual({ redelivery_of: resentOriginal.deliveryId });
  expect(await knex('webhook_deliveries').whereIn('id', [resentLongAgo.deliveryId, oldResend.id]).count<Array<{ count: string }>>('* as count')).toEqual([{ count: '0' }]);
  expect(await knex('webhook_events').where({ id: resentLongAgo.eventId }).first()).toBeUndefined();
  // the future-dated pending deliveries are not sent by this test's worker before it ends: they are of month-old events
  await knex('webhook_deliveries').whereIn('id', [stillPending.deliveryId, resend.id]).delete();
});
