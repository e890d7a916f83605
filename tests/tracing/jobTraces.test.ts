/**
 * One trace per job (issue 46): with tracing on (the SDK's in-memory exporter in place of OTLP), a hosted image edit
 * and a hosted clip each make one trace that runs from the API request through StartWorkflow, the workflow, its
 * activities, the provider's HTTP calls (tests/support/fakeFal.ts) and the storage writes. The workers run the real
 * worker's bundle (workers/workflowBundle.ts, with workflows/tracingInterceptors.ts) and its tracing options.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { loadConfig, type AppConfig } from '../../config/env';
import { createProviders } from '../../providers';
import { startTracing, temporalWorkerTracing, type Tracing } from '../../services/platform/tracing';
import { jobMetricsSinks } from '../../workers/metrics';
import { clipUser, startClip, waitForJob } from '../clips/fixtures';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { workerBundle } from '../support/workflowBundles';
import { generateImage, quietRuntime, startHarness, userWithRender, type Harness } from '../imageEdit/harness';

const API_KEY = 'fal-trace-key';
const EDIT = 'fal-ai/nano-banana/edit';
const UPSCALE = 'fal-ai/esrgan';
const VIDEO = 'fake/video-traced';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let fake: FakeFal;
let harness: Harness;
let connection: NativeConnection;
let workers: Worker[] = [];
let running: Promise<void>[] = [];

function hostedConfig(): Partial<AppConfig> {
  return { providerKind: 'fal', falBaseUrl: fake.baseUrl, falApiKey: API_KEY, falImageEditModel: EDIT, falUpscaleModel: UPSCALE, falVideoModel: VIDEO };
}

beforeAll(async () => {
  // before the app and storage are made: they add their spans only while tracing runs
  tracing = startTracing({ serviceName: 'render-studio-test', spanExporter: exporter })!;
  fake = await startFakeFal({
    apiKey: API_KEY,
    models: {
      [EDIT]: { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
      [UPSCALE]: { kind: 'upscale', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
      [VIDEO]: { kind: 'video', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
    },
  });
  const config = { ...loadConfig(), ...hostedConfig() };
  const providers = createProviders(config, { imagePollIntervalMs: 20, videoPollIntervalMs: 20, videoPreset: config.videoPreset });
  harness = await startHarness('traces', { workers: false, providers, config: hostedConfig(), imageThread: false });
  quietRuntime();
  const codePath = await workerBundle();
  connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const traced = temporalWorkerTracing();
  workers = await Promise.all(
    Object.values(harness.queues).map((taskQueue) =>
      Worker.create({ connection, taskQueue, workflowBundle: { codePath }, activities: harness.activities, interceptors: traced.interceptors, sinks: { ...jobMetricsSinks(), ...traced.sinks } }),
    ),
  );
  running = workers.map((w) => w.run());
});

afterAll(async () => {
  for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  await Promise.all(running);
  await connection?.close();
  await harness?.close();
  await fake?.close();
  await tracing?.shutdown();
  await closeTestKnex();
});

/** The finished spans, waited for until `found` picks one (workflow spans arrive through the worker's sink after their task). */
async function spanWhere(found: (span: ReadableSpan) => boolean, what: string): Promise<ReadableSpan> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const span = exporter.getFinishedSpans().find(found);
    if (span) return span;
    if (Date.now() > deadline) throw new Error(`no span ${what}; finished: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function traceOf(span: ReadableSpan): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === span.spanContext().traceId);
}

/** The names from `span` up to the root of its trace, nearest first. */
function ancestry(span: ReadableSpan): string[] {
  const byId = new Map(traceOf(span).map((s) => [s.spanContext().spanId, s]));
  const names: string[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) names.push(parent.name);
  return names;
}

function childOf(parent: ReadableSpan, name: string | RegExp): (span: ReadableSpan) => boolean {
  return (span) =>
    span.parentSpanId === parent.spanContext().spanId && span.spanContext().traceId === parent.spanContext().traceId && (typeof name === 'string' ? span.name === name : name.test(span.name));
}

/** API -> the client's start (`StartWorkflow:<type>`, or `UpdateWithStartWorkflow:<update>`) -> RunWorkflow of `workflowType`, each the parent of the next. */
async function expectJobStart(api: ReadableSpan, workflowType: string, startName = `StartWorkflow:${workflowType}`): Promise<ReadableSpan> {
  const start = await spanWhere(childOf(api, startName), `${startName} under ${api.name}`);
  return spanWhere(childOf(start, `RunWorkflow:${workflowType}`), `RunWorkflow:${workflowType} under ${startName}`);
}

/** Spans of the trace of `root` matching `match`, waited for. */
async function inTrace(root: ReadableSpan, match: (span: ReadableSpan) => boolean, what: string): Promise<ReadableSpan> {
  return spanWhere((s) => s.spanContext().traceId === root.spanContext().traceId && match(s), what);
}

const toFake = (span: ReadableSpan) => String(span.attributes['url.full'] ?? span.attributes['http.url'] ?? '').startsWith(fake.baseUrl);

describe('one trace per job', () => {
  it("runs from POST /api/ai-image-simple through the workflow and its activities to the provider's calls and the storage write", async () => {
    const { user, renderId } = await userWithRender(harness.baseUrl);

    const res = await generateImage(harness.baseUrl, user, { baseImage: renderId, prompt: 'bright summer day' });
    expect(res.status).toBe(200);

    const api = await spanWhere((s) => s.name === 'POST /api/ai-image-simple', 'of the request');
    const run = await expectJobStart(api, 'imageEditWorkflow');
    const activity = await spanWhere(childOf(run, /^StartActivity:/), 'StartActivity under RunWorkflow:imageEditWorkflow');
    await spanWhere(childOf(activity, /^RunActivity:/), 'RunActivity under StartActivity');
    // the provider's HTTP calls (submit, status, result) inside an activity of this workflow
    const call = await inTrace(api, (s) => toFake(s) && ancestry(s).some((n) => n.startsWith('RunActivity:')), 'an HTTP call to the fake provider');
    expect(ancestry(call)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), 'RunWorkflow:imageEditWorkflow', 'StartWorkflow:imageEditWorkflow', 'POST /api/ai-image-simple']));
    const write = await inTrace(api, (s) => s.name === 'storage.put images', 'the storage write of the edit');
    expect(ancestry(write)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), 'RunWorkflow:imageEditWorkflow', 'POST /api/ai-image-simple']));
    // every span of the job is in the request's trace, whose root is the caller's own request (its fetch, traceparent
    // and all): nothing of the job started a trace of its own
    const roots = traceOf(api).filter((s) => !s.parentSpanId);
    expect(roots).toHaveLength(1);
    expect([api, ...traceOf(api).filter((s) => s.spanContext().spanId === api.parentSpanId)]).toContain(roots[0]);
    // the job's row keeps the trace's id (the Activity view shows it to admins)
    const row = (await testKnex()('ai_image_edits').where({ workflow_id: `image-edit-${res.body.metadata.jobId}` }).first('trace_id')) as { trace_id: string | null };
    expect(row.trace_id).toBe(api.spanContext().traceId);
  });

  it('runs from POST /api/video-generation/start through the clip workflow to the provider and the stored clip', async () => {
    const user = await clipUser(harness.baseUrl);

    const started = await startClip(harness.baseUrl, user);
    expect(started.status).toBe(200);
    const { job } = await waitForJob(harness.baseUrl, user, started.body.jobId!);
    expect(job.status).toBe('completed');

    const api = await spanWhere((s) => s.name === 'POST /api/video-generation/start', 'of the clip request');
    // the clip starts by Update-with-Start (its admission), and the update runs in the workflow too
    await expectJobStart(api, 'clipGenerationWorkflow', 'UpdateWithStartWorkflow:clipAdmission');
    const call = await inTrace(api, (s) => toFake(s) && ancestry(s).some((n) => n.startsWith('RunActivity:')), 'an HTTP call to the fake provider');
    expect(ancestry(call)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), expect.stringMatching(/^StartActivity:/), 'RunWorkflow:clipGenerationWorkflow', 'POST /api/video-generation/start']));
    const write = await inTrace(api, (s) => s.name === 'storage.put clips', 'the stored clip');
    expect(ancestry(write)).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:/), 'RunWorkflow:clipGenerationWorkflow', 'POST /api/video-generation/start']));
    const row = (await testKnex()('video_generation_jobs').where({ id: started.body.jobId }).first('trace_id')) as { trace_id: string | null };
    expect(row.trace_id).toBe(api.spanContext().traceId);
  }, 240_000);
});
