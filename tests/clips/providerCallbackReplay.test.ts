import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { createProviders } from '../../providers';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { createApp } from '../../api/app';
import { logger } from '../../config/logger';
import { serve, type TestServer } from '../support/http';
import { testKnex } from '../support/db';
import { uniqueTaskQueue } from '../support/temporal';
import { closeTestKnex } from '../support/db';
import { replayWithCurrentCode, testClient } from '../support/temporal';
import { clipTestConfig, clipUser, startClip, startClipApp, startClipWorker, waitForJob, type ClipTestApp, type RunningWorker } from './fixtures';

type History = temporal.api.history.v1.IHistory;
const { EventType } = temporal.api.enums.v1;

/**
 * A hosted clip's history recorded before the provider callback (the workflow polled the provider on a timer, with no
 * `clip-provider-callback` marker). It must replay against today's code: clips still waiting on the old path when a
 * worker is upgraded go on along it. Re-record (only on the code from before the change!) with
 * `RECORD_REPLAY_FIXTURES=1 npx jest tests/clips/providerCallbackReplay.test.ts`.
 */
const FIXTURE = path.join(__dirname, 'fixtures-history', 'hostedClipPolling.history.json');
const FIXTURE_WORKFLOW_ID = 'clip-hosted-polling-fixture';
/**
 * A hosted clip's history recorded on the callback path before `clip-fewer-steps` (the row's steps each a local
 * activity, the wait and the finish two media activities, the approval a child workflow). Re-record only on the code
 * from before that change, with RECORD_REPLAY_FIXTURES=callback.
 */
const CALLBACK_FIXTURE = path.join(__dirname, 'fixtures-history', 'hostedClipCallback.history.json');
const CALLBACK_FIXTURE_WORKFLOW_ID = 'clip-hosted-callback-fixture';
const KEY = 'replay-fal-key';
const MODEL = 'fake/video-replay';

function markers(history: History): string[] {
  return (history.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .map((event) =>
      Object.values(event.markerRecordedEventAttributes?.details ?? {})
        .flatMap((payloads) => payloads.payloads ?? [])
        .map((payload) => Buffer.from(payload.data ?? []).toString('utf8'))
        .join(' '),
    );
}

describe('replaying a hosted clip recorded before provider callbacks', () => {
  let client: Client;
  let closeClient: () => Promise<void>;

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await closeClient?.();
    await closeTestKnex();
  });

  if (process.env.RECORD_REPLAY_FIXTURES === '1') {
    it('records a hosted clip that polls the provider', async () => {
      let app: ClipTestApp | undefined;
      let worker: RunningWorker | undefined;
      let fal: FakeFal | undefined;
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clip-replay-'));
      try {
        fal = await startFakeFal({ apiKey: KEY, models: { [MODEL]: { kind: 'video', behaviour: 'succeed', queuedPolls: 1, runningPolls: 2 } } });
        app = await startClipApp();
        const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: MODEL });
        worker = await startClipWorker(app.taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100 }) });
        const user = await clipUser(app.baseUrl);
        const res = await startClip(app.baseUrl, user, { movement: 'Zoom In', platform: 'Square' });
        const jobId = res.body.jobId as string;
        const { job } = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 100 });
        expect(job.status).toBe('completed');
        const history = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
        fs.writeFileSync(FIXTURE, `${historyToJSON(history)}\n`);
      } finally {
        await worker?.stop();
        await app?.close();
        await fal?.close();
        fs.rmSync(workDir, { recursive: true, force: true });
      }
    });
  }

  if (process.env.RECORD_REPLAY_FIXTURES === 'callback') {
    it('records a hosted clip that waits for its callback', async () => {
      let server: TestServer | undefined;
      let worker: RunningWorker | undefined;
      let fal: FakeFal | undefined;
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clip-replay-'));
      try {
        fal = await startFakeFal({ apiKey: KEY, models: { [MODEL]: { kind: 'video', behaviour: 'succeed' } }, callbackRetryMs: 100 });
        const taskQueue = uniqueTaskQueue('clip-replay-callback');
        server = await serve(createApp({ config: clipTestConfig({ falWebhookJwksUrl: fal.jwksUrl }), knex: testKnex(), logger, taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } }));
        const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: MODEL, falWebhookBaseUrl: server.baseUrl, falWebhookFallbackPollMs: 30 * 60 * 1000 });
        worker = await startClipWorker(taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100 }) });
        const user = await clipUser(server.baseUrl);
        const res = await startClip(server.baseUrl, user, { movement: 'Zoom In', platform: 'Square' });
        const jobId = res.body.jobId as string;
        const { job } = await waitForJob(server.baseUrl, user, jobId, { intervalMs: 100 });
        expect(job.status).toBe('completed');
        const history = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
        fs.writeFileSync(CALLBACK_FIXTURE, `${historyToJSON(history)}\n`);
      } finally {
        await worker?.stop();
        await server?.close();
        await fal?.close();
        fs.rmSync(workDir, { recursive: true, force: true });
      }
    });
  }

  it('replays a hosted clip recorded on the callback path before clip-fewer-steps with the current workflow code', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(CALLBACK_FIXTURE, 'utf8')));
    const types = (history.events ?? []).map((event) => event.eventType);
    expect(types.at(-1)).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect(markers(history).some((marker) => marker.includes('clip-provider-callback'))).toBe(true);
    expect(markers(history).some((marker) => marker.includes('clip-fewer-steps'))).toBe(false);
    const results = await replayWithCurrentCode([{ workflowId: CALLBACK_FIXTURE_WORKFLOW_ID, history }]);
    expect(results.map((r) => ({ workflowId: r.workflowId, error: r.error }))).toEqual([{ workflowId: CALLBACK_FIXTURE_WORKFLOW_ID, error: undefined }]);
  });

  it('replays the recorded polling history with the current workflow code', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    const types = (history.events ?? []).map((event) => event.eventType);
    expect(types[0]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    expect(types.at(-1)).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    // recorded on the polling path: timers between looks, no callback marker
    expect(types).toContain(EventType.EVENT_TYPE_TIMER_FIRED);
    expect(markers(history).some((marker) => marker.includes('clip-provider-callback'))).toBe(false);
    const results = await replayWithCurrentCode([{ workflowId: FIXTURE_WORKFLOW_ID, history }]);
    expect(results.map((r) => ({ workflowId: r.workflowId, error: r.error }))).toEqual([{ workflowId: FIXTURE_WORKFLOW_ID, error: undefined }]);
  });
});
