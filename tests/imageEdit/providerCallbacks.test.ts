/**
 * Hosted image edits wait for fal's callbacks (issue 46, item 3): the edit and then the upscale are submitted with
 * `fal_webhook`; the API verifies each signed callback, claims it once on the job's row and signals the waiting run,
 * which looks at fal only every FAL_WEBHOOK_FALLBACK_POLL_MS for a callback that was lost. A forged, stale, foreign,
 * replayed or late callback, or one for an unknown job, changes nothing. Real PostgreSQL, Temporal dev server and
 * workers; the fake fal (tests/support/fakeFal.ts) signs its webhooks with its own key and serves its JWKS.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { IMAGE_EDIT_PROVIDER_CALLBACK_PATCH } from '../../domain/workflowContracts/imageEdit';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { closedPort, serve, type TestServer } from '../support/http';
import { closeTestKnex, testKnex } from '../support/db';
import { signedFalWebhookHeaders, startFakeFal, type FakeFal } from '../support/fakeFal';
import { testClient } from '../support/temporal';
import { creditState, generateImage, startWorkers, uniqueQueues, userWithRender, type RunningWorkers } from './harness';
import type { Client } from '@temporalio/client';

type History = temporal.api.history.v1.IHistory;
const { EventType } = temporal.api.enums.v1;
const KEY = 'image-callbacks-key';
const EDIT = 'fal-ai/nano-banana/edit';
const STUCK_EDIT = 'fal-ai/flux-pro/kontext/max';
const UPSCALE = 'fal-ai/esrgan';
// longer than any test: an edit that ends here ended on its callbacks, not on a fallback look
const FALLBACK_MS = 30 * 60 * 1000;

interface CallbackAnswer {
  received?: boolean;
  outcome?: string;
  code?: string;
}

let fal: FakeFal;
let client: Client;
let closeClient: () => Promise<void>;
const running: Array<{ server: TestServer; workers: RunningWorkers }> = [];

async function sendCallback(baseUrl: string, query: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: CallbackAnswer }> {
  const res = await fetch(`${baseUrl}/api/provider-callbacks/fal?${query}`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as CallbackAnswer };
}

function callbackBody(requestId: string): Buffer {
  return Buffer.from(JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: { images: [{ url: 'http://127.0.0.1:9/forged.jpg' }] } }));
}

function requestIdOf(providerJobId: string): string {
  return /^fal:\d+:([^:]+):/.exec(providerJobId)![1];
}

async function editRow(workspaceId: string): Promise<{ workflow_id: string; status: string; provider_job_id: string | null; provider_called_back_at: Date | null; updated_at: Date } | undefined> {
  return testKnex()('ai_image_edits').where({ workspace_id: workspaceId }).first('workflow_id', 'status', 'provider_job_id', 'provider_called_back_at', 'updated_at');
}

function signalCount(history: History): number {
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'imageEditProviderCallback').length;
}

function activityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : []));
}

function markers(history: History): string[] {
  return (history.events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .map((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {})
        .flatMap((payloads) => payloads.payloads ?? [])
        .map((payload) => Buffer.from(payload.data ?? []).toString('utf8'))
        .join(' '),
    );
}

/**
 * The API (knowing the fake's key set, starting runs with callbacks) and workers whose hosted provider is the fake,
 * submitting with callbacks to `callbackBase` (the API's own address unless given: a lost callback's address).
 */
async function startStack(editModel: string, options: { callbackBase?: string; fallbackMs?: number } = {}): Promise<{ baseUrl: string }> {
  const queues = uniqueQueues('image-callbacks');
  const hosted: Partial<AppConfig> = {
    providerKind: 'fal',
    falBaseUrl: fal.baseUrl,
    falApiKey: KEY,
    falImageEditModel: editModel,
    falUpscaleModel: UPSCALE,
    falWebhookJwksUrl: fal.jwksUrl,
    falWebhookFallbackPollMs: options.fallbackMs ?? FALLBACK_MS,
  };
  const appConfig: AppConfig = { ...loadConfig(), ...hosted, falWebhookBaseUrl: 'http://callbacks.invalid' };
  const server = await serve(createApp({ config: appConfig, knex: testKnex(), logger, taskQueues: queues }));
  const config: AppConfig = { ...appConfig, falWebhookBaseUrl: options.callbackBase ?? server.baseUrl };
  const activities = createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers: createProviders(config, { imagePollIntervalMs: 20 }) });
  const workers = await startWorkers(queues, activities);
  running.push({ server, workers });
  return { baseUrl: server.baseUrl };
}

beforeAll(async () => {
  ({ client, close: closeClient } = await testClient());
  fal = await startFakeFal({
    apiKey: KEY,
    models: {
      [EDIT]: { kind: 'image-edit', behaviour: 'succeed' },
      [STUCK_EDIT]: { kind: 'image-edit', behaviour: 'never-complete' },
      [UPSCALE]: { kind: 'upscale', behaviour: 'succeed' },
    },
    callbackRetryMs: 50,
  });
});

afterAll(async () => {
  for (const { workers, server } of running) {
    await workers.stop();
    await server.close();
  }
  await fal?.close();
  await closeClient?.();
  await closeTestKnex();
});

describe('hosted image edits wait for the provider to call back', () => {
  it('ends the edit and the upscale on their verified callbacks: no look at fal, charged once, a replayed or late callback changes nothing', async () => {
    const { baseUrl } = await startStack(EDIT);
    const { user, renderId } = await userWithRender(baseUrl);
    const res = await generateImage(baseUrl, user, { baseImage: renderId, prompt: 'bright summer day' });
    expect(res.status).toBe(200);
    const jobId = res.body.metadata.jobId as string;
    expect(res.body.result.generatedImage).toMatchObject({ model: EDIT, description: expect.stringContaining('edited: ') });
    expect(res.body.result.upscaledImage).toMatchObject({ model: UPSCALE, scale: 2, width: res.body.result.generatedImage.width * 2 });

    // both jobs were submitted with the job's callback URL, and nobody looked at them
    const jobs = fal.jobs.filter((j) => j.webhookUrl?.includes(jobId));
    expect(jobs.map((j) => j.model)).toEqual([EDIT, UPSCALE]);
    for (const job of jobs) {
      expect(job.webhookUrl).toBe(`${baseUrl}/api/provider-callbacks/fal?image=${jobId}`);
      expect(job.statusPolls).toBe(0);
    }
    await fal.callbacksSettled();
    const delivered = jobs.map((job) => fal.callbacks.find((c) => c.requestId === job.requestId)!);
    expect(delivered.map((c) => c.status)).toEqual([200, 200]);

    const handle = client.workflow.getHandle(imageEditWorkflowId(jobId));
    const history = await handle.fetchHistory();
    expect(signalCount(history)).toBe(2);
    expect(activityTypes(history)).toEqual(['submitHostedImageEdit', 'continueHostedImageEdit', 'finishHostedImageEdit']);
    expect((history.events ?? []).some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    expect(markers(history).some((m) => m.includes(IMAGE_EDIT_PROVIDER_CALLBACK_PATCH))).toBe(true);
    // the history replays on today's code
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH! } }, history, imageEditWorkflowId(jobId))).resolves.toBeUndefined();

    // one credit reserved, charged on approval (not here); the row ended with the upscale's claim
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 1 });
    const row = (await editRow(user.id))!;
    expect(row).toMatchObject({ status: 'completed', provider_job_id: expect.stringContaining(jobs[1].requestId) });
    expect(row.provider_called_back_at).toBeInstanceOf(Date);

    // each callback again (a replay, or fal retrying after a lost answer), and a late one for the edit: answered, nothing changes
    for (const callback of delivered) {
      expect(await sendCallback(baseUrl, `image=${jobId}`, callback.body, callback.headers)).toEqual({ status: 200, body: { received: true, outcome: 'already_received' } });
      const fresh = signedFalWebhookHeaders(fal.signingKey, callback.requestId, callback.body);
      expect(await sendCallback(baseUrl, `image=${jobId}`, callback.body, fresh)).toEqual({ status: 200, body: { received: true, outcome: 'already_received' } });
    }
    expect(await editRow(user.id)).toEqual(row);
    expect((await handle.fetchHistory()).events?.length).toBe(history.events?.length);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 1 });
  });

  it('lets a forged, stale, foreign or unknown callback change nothing, and signals the waiting run once for its own', async () => {
    const { baseUrl } = await startStack(STUCK_EDIT);
    const { user, renderId } = await userWithRender(baseUrl);
    // the request waits for the run's end: it is followed on the row meanwhile
    const answer = generateImage(baseUrl, user, { baseImage: renderId });
    let row = await editRow(user.id);
    for (let i = 0; !row?.provider_job_id && i < 600; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await editRow(user.id);
    }
    expect(row?.provider_job_id).toEqual(expect.stringContaining(STUCK_EDIT));
    const jobId = row!.workflow_id.replace(/^image-edit-/, '');
    const requestId = requestIdOf(row!.provider_job_id!);
    const handle = client.workflow.getHandle(row!.workflow_id);
    const body = callbackBody(requestId);
    const query = `image=${jobId}`;

    // forged: signed with a key that is not fal's
    const forger = generateKeyPairSync('ed25519').privateKey;
    expect(await sendCallback(baseUrl, query, body, signedFalWebhookHeaders(forger, requestId, body))).toMatchObject({ status: 401, body: { code: 'PROVIDER_CALLBACK_UNVERIFIED' } });
    // late: fal's own signature, ten minutes old (a captured callback sent again)
    const stale = signedFalWebhookHeaders(fal.signingKey, requestId, body, { timestampSeconds: Math.floor(Date.now() / 1000) - 600 });
    expect(await sendCallback(baseUrl, query, body, stale)).toMatchObject({ status: 401, body: { code: 'PROVIDER_CALLBACK_UNVERIFIED' } });
    // the body changed after signing
    expect((await sendCallback(baseUrl, query, callbackBody('another'), signedFalWebhookHeaders(fal.signingKey, requestId, body))).status).toBe(401);
    // fal's signature, for another request than the one the run waits for
    const foreignId = randomUUID();
    const foreign = callbackBody(foreignId);
    expect(await sendCallback(baseUrl, query, foreign, signedFalWebhookHeaders(fal.signingKey, foreignId, foreign))).toEqual({ status: 200, body: { received: true, outcome: 'other_request' } });
    // fal's signature, for an image edit that does not exist
    expect(await sendCallback(baseUrl, `image=${randomUUID()}`, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toEqual({ status: 200, body: { received: true, outcome: 'unknown_job' } });
    // no job, both kinds at once, or not an id
    for (const bad of ['', `image=${jobId}&clip=${randomUUID()}`, 'image=not-a-uuid']) {
      expect((await sendCallback(baseUrl, bad, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).status).toBe(400);
    }
    row = await editRow(user.id);
    expect(row).toMatchObject({ status: 'processing', provider_called_back_at: null });
    expect(signalCount(await handle.fetchHistory())).toBe(0);

    // its own callback: applied once, a second time ignored
    expect(await sendCallback(baseUrl, query, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
    expect(await sendCallback(baseUrl, query, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toMatchObject({ status: 200, body: { received: true, outcome: 'already_received' } });
    // the run goes on to fetch the result, which fal (stuck) does not have: it fails and gives the credit back
    const ended = await answer;
    expect(ended.status).toBeGreaterThanOrEqual(400);
    expect(signalCount(await handle.fetchHistory())).toBe(1);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0 });
    // a callback after the end changes nothing either
    const late = callbackBody(requestId);
    expect((await sendCallback(baseUrl, query, late, signedFalWebhookHeaders(fal.signingKey, requestId, late))).body.outcome).toMatch(/already_received|job_ended/);
    expect(signalCount(await handle.fetchHistory())).toBe(1);
  });

  it('finds a job whose callback was lost by the fallback look; the callback arriving after it changes nothing', async () => {
    // fal cannot reach this address: every callback is lost, the looks (every 200 ms here) find the jobs done
    const { baseUrl } = await startStack(EDIT, { callbackBase: `http://127.0.0.1:${await closedPort()}`, fallbackMs: 200 });
    const { user, renderId } = await userWithRender(baseUrl);
    const res = await generateImage(baseUrl, user, { baseImage: renderId, prompt: 'blue hour' });
    expect(res.status).toBe(200);
    const jobId = res.body.metadata.jobId as string;
    const jobs = fal.jobs.filter((j) => j.webhookUrl?.includes(`image=${jobId}`));
    expect(jobs).toHaveLength(2);
    for (const job of jobs) expect(job.statusPolls).toBeGreaterThanOrEqual(1);
    const handle = client.workflow.getHandle(imageEditWorkflowId(jobId));
    const history = await handle.fetchHistory();
    expect(signalCount(history)).toBe(0);
    expect(activityTypes(history).filter((t) => t === 'lookAtHostedImageJob').length).toBeGreaterThanOrEqual(2);
    const row = (await editRow(user.id))!;
    expect(row.provider_called_back_at).toBeInstanceOf(Date);

    // the upscale's callback, arriving now at the API: claimed by the look already, nothing changes
    const late = callbackBody(jobs[1].requestId);
    expect(await sendCallback(baseUrl, `image=${jobId}`, late, signedFalWebhookHeaders(fal.signingKey, jobs[1].requestId, late))).toEqual({
      status: 200,
      body: { received: true, outcome: 'already_received' },
    });
    expect(await editRow(user.id)).toEqual(row);
    expect((await handle.fetchHistory()).events?.length).toBe(history.events?.length);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 1 });
  });
});
