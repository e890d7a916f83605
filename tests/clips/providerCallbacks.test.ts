import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createApp } from '../../api/app';
import type { AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { CLIP_PROGRESS } from '../../domain/clipGeneration';
import { createProviders } from '../../providers';
import { CLIP_FEWER_STEPS_PATCH, CLIP_PROVIDER_CALLBACK_PATCH, clipWorkflowId } from '../../workflows/clipGeneration';
import { signedFalWebhookHeaders, startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { clipTestConfig, clipUser, creditState, expectLedgerOk, startClip, startClipWorker, waitForJob, approveByWorkflow, type RunningWorker } from './fixtures';

const { EventType } = temporal.api.enums.v1;
const KEY = 'provider-callbacks-key';
const MODEL = 'fake/video-calls-back';
const STUCK_MODEL = 'fake/video-never-ends';
// longer than any test: a clip that ends in these tests ended on its callback, not on a fallback look
const FALLBACK_MS = 30 * 60 * 1000;

interface CallbackAnswer {
  received?: boolean;
  outcome?: string;
  code?: string;
}

async function sendCallback(baseUrl: string, jobId: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: CallbackAnswer }> {
  const res = await fetch(`${baseUrl}/api/provider-callbacks/fal?clip=${jobId}`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as CallbackAnswer };
}

function callbackBody(requestId: string): Buffer {
  return Buffer.from(JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: { video: { url: 'http://127.0.0.1:9/forged.mp4' } } }));
}

async function jobRow(jobId: string): Promise<{ status: string; progress: number; provider_job_id: string | null; provider_called_back_at: Date | null; updated_at: Date }> {
  return testKnex()('video_generation_jobs').where({ id: jobId }).first('status', 'progress', 'provider_job_id', 'provider_called_back_at', 'updated_at');
}

function requestIdOf(providerJobId: string): string {
  return /^fal:\d+:([^:]+):/.exec(providerJobId)![1];
}

describe('hosted clips wait for the provider to call back (dev server, real worker, fake fal signing its webhooks)', () => {
  let client: Client;
  let closeClient: () => Promise<void>;
  let fal: FakeFal;
  let workDir: string;
  const running: Array<{ server: TestServer; worker: RunningWorker }> = [];

  /** The API (knowing the fake's key set) and a worker that submits `model` with callbacks to that API. */
  async function startStack(model: string): Promise<{ baseUrl: string; taskQueue: string }> {
    const taskQueue = uniqueTaskQueue('callbacks');
    const appConfig: AppConfig = clipTestConfig({ falWebhookJwksUrl: fal.jwksUrl });
    const server = await serve(createApp({ config: appConfig, knex: testKnex(), logger, taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } }));
    const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: model, falWebhookBaseUrl: server.baseUrl, falWebhookFallbackPollMs: FALLBACK_MS });
    const worker = await startClipWorker(taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100 }) });
    running.push({ server, worker });
    return { baseUrl: server.baseUrl, taskQueue };
  }

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
    fal = await startFakeFal({
      apiKey: KEY,
      models: { [MODEL]: { kind: 'video', behaviour: 'succeed' }, [STUCK_MODEL]: { kind: 'video', behaviour: 'never-complete' } },
      callbackRetryMs: 100,
    });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-callbacks-'));
  });

  afterAll(async () => {
    for (const { worker, server } of running) {
      await worker.stop();
      await server.close();
    }
    await fal?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await closeClient?.();
    await closeTestKnex();
  });

  it('ends the wait on the verified callback: no look at the provider before it, a short history, charged once on approval', async () => {
    const { baseUrl } = await startStack(MODEL);
    const user = await clipUser(baseUrl);
    const res = await startClip(baseUrl, user, { movement: 'Zoom In', platform: 'Square' });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    const { job } = await waitForJob(baseUrl, user, jobId, { intervalMs: 100 });
    expect(job.status).toBe('completed');

    const [falJob] = fal.jobs.filter((j) => j.webhookUrl?.includes(jobId));
    expect(falJob.webhookUrl).toBe(`${baseUrl}/api/provider-callbacks/fal?clip=${jobId}`);
    // the one status call is the wait's, after the callback (it finds the job COMPLETED and fetches it)
    expect(falJob.statusPolls).toBe(1);
    await fal.callbacksSettled();
    const delivered = fal.callbacks.find((c) => c.requestId === falJob.requestId)!;
    expect(delivered.status).toBe(200);
    const row = await jobRow(jobId);
    expect(row.provider_called_back_at).toBeInstanceOf(Date);

    // the row closes from the run's last workflow task: its history is whole once the run has ended
    await client.workflow.getHandle(clipWorkflowId(jobId)).result();
    const history = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
    const events = history.events ?? [];
    const signalNames = events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
    expect(signalNames.filter((name) => name === 'clipProviderCallback')).toHaveLength(1);
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    const markers = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
      .map((e) =>
        Object.values(e.markerRecordedEventAttributes?.details ?? {})
          .flatMap((payloads) => payloads.payloads ?? [])
          .map((payload) => Buffer.from(payload.data ?? []).toString('utf8'))
          .join(' '),
      );
    expect(markers.some((m) => m.includes(CLIP_PROVIDER_CALLBACK_PATCH))).toBe(true);
    // from clip-fewer-steps on: one media activity fetches, stores and finishes the clip, and one local step stores the
    // pending item and starts its approval workflow: 39 events when measured here (61 before it; about 120 polling)
    expect(markers.some((m) => m.includes(CLIP_FEWER_STEPS_PATCH))).toBe(true);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)).toEqual([
      'admitClipJob',
      'submitClipVideo',
      'collectClipVideo',
    ]);
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)).toBe(false);
    expect(events.length).toBeLessThanOrEqual(42);

    // charged once, on approval
    expect(await approveByWorkflow(client, job.result!.approvalWorkflowId, user.id)).toEqual(expect.any(String));
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 1, reserved: 0, available: 1 });
    await expectLedgerOk(testKnex(), user.id);

    // the same callback again (a replay, or fal retrying after a lost answer): answered, nothing changes
    const again = await sendCallback(baseUrl, jobId, delivered.body, delivered.headers);
    expect(again).toEqual({ status: 200, body: { received: true, outcome: 'already_received' } });
    expect(await jobRow(jobId)).toEqual(await jobRow(jobId));
    const after = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
    expect(after.events?.length).toBe(events.length);
    expect((await jobRow(jobId)).provider_called_back_at).toEqual(row.provider_called_back_at);
  });

  it('lets a forged, stale, foreign or unknown callback change nothing, and signals the waiting run once for its own', async () => {
    const { baseUrl } = await startStack(STUCK_MODEL);
    const user = await clipUser(baseUrl);
    const res = await startClip(baseUrl, user, { movement: 'Pan Left', platform: 'Square' });
    const jobId = res.body.jobId as string;
    // waiting for its callback: the provider's request is on the row
    await waitForJob(baseUrl, user, jobId, { intervalMs: 100, until: (j) => j.status === 'processing' && j.progress >= CLIP_PROGRESS.submitted });
    let row = await jobRow(jobId);
    for (let i = 0; !row.provider_job_id && i < 100; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await jobRow(jobId);
    }
    const requestId = requestIdOf(row.provider_job_id!);
    const handle = client.workflow.getHandle(clipWorkflowId(jobId));
    const signals = async () =>
      ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'clipProviderCallback').length;
    const body = callbackBody(requestId);

    // forged: signed with a key that is not fal's
    const forger = generateKeyPairSync('ed25519').privateKey;
    expect(await sendCallback(baseUrl, jobId, body, signedFalWebhookHeaders(forger, requestId, body))).toMatchObject({ status: 401, body: { code: 'PROVIDER_CALLBACK_UNVERIFIED' } });
    // late: fal's own signature, ten minutes old (a captured callback sent again)
    const stale = signedFalWebhookHeaders(fal.signingKey, requestId, body, { timestampSeconds: Math.floor(Date.now() / 1000) - 600 });
    expect(await sendCallback(baseUrl, jobId, body, stale)).toMatchObject({ status: 401, body: { code: 'PROVIDER_CALLBACK_UNVERIFIED' } });
    // the body changed after signing
    const signed = signedFalWebhookHeaders(fal.signingKey, requestId, body);
    expect((await sendCallback(baseUrl, jobId, callbackBody('another'), signed)).status).toBe(401);
    // fal's signature, but for another request than this job's
    const foreign = callbackBody(randomUUID());
    const foreignHeaders = signedFalWebhookHeaders(fal.signingKey, randomUUID(), foreign);
    expect(await sendCallback(baseUrl, jobId, foreign, foreignHeaders)).toEqual({ status: 200, body: { received: true, outcome: 'other_request' } });
    // fal's signature, for a job that does not exist
    expect(await sendCallback(baseUrl, randomUUID(), body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toEqual({ status: 200, body: { received: true, outcome: 'unknown_job' } });
    // no job in the query at all
    expect((await sendCallback(baseUrl, 'not-a-uuid', body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).status).toBe(400);

    row = await jobRow(jobId);
    expect(row).toMatchObject({ status: 'processing', provider_called_back_at: null });
    expect(await signals()).toBe(0);

    // its own callback: applied once, a second time ignored
    expect(await sendCallback(baseUrl, jobId, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
    expect(await sendCallback(baseUrl, jobId, body, signedFalWebhookHeaders(fal.signingKey, requestId, body))).toEqual({ status: 200, body: { received: true, outcome: 'already_received' } });
    expect(await signals()).toBe(1);
    expect((await jobRow(jobId)).provider_called_back_at).toBeInstanceOf(Date);

    // the stuck job is cancelled; a callback after the end changes nothing either
    const cancel = await request(baseUrl, `/api/video-generation/cancel/${jobId}`, { token: user.token, method: 'POST', json: {} });
    expect(cancel.status).toBe(200);
    await waitForJob(baseUrl, user, jobId, { intervalMs: 100 });
    await expect(handle.result()).rejects.toThrow();
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
  });
});
