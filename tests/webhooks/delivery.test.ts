/**
 * Webhook delivery end to end (issue 29, items 4 and 6): events recorded through the outbox in their change's
 * transaction reach a REAL receiver on 127.0.0.1 that verifies every request with the `standardwebhooks` library,
 * through the relay (LISTEN + signalWithStart), the per-endpoint workflow and the send activity, on the run's
 * Temporal dev server and PostgreSQL. The receiver answers 500 for a while, then 2xx, is down for a while, comes
 * back, and finally answers 410: every event arrives, in order per resource, none is lost, none twice after a 2xx,
 * the log shows the attempts, and 410 disables the endpoint. A worker stopped in the middle of a send (the receiver
 * holding its answer) loses nothing: a new worker sends it again. Retries are short through the delivery settings.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createWebhookDeliveryActivities } from '../../activities/webhookDelivery';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { signUp } from '../../services/accounts/accounts';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS, type WebhookDeliverySettings } from '../../services/integrations/webhookDeliverySettings';
import { WEBHOOK_DISABLED_GONE } from '../../services/integrations/webhookDeliveries';
import { recordWebhookEvent } from '../../services/integrations/webhookOutbox';
import { startWebhookRelay, type WebhookRelay } from '../../services/integrations/webhookRelay';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { closeTestKnex, testKnex } from '../support/db';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhookReceiver';

const queue = uniqueTaskQueue('webhooks');
const settings: WebhookDeliverySettings = {
  ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS,
  retryBaseMs: 20,
  retryMaxMs: 200,
  timeoutMs: 10_000,
  parallelism: 4,
  sweepEveryMs: 1000,
  idleMs: 10_000,
};
const ourEndpoints = new Set<string>();
let knex: Knex;
let temporal: Awaited<ReturnType<typeof testClient>>;
let relay: WebhookRelay;
const receivers: WebhookReceiver[] = [];

interface RunningWorker {
  stop: () => Promise<void>;
}

async function startWorker(): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: queue,
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH as string },
    activities: createWebhookDeliveryActivities({ knex, config: loadConfig(), logger }, settings),
    // a stop does not wait for the send under way: it is cancelled in the middle, as a crash would leave it
    shutdownGraceTime: '50 ms',
  });
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 180_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function newEndpoint(receiver: WebhookReceiver, secret: string): Promise<{ workspaceId: string; endpointId: string }> {
  const { user } = await signUp(knex, { name: 'Hook Owner', email: `hooks-${randomUUID()}@example.test`, password: `pw-${randomUUID()}-1` }, { sessionTtlDays: 1 });
  const [row] = await knex('webhook_endpoints')
    .insert({ workspace_id: user.id, url: receiver.url, event_types: ['job.started', 'job.completed'], secret, created_by: user.id })
    .returning<Array<{ id: string }>>('id');
  ourEndpoints.add(row.id);
  return { workspaceId: user.id, endpointId: row.id };
}

/** Records job event `index` of job `jobId` in a transaction of its own, as a service does with its change. */
async function recordJobEvent(workspaceId: string, jobId: string, index: number) {
  return knex.transaction((trx) =>
    recordWebhookEvent(trx, {
      workspaceId,
      type: index === 0 ? 'job.started' : 'job.completed',
      resourceId: jobId,
      // the event's place in its job's sequence rides in href's last segment
      data: { workspaceId, projectId: null, jobId, kind: 'clip', status: index === 0 ? 'started' : 'completed', startedBy: null, approvalId: null, draftId: null, draftImageId: null, error: null, href: `/api/video-generation/status/${jobId}/${index}` },
    }),
  );
}

const indexOf = (r: ReceivedWebhook): number => Number(String(r.data.href).split('/').pop());

/** Whether a request came for a later event of its job while an earlier one had not been answered 2xx. */
function orderChecker() {
  const acked = new Map<string, Set<number>>();
  const violations: string[] = [];
  return {
    violations,
    onRequest(request: ReceivedWebhook) {
      const jobId = String(request.data.jobId);
      const index = indexOf(request);
      const done = acked.get(jobId) ?? new Set<number>();
      for (let earlier = 0; earlier < index; earlier++) if (!done.has(earlier)) violations.push(`${jobId} #${index} before #${earlier} was delivered`);
    },
    settle(requests: ReceivedWebhook[]) {
      for (const r of requests) {
        if (r.answered !== null && r.answered >= 200 && r.answered < 300) {
          const jobId = String(r.data.jobId);
          if (!acked.has(jobId)) acked.set(jobId, new Set());
          acked.get(jobId)!.add(indexOf(r));
        }
      }
    },
  };
}

function twoHundreds(received: ReceivedWebhook[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of received) if (r.answered !== null && r.answered >= 200 && r.answered < 300) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  return counts;
}

// a bound to fail instead of hanging, not a speed requirement: workers start and Temporal answers slowly on a loaded machine
jest.setTimeout(300_000);

beforeAll(async () => {
  knex = testKnex();
  temporal = await testClient();
  relay = startWebhookRelay({ knex, databaseUrl: process.env.DATABASE_URL as string, client: temporal.client, taskQueue: queue, settings, logger, accepts: (id) => ourEndpoints.has(id) });
  await relay.ready();
});

afterAll(async () => {
  await relay.close();
  for (const r of receivers) await r.close();
  await temporal.close();
  await closeTestKnex();
});

it('delivers every event in order per resource through 500s and an outage, never twice after a 2xx, logs each attempt, and a 410 disables the endpoint', async () => {
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver(secret);
  receivers.push(receiver);
  const { workspaceId, endpointId } = await newEndpoint(receiver, secret);
  const order = orderChecker();
  let mode = 204;
  receiver.onRequest = (r) => {
    order.settle(receiver.received);
    order.onRequest(r);
  };
  // the first 8 requests fail with 500, then the receiver answers `mode`
  receiver.answer = (_r, index) => (index < 8 ? 500 : mode);
  const worker = await startWorker();
  try {
    const jobs = [randomUUID(), randomUUID(), randomUUID()];
    const eventIds: string[] = [];
    for (let index = 0; index < 4; index++) {
      for (const jobId of jobs) {
        const recorded = await recordJobEvent(workspaceId, jobId, index);
        expect(recorded).toEqual({ eventId: expect.any(String), deliveries: 1 });
        eventIds.push(recorded!.eventId);
      }
    }

    // some delivered, then the receiver goes down (its open answers finish first) and stays down for 3 failed attempts
    await waitFor('6 events delivered', () => twoHundreds(receiver.received).size >= 6);
    await receiver.down();
    const refusedBefore = Number((await knex('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.endpoint_id', endpointId).whereNull('a.status_code').count<Array<{ count: string }>>('* as count'))[0].count);
    await waitFor('3 attempts refused while down', async () => {
      const [{ count }] = await knex('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.endpoint_id', endpointId).whereNull('a.status_code').count<Array<{ count: string }>>('* as count');
      return Number(count) >= refusedBefore + 3;
    });
    const deliveredWhileDown = twoHundreds(receiver.received).size;
    await receiver.up();
    await waitFor('every delivery succeeded', async () => {
      const rows = await knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('status');
      return rows.length === 12 && rows.every((r: { status: string }) => r.status === 'succeeded');
    });
    expect(deliveredWhileDown).toBeLessThan(12);

    // every event arrived, verified, exactly once with a 2xx, in order per job
    order.settle(receiver.received);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const acked = twoHundreds(receiver.received);
    expect([...acked.keys()].sort()).toEqual([...eventIds].sort());
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    expect(order.violations).toEqual([]);
    expect(receiver.received.filter((r) => r.answered === 500)).toHaveLength(8);

    // the log: every request the receiver answered is an attempt, plus the refused connections while it was down
    const attempts = (await knex('webhook_delivery_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.endpoint_id', endpointId)
      .select('a.status_code', 'a.error', 'a.request_body', 'a.response_body', 'a.latency_ms')) as Array<{ status_code: number | null; error: string | null; request_body: string; response_body: string | null; latency_ms: number }>;
    expect(attempts.filter((a) => a.status_code === 500)).toHaveLength(8);
    expect(attempts.filter((a) => a.status_code === 204)).toHaveLength(12);
    expect(attempts.filter((a) => a.status_code === null).length).toBeGreaterThanOrEqual(3);
    expect(attempts.filter((a) => a.status_code === null).every((a) => a.error && a.error.length > 0)).toBe(true);
    expect(attempts.find((a) => a.status_code === 500)?.response_body).toBe('answer 500');
    expect(JSON.parse(attempts[0].request_body)).toMatchObject({ version: 1, data: { workspaceId } });
    const deliveries = (await knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('attempts', 'last_status_code', 'delivered_at', 'next_attempt_at')) as Array<{
      attempts: number;
      last_status_code: number;
      delivered_at: Date | null;
      next_attempt_at: Date | null;
    }>;
    expect(deliveries.reduce((n, d) => n + d.attempts, 0)).toBe(attempts.length);
    expect(deliveries.every((d) => d.last_status_code === 204 && d.delivered_at !== null && d.next_attempt_at === null)).toBe(true);

    // 410 Gone: that delivery fails, the endpoint is disabled and the workspace hears of it; later events are not recorded for it
    mode = 410;
    const gone = await recordJobEvent(workspaceId, jobs[0], 4);
    await waitFor('the endpoint disabled', async () => (await knex('webhook_endpoints').where({ id: endpointId }).first('status')).status === 'disabled');
    const endpoint = await knex('webhook_endpoints').where({ id: endpointId }).first();
    expect(endpoint).toMatchObject({ status: 'disabled', disabled_reason: WEBHOOK_DISABLED_GONE });
    expect(await knex('webhook_deliveries').where({ event_id: gone!.eventId }).first('status', 'last_status_code', 'attempts')).toEqual({ status: 'failed', last_status_code: 410, attempts: 1 });
    const notices = await knex('user_events').where({ workspace_id: workspaceId }).whereRaw(`payload->>'kind' = 'webhook' and payload->>'change' = 'disabled'`);
    expect(notices).toHaveLength(1);
    expect(await recordJobEvent(workspaceId, jobs[1], 4)).toBeNull();
    expect(receiver.received.filter((r) => r.answered === 410)).toHaveLength(1);
  } finally {
    await worker.stop();
  }
});

it('loses nothing when the worker stops in the middle of a send: a new worker sends it again, then the rest in order', async () => {
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver(secret);
  receivers.push(receiver);
  const { workspaceId, endpointId } = await newEndpoint(receiver, secret);
  let firstArrived: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
  // the first request gets no answer (a slow receiver); the worker is stopped while it waits
  receiver.answer = (_r, index) => {
    if (index === 0) {
      firstArrived();
      return 'hold';
    }
    return 200;
  };
  const order = orderChecker();
  receiver.onRequest = (r) => {
    order.settle(receiver.received);
    order.onRequest(r);
  };
  const jobId = randomUUID();
  const first = await startWorker();
  let second: RunningWorker | null = null;
  try {
    const eventIds: string[] = [];
    for (let index = 0; index < 3; index++) eventIds.push((await recordJobEvent(workspaceId, jobId, index))!.eventId);
    await arrived;
    await first.stop();
    // nothing was recorded for the interrupted send: the delivery is still pending
    expect(await knex('webhook_deliveries').where({ endpoint_id: endpointId, status: 'succeeded' }).count<Array<{ count: string }>>('* as count')).toEqual([{ count: '0' }]);

    second = await startWorker();
    await waitFor('every delivery succeeded after the restart', async () => {
      const rows = await knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('status');
      return rows.length === 3 && rows.every((r: { status: string }) => r.status === 'succeeded');
    });
    order.settle(receiver.received);
    expect(order.violations).toEqual([]);
    const acked = twoHundreds(receiver.received);
    expect([...acked.keys()].sort()).toEqual([...eventIds].sort());
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    // the interrupted event came twice (once unanswered), with the same webhook-id
    expect(receiver.received.filter((r) => r.id === eventIds[0]).length).toBeGreaterThanOrEqual(2);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  } finally {
    await second?.stop();
  }
});
