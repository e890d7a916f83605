/**
 * One trace per job (issue 46), for an assembly and for the webhook deliveries its changes make: with tracing on
 * (the SDK's in-memory exporter in place of OTLP), POST /api/video/assemble starts one trace that runs through the
 * Update-with-Start of the assembly workflow, the workflow, its activities and the stored video; the job's row keeps
 * that trace's id. The job.started and job.completed events recorded inside its activities keep their span, and the
 * webhook endpoint's workflow (another run, started by the relay) sends each of them in a `webhook.deliver` span of
 * the job's trace (linked to its own activity's span), with the HTTP POST to the receiver under it (checked in a plain
 * Node process: the http instrumentation does not patch node:http under jest's module registry). The workers run
 * the real worker's bundle (workers/workflowBundle.ts, with workflows/tracingInterceptors.ts) and tracing options.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { Client } from '@temporalio/client';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createActivities } from '../../activities';
import { createWebhookDeliveryActivities } from '../../activities/webhookDelivery';
import { logger } from '../../config/logger';
import { createProviders } from '../../providers';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS, type WebhookDeliverySettings } from '../../services/integrations/webhookDeliverySettings';
import { startWebhookRelay, type WebhookRelay } from '../../services/integrations/webhookRelay';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { startTracing, temporalClientInterceptors, type Tracing } from '../../services/platform/tracing';
import { createStorage } from '../../storage';
import { quietRuntime } from '../imageEdit/harness';
import { assemble, assemblyUser, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, type AssemblyTestApp, type AssemblyUser } from '../assembly/fixtures';
import { closeTestKnex, testKnex } from '../support/db';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';
import { startTracedWorkers, type TracedWorkers } from '../support/tracedWorkers';

const exporter = new InMemorySpanExporter();
const webhookQueue = uniqueTaskQueue('trace-webhooks');
const settings: WebhookDeliverySettings = { ...DEFAULT_WEBHOOK_DELIVERY_SETTINGS, retryBaseMs: 20, retryMaxMs: 200, timeoutMs: 10_000, sweepEveryMs: 1000, idleMs: 10_000 };
const secret = newWebhookSecret();
const ourEndpoints = new Set<string>();

let tracing: Tracing;
let app: AssemblyTestApp;
let workers: TracedWorkers;
let temporal: Awaited<ReturnType<typeof testClient>>;
let relay: WebhookRelay;
let receiver: WebhookReceiver;
let user: AssemblyUser;
let jobId: string;

beforeAll(async () => {
  // before the app and storage are made: they add their spans only while tracing runs
  tracing = startTracing({ serviceName: 'render-studio-test', spanExporter: exporter })!;
  app = await startAssemblyApp();
  quietRuntime();
  const knex = testKnex();
  const activities = createActivities({ knex, config: app.config, logger, storage: createStorage(app.config), providers: createProviders(app.config, { videoPreset: app.config.videoPreset }) });
  workers = await startTracedWorkers([
    { taskQueue: app.taskQueue, activities },
    { taskQueue: webhookQueue, activities: createWebhookDeliveryActivities({ knex, config: app.config, logger }, settings) },
  ]);
  temporal = await testClient();
  // the relay signals with a traced client, as the worker's (workers/main.ts)
  const tracedClient = new Client({ connection: temporal.client.connection, namespace: temporal.client.options.namespace, interceptors: temporalClientInterceptors() });
  relay = startWebhookRelay({ knex, databaseUrl: process.env.DATABASE_URL as string, client: tracedClient, taskQueue: webhookQueue, settings, logger, accepts: (id) => ourEndpoints.has(id) });
  await relay.ready();
  receiver = await startWebhookReceiver(secret);

  user = await assemblyUser(app.baseUrl);
  const [endpoint] = await knex('webhook_endpoints')
    .insert({ workspace_id: user.id, url: receiver.url, event_types: ['job.started', 'job.completed'], secret, created_by: user.id })
    .returning<Array<{ id: string }>>('id');
  ourEndpoints.add(endpoint.id);
  const clips = [await storeClip(app.config, user, { index: 0 }), await storeClip(app.config, user, { index: 1 })];
  const res = await assemble(app.baseUrl, user, clips.map((c) => c.id));
  expect(res.status).toBe(200);
  jobId = res.body.jobId as string;
  const { job } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 300_000 });
  expect(job.status).toBe('completed');
}, 420_000);

afterAll(async () => {
  await relay?.close();
  await workers?.stop();
  await temporal?.close();
  await receiver?.close();
  await app?.close();
  await tracing?.shutdown();
  await removeFixtures();
  await closeTestKnex();
});

/** The finished spans, waited for until `found` picks one (workflow spans arrive through the worker's sink after their task). */
async function spanWhere(found: (span: ReadableSpan) => boolean, what: string): Promise<ReadableSpan> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const span = exporter.getFinishedSpans().find(found);
    if (span) return span;
    if (Date.now() > deadline) {
      const byId = new Map(exporter.getFinishedSpans().map((s) => [idOf(s), s]));
      const edges = new Set(exporter.getFinishedSpans().map((s) => `${s.name} <- ${(s.parentSpanId && byId.get(s.parentSpanId)?.name) || (s.parentSpanId ? '?' : 'root')}`));
      throw new Error(`no span ${what}; finished (name <- parent): ${[...edges].join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceIdOf = (span: ReadableSpan) => span.spanContext().traceId;

/** The names from `span` up to the root of its trace, nearest first. */
function ancestry(span: ReadableSpan): string[] {
  const byId = new Map(exporter.getFinishedSpans().filter((s) => traceIdOf(s) === traceIdOf(span)).map((s) => [idOf(s), s]));
  const names: string[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) names.push(parent.name);
  return names;
}

function childOf(parent: ReadableSpan, name: string | RegExp): (span: ReadableSpan) => boolean {
  return (span) => span.parentSpanId === idOf(parent) && traceIdOf(span) === traceIdOf(parent) && (typeof name === 'string' ? span.name === name : name.test(span.name));
}

const inTraceOf = (root: ReadableSpan, match: (span: ReadableSpan) => boolean) => (span: ReadableSpan) => traceIdOf(span) === traceIdOf(root) && match(span);

jest.setTimeout(120_000);

describe('one trace per job: an assembly and its webhook deliveries', () => {
  it('runs from POST /api/video/assemble through the workflow and its activities to the stored video, and the job row keeps its trace id', async () => {
    const api = await spanWhere((s) => s.name === 'POST /api/video/assemble', 'of the request');
    const start = await spanWhere(childOf(api, 'UpdateWithStartWorkflow:assemblyAdmission'), 'UpdateWithStartWorkflow under the request');
    const run = await spanWhere(childOf(start, 'RunWorkflow:assemblyWorkflow'), 'RunWorkflow:assemblyWorkflow under the start');
    const activity = await spanWhere(childOf(run, /^StartActivity:/), 'StartActivity under RunWorkflow:assemblyWorkflow');
    await spanWhere(childOf(activity, /^RunActivity:/), 'RunActivity under StartActivity');
    const write = await spanWhere(inTraceOf(api, (s) => s.name === 'storage.put videos'), 'the stored video');
    expect(ancestry(write)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), 'RunWorkflow:assemblyWorkflow', 'UpdateWithStartWorkflow:assemblyAdmission', 'POST /api/video/assemble']));
    // the media steps on their own activities, each under the run
    for (const step of ['renderAssembly', 'storeCompiledVideo', 'createPendingApproval']) {
      const started = await spanWhere(childOf(run, `StartActivity:${step}`), `StartActivity:${step} under the run`);
      await spanWhere(childOf(started, `RunActivity:${step}`), `RunActivity:${step}`);
    }

    const row = (await testKnex()('assembly_jobs').where({ id: jobId }).first('trace_id')) as { trace_id: string | null };
    expect(row.trace_id).toBe(traceIdOf(api));
  });

  it("sends each webhook of the job in a span of the job's trace, linked to the endpoint workflow's send activity", async () => {
    const api = await spanWhere((s) => s.name === 'POST /api/video/assemble', 'of the request');
    for (const type of ['job.started', 'job.completed']) {
      const deliver = await spanWhere(inTraceOf(api, (s) => s.name === `webhook.deliver ${type}` && s.attributes['http.response.status_code'] === 200), `webhook.deliver ${type} in the job's trace`);
      // recorded by an activity of the assembly workflow (job.started by its admission, run for the Update-with-Start;
      // job.completed by a step of its run): the send continues from there
      const recordedIn = type === 'job.completed' ? ['RunWorkflow:assemblyWorkflow'] : [];
      expect(ancestry(deliver)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), ...recordedIn, 'POST /api/video/assemble']));
      // (the POST itself is the http instrumentation's span under it, which patches node:http only outside jest's
      // module registry: the last test checks it in a plain Node process)
      expect(deliver.attributes).toMatchObject({ 'webhook.event_type': type, 'webhook.attempt': 1 });
      // the endpoint's own workflow and activity did the sending: the span links to its RunActivity
      expect(deliver.links).toHaveLength(1);
      const sender = await spanWhere((s) => idOf(s) === deliver.links[0].context.spanId, 'the send activity the delivery links to');
      expect(sender.name).toBe('RunActivity:sendWebhookDelivery');
      // (the endpoint's run ends, and its span with it, once it has idled)
      const scheduled = await spanWhere((s) => idOf(s) === sender.parentSpanId, 'the StartActivity of the send');
      expect(scheduled.name).toBe('StartActivity:sendWebhookDelivery');
      const endpointRun = await spanWhere((s) => idOf(s) === scheduled.parentSpanId, "the endpoint workflow's run");
      expect(endpointRun.name).toBe('RunWorkflow:webhookEndpointWorkflow');
    }
    const received = receiver.received.filter((r) => r.data.jobId === jobId).map((r) => r.type);
    expect(received).toEqual(expect.arrayContaining(['job.started', 'job.completed']));
  });

  it('makes the POST to the receiver an HTTP span under webhook.deliver, in a plain Node process as the worker runs', () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const script = `
      const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
      const exporter = new InMemorySpanExporter();
      const { startTracing, inStoredTrace } = require('./services/platform/tracing');
      const tracing = startTracing({ serviceName: 'render-studio-check', spanExporter: exporter });
      const http = require('node:http');
      const { sendWebhookRequest } = require('./services/integrations/webhookSender');
      const server = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
      server.listen(0, '127.0.0.1', async () => {
        const url = new URL('http://127.0.0.1:' + server.address().port + '/hooks');
        const answer = await inStoredTrace('${parent}', 'webhook.deliver job.completed', {}, () =>
          sendWebhookRequest({ url, address: '127.0.0.1', family: 4, headers: {}, body: '{}', timeoutMs: 10000, keepBodyBytes: 100 }));
        server.close();
        await tracing.flush();
        const spans = exporter.getFinishedSpans().map((s) => ({ name: s.name, id: s.spanContext().spanId, traceId: s.spanContext().traceId, parent: s.parentSpanId, kind: s.kind, url: s.attributes['http.url'], status: s.attributes['http.status_code'] }));
        process.stdout.write('\\nSPANS ' + JSON.stringify({ status: answer.status, spans }));
        process.exit(0);
      });
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: path.resolve(__dirname, '..', '..'), env: { ...process.env, LOG_LEVEL: 'silent' }, encoding: 'utf8' });
    const { status, spans } = JSON.parse(out.slice(out.lastIndexOf('\nSPANS ') + '\nSPANS '.length)) as {
      status: number;
      spans: Array<{ name: string; id: string; traceId: string; parent?: string; kind: number; url?: string; status?: number }>;
    };
    expect(status).toBe(204);
    const deliver = spans.find((s) => s.name === 'webhook.deliver job.completed');
    // continues the stored trace, from the stored span
    expect(deliver).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parent: 'b7ad6b7169203331' });
    const post = spans.find((s) => s.parent === deliver?.id && s.kind === SpanKind.CLIENT);
    expect(post).toMatchObject({ name: 'POST', traceId: '0af7651916cd43dd8448eb211c80319c', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/), status: 204 });
  }, 120_000);

  it('keeps the event row\'s traceparent, which names a span of the job\'s trace', async () => {
    const api = await spanWhere((s) => s.name === 'POST /api/video/assemble', 'of the request');
    const events = (await testKnex()('webhook_events').where({ workspace_id: user.id, resource_id: jobId }).select('type', 'traceparent')) as Array<{ type: string; traceparent: string | null }>;
    expect(events.map((e) => e.type).sort()).toEqual(['job.completed', 'job.started']);
    for (const event of events) expect(event.traceparent).toMatch(new RegExp(`^00-${traceIdOf(api)}-[0-9a-f]{16}-01$`));
  });
});
