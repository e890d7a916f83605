import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { CLIP_MESSAGES } from '../../domain/clipGeneration';
import { createProviders } from '../../providers';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { storedUnder } from '../support/objectStorage';
import { testClient } from '../support/temporal';
import {
  clipTestConfig,
  clipUser,
  creditState,
  expectLedgerOk,
  startClip,
  startClipApp,
  startClipWorker,
  waitForJob,
  type ClipTestApp,
  type RunningWorker,
} from './fixtures';

const KEY = 'clip-failures-key';
const FAILING_MODEL = 'fake/video-fails';

function ffmpegProcessesFor(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', 'ffmpeg'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(marker));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('clip failures release the reservation (dev server, real workers)', () => {
  let client: Client;
  let closeClient: () => Promise<void>;

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await closeClient?.();
    await closeTestKnex();
  });

  describe('a hosted provider whose job fails', () => {
    let app: ClipTestApp;
    let worker: RunningWorker;
    let fal: FakeFal;
    let workDir: string;

    beforeAll(async () => {
      fal = await startFakeFal({ apiKey: KEY, models: { [FAILING_MODEL]: { kind: 'video', behaviour: 'fail-runtime', queuedPolls: 1, runningPolls: 2 } } });
      workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-failures-'));
      app = await startClipApp();
      const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: FAILING_MODEL });
      worker = await startClipWorker(app.taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100 }) });
    });

    afterAll(async () => {
      await worker?.stop();
      await app?.close();
      await fal?.close();
      await fs.rm(workDir, { recursive: true, force: true });
    });

    it('ends the job failed with a plain message, gives the 4 credits back and leaves no files', async () => {
      const user = await clipUser(app.baseUrl);
      const res = await startClip(app.baseUrl, user, { movement: 'Day to Night', platform: 'Square' });
      expect(res.status).toBe(200);
      const jobId = res.body.jobId as string;
      const { job, seen } = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 100 });
      expect(seen.some((s) => s.status === 'processing')).toBe(true);
      expect(job).toMatchObject({ status: 'failed', error: CLIP_MESSAGES.failed, message: CLIP_MESSAGES.failed, result: null });
      expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
      await expectLedgerOk(testKnex(), user.id);
      const reservation = await testKnex()('credit_reservations').where({ idempotency_key: clipWorkflowId(jobId) }).first();
      expect(reservation).toMatchObject({ status: 'released', amount: 4 });
      expect(await testKnex()('pending_approvals').where({ source_job_id: jobId })).toEqual([]);
      expect(await storedUnder('clips', `${user.id}/${jobId}`)).toEqual([]);
      // the provider was asked once, and its failure was not retried into a second paid job
      expect(fal.jobs).toHaveLength(1);
      // the row reads failed from the workflow's last activity; the run itself closes just after it
      const handle = client.workflow.getHandle(clipWorkflowId(jobId));
      await expect(handle.result()).rejects.toThrow();
      expect((await handle.describe()).status.name).toBe('FAILED');
      // the user can start again at once
      expect((await request<{ job: null }>(app.baseUrl, '/api/video-generation/active', { token: user.token })).body.job).toBeNull();
    });
  });

  describe('a local render cancelled from the UI', () => {
    let app: ClipTestApp;
    let worker: RunningWorker;
    let workDir: string;

    beforeAll(async () => {
      workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-cancel-'));
      app = await startClipApp();
      // the slowest preset keeps ffmpeg busy long enough to be cancelled mid-render
      worker = await startClipWorker(app.taskQueue, { providerOptions: { workDir, videoPreset: 'veryslow' } });
    });

    afterAll(async () => {
      await worker?.stop();
      await app?.close();
      await fs.rm(workDir, { recursive: true, force: true });
    });

    it('stops ffmpeg, releases the reservation and removes the provider job', async () => {
      const user = await clipUser(app.baseUrl);
      const res = await startClip(app.baseUrl, user, { movement: 'Walk Through', platform: 'YouTube' });
      const jobId = res.body.jobId as string;
      await waitForJob(app.baseUrl, user, jobId, { intervalMs: 100, until: (j) => j.progress > 10 });
      const row = await testKnex()('video_generation_jobs').where({ id: jobId }).first('provider_job_id');
      const providerJobId = row.provider_job_id as string;
      expect(ffmpegProcessesFor(providerJobId).length).toBeGreaterThan(0);
      expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 4, available: 1 });

      const cancel = await request<{ job: { status: string; message: string } }>(app.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: user.token });
      expect(cancel.status).toBe(200);
      expect(cancel.body.job).toMatchObject({ status: 'cancelled', message: CLIP_MESSAGES.cancelled });
      expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
      await expectLedgerOk(testKnex(), user.id);
      // the worker hears of the cancellation at the activity's next heartbeat, then stops ffmpeg and removes the
      // provider's job folder: waited for as events (the bound only catches a render that is never stopped)
      const jobFolder = path.join(workDir, 'local-video', providerJobId);
      const folderGone = async () => fs.stat(jobFolder).then(() => false, () => true);
      const deadline = Date.now() + 90_000;
      while ((ffmpegProcessesFor(providerJobId).length > 0 || !(await folderGone())) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(ffmpegProcessesFor(providerJobId)).toEqual([]);
      expect(await folderGone()).toBe(true);
      expect(await storedUnder('clips', `${user.id}/${jobId}`)).toEqual([]);
      const handle = client.workflow.getHandle(clipWorkflowId(jobId));
      await expect(handle.result()).rejects.toThrow();
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      expect(await testKnex()('video_generation_jobs').where({ id: jobId }).first('status', 'error')).toEqual({ status: 'cancelled', error: null });
    }, 240_000);
  });
});
