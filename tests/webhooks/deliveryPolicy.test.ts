/**
 * The delivery policy against a real receiver (issue 29, item 4), with short settings instead of days: a 4xx other
 * than 410 fails that delivery at once and the next event of the resource goes; a delivery still failing at the end
 * of its retry window is given up; an endpoint whose every attempt failed for the disable period (with the minimum
 * number of failures) is disabled, its workspace's owners and admins e-mailed through a real SMTP server and told on
 * the realtime channel; its waiting deliveries stay pending for when it is turned on again.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createWebhookDeliveryActivities } from '../../activities/webhookDelivery';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { signUp } from '../../services/accounts/accounts';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS, type WebhookDeliverySettings } from '../../services/integrations/webhookDeliverySettings';
import { recordWebhookEvent } from '../../services/integrations/webhookOutbox';
import { startWebhookRelay } from '../../services/integrations/webhookRelay';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { closeTestKnex, testKnex } from '../support/db';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';

let knex: Knex;
let temporal: Awaited<ReturnType<typeof testClient>>;
let smtp: SmtpServer;
const cleanups: Array<() => Promise<void>> = [];

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A relay and a worker of their own (own task queue) with `settings`, serving the endpoints added to `endpoints`. */
async function deliveryStack(overrides: Partial<WebhookDeliverySettings>): Promise<{ endpoints: Set<string> }> {
  const settings = { ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS, retryBaseMs: 10, retryMaxMs: 50, sweepEveryMs: 1000, idleMs: 10_000, ...overrides };
  const queue = uniqueTaskQueue('webhook-policy');
  const endpoints = new Set<string>();
  const relay = startWebhookRelay({ knex, databaseUrl: process.env.DATABASE_URL as string, client: temporal.client, taskQueue: queue, settings, logger, accepts: (id) => endpoints.has(id) });
  await relay.ready();
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: queue,
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH as string },
    activities: createWebhookDeliveryActivities({ knex, config: { ...loadConfig(), smtpUrl: smtp.url, publicUrl: 'https://studio.example.test' }, logger }, settings),
  });
  const running = worker.run();
  cleanups.push(async () => {
    await relay.close();
    worker.shutdown();
    await running;
    await connection.close();
  });
  return { endpoints };
}

async function newEndpoint(receiver: WebhookReceiver, secret: string, endpoints: Set<string>) {
  const { user } = await signUp(knex, { name: 'Hook Owner', email: `hooks-${randomUUID()}@example.test`, password: `pw-${randomUUID()}-1` }, { sessionTtlDays: 1 });
  // a verified address: an unverified account receives no e-mail but its verification
  await knex('users').where({ id: user.id }).update({ email_verified_at: knex.fn.now() });
  const [row] = await knex('webhook_endpoints')
    .insert({ workspace_id: user.id, url: receiver.url, event_types: ['approval.created', 'approval.approved'], secret })
    .returning<Array<{ id: string }>>('id');
  endpoints.add(row.id);
  return { workspaceId: user.id, endpointId: row.id, email: user.email };
}

async function recordApproval(workspaceId: string, approvalId: string, status: 'pending' | 'approved') {
  return knex.transaction((trx) =>
    recordWebhookEvent(trx, {
      workspaceId,
      type: status === 'pending' ? 'approval.created' : 'approval.approved',
      resourceId: approvalId,
      data: {
        workspaceId,
        projectId: randomUUID(),
        approvalId,
        kind: 'image',
        status,
        fileName: 'kitchen.png',
        credits: 1,
        deadline: new Date(Date.now() + 86_400_000).toISOString(),
        createdBy: null,
        decidedBy: null,
        contentId: null,
        href: '/api/approvals',
      },
    }),
  );
}

// a bound to fail instead of hanging, not a speed requirement: workers start and Temporal answers slowly on a loaded machine
jest.setTimeout(300_000);

beforeAll(async () => {
  knex = testKnex();
  temporal = await testClient();
  smtp = await startSmtpServer();
});

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  await smtp?.close();
  await temporal?.close();
  await closeTestKnex();
});

it('fails a delivery the receiver refuses with a 4xx at once, then sends the next event of that resource; gives up at the end of the retry window', async () => {
  const { endpoints } = await deliveryStack({ retryWindowMs: 1500, disableMinFailures: 10_000 });
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver(secret);
  cleanups.push(() => receiver.close());
  const { workspaceId, endpointId } = await newEndpoint(receiver, secret, endpoints);
  const refused = randomUUID();
  const failing = randomUUID();
  receiver.answer = (r) => (r.data.approvalId === failing ? 503 : r.type === 'approval.created' ? 422 : 200);

  const created = await recordApproval(workspaceId, refused, 'pending');
  const approved = await recordApproval(workspaceId, refused, 'approved');
  const doomed = await recordApproval(workspaceId, failing, 'pending');
  await waitFor('the 4xx and the next event', async () => {
    const rows = (await knex('webhook_deliveries').whereIn('event_id', [created!.eventId, approved!.eventId]).select('status')) as Array<{ status: string }>;
    return rows.length === 2 && rows.every((r) => r.status !== 'pending');
  });
  expect(await knex('webhook_deliveries').where({ event_id: created!.eventId }).first('status', 'attempts', 'last_status_code', 'last_error')).toEqual({
    status: 'failed',
    attempts: 1,
    last_status_code: 422,
    last_error: 'HTTP 422',
  });
  expect(await knex('webhook_deliveries').where({ event_id: approved!.eventId }).first('status', 'attempts')).toEqual({ status: 'succeeded', attempts: 1 });

  // 503 again and again: retried until the window (1.5 s here, 3 days by default) is over, then failed
  const gaveUp = await waitFor('the failing delivery given up', async () => {
    const row = await knex('webhook_deliveries').where({ event_id: doomed!.eventId }).first('status', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at');
    return row.status === 'failed' ? row : null;
  });
  // retried (pending) until an attempt at or after the window's end, which gave it up
  const event = await knex('webhook_events').where({ id: doomed!.eventId }).first('created_at');
  const attempts = (await knex('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.event_id', doomed!.eventId).orderBy('a.id').select('a.attempted_at')) as Array<{ attempted_at: Date }>;
  expect(attempts).toHaveLength(gaveUp.attempts);
  expect(attempts[attempts.length - 1].attempted_at.getTime()).toBeGreaterThanOrEqual(new Date(event.created_at).getTime() + 1500);
  expect(gaveUp).toMatchObject({ last_status_code: 503, next_attempt_at: null });
  expect(gaveUp.last_error).toMatch(/^Gave up/);
  expect(receiver.received.filter((r) => r.data.approvalId === failing)).toHaveLength(gaveUp.attempts);
  expect((await knex('webhook_endpoints').where({ id: endpointId }).first('status')).status).toBe('enabled');
});

it('disables an endpoint whose every attempt failed for the disable period, e-mails its owners and admins and tells the workspace; what waits stays pending', async () => {
  const { endpoints } = await deliveryStack({ disableAfterMs: 1, disableMinFailures: 3 });
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver(secret);
  cleanups.push(() => receiver.close());
  const { workspaceId, endpointId, email } = await newEndpoint(receiver, secret, endpoints);
  receiver.answer = () => 500;
  const approvalId = randomUUID();
  const first = await recordApproval(workspaceId, approvalId, 'pending');
  const second = await recordApproval(workspaceId, approvalId, 'approved');

  const endpoint = await waitFor('the endpoint disabled', async () => {
    const row = await knex('webhook_endpoints').where({ id: endpointId }).first();
    return row.status === 'disabled' ? row : null;
  });
  expect(endpoint.disabled_reason).toMatch(/^Every delivery attempt failed for \d+ days \(3 attempts in a row\)/);
  expect(endpoint.consecutive_failures).toBe(3);
  const mail = await smtp.next((m) => m.to.includes(email));
  const workspace = await knex('workspaces').where({ id: workspaceId }).first('name');
  expect(mail.subject).toBe(`A webhook endpoint of ${workspace.name} was turned off`);
  expect(mail.text).toContain(receiver.url);
  expect(mail.text).toContain(`https://studio.example.test/?view=webhooks&workspace=${workspaceId}&endpoint=${endpointId}`);
  const notices = await knex('user_events').where({ workspace_id: workspaceId }).whereRaw(`payload->>'kind' = 'webhook' and payload->>'change' = 'disabled'`);
  expect(notices).toHaveLength(1);
  // nothing more is sent; both deliveries wait (the second behind the first of its approval)
  expect(receiver.received).toHaveLength(3);
  expect(await knex('webhook_deliveries').whereIn('event_id', [first!.eventId, second!.eventId]).orderBy('seq').select('status', 'attempts')).toEqual([
    { status: 'pending', attempts: 3 },
    { status: 'pending', attempts: 0 },
  ]);
});
