/**
 * The Activity view's API and the search attributes every run carries, end to end: the API on a port, the clip
 * workflow on the run's Temporal dev server with a real worker, PostgreSQL, and a hosted provider whose jobs run
 * until cancelled (or fail, for the retry of a failed job).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { ActivityJob, ActivityJobList } from '../../domain/jobs';
import { createProviders } from '../../providers';
import { randomUUID } from 'node:crypto';
import { imageEditWorkflow } from '../../workflows/imageEdit';
import { RS_ITEM_ID, RS_JOB_KIND, RS_PROJECT_ID, RS_SEARCH_ATTRIBUTES, RS_USER_ID, jobSearchAttributes } from '../../domain/searchAttributes';
import type { ImageEditWorkflowInput } from '../../domain/imageEdit';
import { makeAdmin } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { testClient } from '../support/temporal';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
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
} from '../clips/fixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const devServer = require('../../scripts/lib/services.js') as { SEARCH_ATTRIBUTES: string[] };

const KEY = 'jobs-key';
const SLOW_MODEL = 'fake/video-slow';
const FAILING_MODEL = 'fake/video-fails';

type ListAnswer = { success: boolean } & ActivityJobList;

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('jobs API and search attributes (real API, Temporal and PostgreSQL)', () => {
  let app: ClipTestApp;
  let failingApp: ClipTestApp;
  let worker: RunningWorker;
  let failingWorker: RunningWorker;
  let fal: FakeFal;
  let workDir: string;
  let temporal: { client: Client; close: () => Promise<void> };

  beforeAll(async () => {
    fal = await startFakeFal({
      apiKey: KEY,
      models: { [SLOW_MODEL]: { kind: 'video', behaviour: 'never-complete', queuedPolls: 1 }, [FAILING_MODEL]: { kind: 'video', behaviour: 'fail-runtime' } },
    });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'jobs-api-'));
    app = await startClipApp();
    failingApp = await startClipApp();
    const slow = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: SLOW_MODEL });
    const failing = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: FAILING_MODEL });
    const providerOptions = { workDir, videoPollIntervalMs: 100, expectedVideoRunMs: 60_000, breaker: { failureThreshold: 1000 } };
    worker = await startClipWorker(app.taskQueue, { config: slow, providers: createProviders(slow, providerOptions) });
    failingWorker = await startClipWorker(failingApp.taskQueue, { config: failing, providers: createProviders(failing, providerOptions) });
    temporal = await testClient();
  });

  afterAll(async () => {
    await worker?.stop();
    await failingWorker?.stop();
    await app?.close();
    await failingApp?.close();
    await fal?.close();
    await temporal?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await closeTestKnex();
  });

  it('registers the same search attribute names on the dev server as the workflows set', () => {
    expect(devServer.SEARCH_ATTRIBUTES).toEqual(RS_SEARCH_ATTRIBUTES.map((key) => key.name));
  });

  it('starts a clip with its user, project, kind and item as search attributes, so visibility finds it by user', async () => {
    const user = await clipUser(app.baseUrl);
    const started = await startClip(app.baseUrl, user);
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const handle = temporal.client.workflow.getHandle(`clip-${jobId}`);
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(RS_USER_ID)).toBe(user.id);
    expect(described.typedSearchAttributes.get(RS_PROJECT_ID)).toBe(user.projectId);
    expect(described.typedSearchAttributes.get(RS_JOB_KIND)).toBe('clip');
    expect(described.typedSearchAttributes.get(RS_ITEM_ID)).toBe(jobId);

    const found = await poll(
      async () => {
        const ids: string[] = [];
        for await (const run of temporal.client.workflow.list({ query: `RsUserId = '${user.id}'` })) ids.push(run.workflowId);
        return ids;
      },
      (ids) => ids.includes(`clip-${jobId}`),
    );
    expect(found).toEqual([`clip-${jobId}`]);
    const byProject: string[] = [];
    for await (const run of temporal.client.workflow.list({ query: `RsProjectId = '${user.projectId}' AND RsJobKind = 'clip'` })) byProject.push(run.workflowId);
    expect(byProject).toEqual([`clip-${jobId}`]);

    expect((await request(app.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: user.token })).status).toBe(200);
  });

  it("lists a user's own jobs only, shows every user's with Temporal links to an admin, cancels with the ledger exact and retries", async () => {
    const owner = await clipUser(app.baseUrl, { extraCredits: 8 });
    const other = await clipUser(app.baseUrl);
    const admin = await clipUser(app.baseUrl);
    await makeAdmin(testKnex(), admin.id);

    const started = await startClip(app.baseUrl, owner, { movement: 'Pan Left', platform: 'YouTube' });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    await waitForJob(app.baseUrl, owner, jobId, { until: (job) => job.progress > 10 });

    const own = await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: owner.token });
    expect(own.status).toBe(200);
    expect(own.body.all).toBe(false);
    expect(own.body.jobs).toHaveLength(1);
    const listed = own.body.jobs[0];
    expect(listed).toMatchObject({
      kind: 'clip',
      id: jobId,
      workflowId: `clip-${jobId}`,
      userId: owner.id,
      projectId: owner.projectId,
      projectName: 'Harbour View',
      item: 'Pan Left, YouTube 16:9 from harbour-view.jpg',
      state: 'processing',
      cost: 4,
      canCancel: true,
      canRetry: false,
      finishedAt: null,
    });
    expect(listed.progress).toBeGreaterThan(10);
    expect(listed.durationMs).toBeGreaterThanOrEqual(0);
    expect(listed).not.toHaveProperty('temporalUrl');
    expect(listed).not.toHaveProperty('userEmail');

    // another user sees nothing of it and cannot act on it; ?all=1 is for admins
    expect((await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: other.token })).body.jobs).toEqual([]);
    expect((await request(app.baseUrl, '/api/jobs?all=1', { token: other.token })).status).toBe(403);
    expect((await request(app.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: other.token })).status).toBe(404);
    expect((await request(app.baseUrl, `/api/jobs/clip/${jobId}/retry`, { method: 'POST', token: other.token })).status).toBe(404);
    expect((await request(app.baseUrl, '/api/jobs/clip/not-an-id/cancel', { method: 'POST', token: owner.token })).status).toBe(404);
    expect((await request(app.baseUrl, `/api/jobs/render/${jobId}/cancel`, { method: 'POST', token: owner.token })).status).toBe(404);
    expect((await request(app.baseUrl, '/api/jobs')).status).toBe(401);

    // a second user's job, for the admin's view of everyone
    const otherStart = await startClip(app.baseUrl, other);
    expect(otherStart.status).toBe(200);
    const everyone = await request<ListAnswer>(app.baseUrl, '/api/jobs?all=1', { token: admin.token });
    expect(everyone.status).toBe(200);
    expect(everyone.body.all).toBe(true);
    const ownersJob = everyone.body.jobs.find((job) => job.id === jobId);
    const othersJob = everyone.body.jobs.find((job) => job.id === otherStart.body.jobId);
    expect(ownersJob).toMatchObject({ userEmail: owner.email, temporalUrl: `http://127.0.0.1:8233/namespaces/default/workflows/clip-${jobId}` });
    expect(othersJob).toMatchObject({ userEmail: other.email, userId: other.id });
    // an admin's own list links to the runs too, and holds only the admin's jobs
    expect((await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: admin.token })).body.jobs).toEqual([]);

    // not retryable while it runs
    const early = await request<{ code: string }>(app.baseUrl, `/api/jobs/clip/${jobId}/retry`, { method: 'POST', token: owner.token });
    expect(early.status).toBe(409);

    expect(await creditState(testKnex(), owner.id)).toEqual({ credits: 13, reserved: 4, available: 9 });
    const cancelled = await request<{ job: ActivityJob }>(app.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: owner.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.job).toMatchObject({ id: jobId, state: 'cancelled', canCancel: false, canRetry: true });
    expect(cancelled.body.job.finishedAt).not.toBeNull();
    expect(await creditState(testKnex(), owner.id)).toEqual({ credits: 13, reserved: 0, available: 13 });
    await expectLedgerOk(testKnex(), owner.id);
    const again = await request<{ code: string }>(app.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: owner.token });
    expect(again.status).toBe(409);

    const retried = await request<{ job: { kind: string; id: string; retriedFrom: string } }>(app.baseUrl, `/api/jobs/clip/${jobId}/retry`, { method: 'POST', token: owner.token });
    expect(retried.status).toBe(200);
    expect(retried.body.job).toMatchObject({ kind: 'clip', retriedFrom: jobId });
    const list = await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: owner.token });
    expect(list.body.jobs.map((job) => [job.id, job.state === 'cancelled' ? 'cancelled' : 'running'])).toEqual([
      [retried.body.job.id, 'running'],
      [jobId, 'cancelled'],
    ]);

    // an admin cancels anyone's running clip; the owner's credits come back
    const byAdmin = await request<{ job: ActivityJob }>(app.baseUrl, `/api/jobs/clip/${retried.body.job.id}/cancel`, { method: 'POST', token: admin.token });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.job).toMatchObject({ state: 'cancelled', temporalUrl: expect.stringContaining(`/workflows/clip-${retried.body.job.id}`) });
    const otherCancel = await request(app.baseUrl, `/api/jobs/clip/${otherStart.body.jobId}/cancel`, { method: 'POST', token: admin.token });
    expect(otherCancel.status).toBe(200);
    for (const user of [owner, other]) {
      expect((await creditState(testKnex(), user.id)).reserved).toBe(0);
      await expectLedgerOk(testKnex(), user.id);
    }

    // a site admin's retry of another account's job is recorded as the admin's (docs/security.md "Admins")
    const adminRetry = await request<{ job: { id: string } }>(app.baseUrl, `/api/jobs/clip/${otherStart.body.jobId}/retry`, { method: 'POST', token: admin.token });
    expect(adminRetry.status).toBe(200);
    expect(await testKnex()('video_generation_jobs').where({ id: adminRetry.body.job.id }).first('workspace_id', 'created_by')).toEqual({ workspace_id: other.id, created_by: admin.id });
    expect((await request(app.baseUrl, `/api/jobs/clip/${adminRetry.body.job.id}/cancel`, { method: 'POST', token: admin.token })).status).toBe(200);
    expect((await creditState(testKnex(), other.id)).reserved).toBe(0);
    await expectLedgerOk(testKnex(), other.id);
  });

  it('lists a running image edit (no row until it ends) from visibility by its search attributes, and refuses to cancel it', async () => {
    const user = await clipUser(app.baseUrl);
    const other = await clipUser(app.baseUrl);
    const jobId = randomUUID();
    const workflowId = `image-edit-${jobId}`;
    // no worker polls this queue: the run stays open and never writes its row
    const handle = await temporal.client.workflow.start(imageEditWorkflow, {
      taskQueue: `nobody-${randomUUID()}`,
      workflowId,
      typedSearchAttributes: jobSearchAttributes({ workspaceId: user.id, kind: 'image-edit', itemId: jobId, projectId: user.projectId }),
      args: [{ jobId, workspaceId: user.id, projectId: user.projectId } as ImageEditWorkflowInput],
    });
    try {
      const listed = await poll(
        async () => (await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: user.token })).body.jobs,
        (jobs) => jobs.some((job) => job.workflowId === workflowId),
      );
      expect(listed.find((job) => job.workflowId === workflowId)).toMatchObject({
        kind: 'image-edit',
        id: jobId,
        userId: user.id,
        projectId: user.projectId,
        projectName: 'Harbour View',
        finishedAt: null,
        cost: 1,
        canCancel: false,
        canRetry: false,
      });
      expect((await request<ListAnswer>(app.baseUrl, '/api/jobs', { token: other.token })).body.jobs).toEqual([]);
      const refused = await request<{ code: string }>(app.baseUrl, `/api/jobs/image-edit/${jobId}/cancel`, { method: 'POST', token: user.token });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('JOB_NOT_CANCELLABLE');
      expect((await request(app.baseUrl, `/api/jobs/image-edit/${jobId}/cancel`, { method: 'POST', token: other.token })).status).toBe(404);
    } finally {
      await handle.terminate('test over');
    }
  });

  it('retries a failed clip with the same inputs', async () => {
    const user = await clipUser(failingApp.baseUrl);
    const started = await startClip(failingApp.baseUrl, user, { movement: 'Drone Shot', platform: 'TikTok' });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const { job } = await waitForJob(failingApp.baseUrl, user, jobId);
    expect(job.status).toBe('failed');
    const failed = (await request<ListAnswer>(failingApp.baseUrl, '/api/jobs', { token: user.token })).body.jobs[0];
    expect(failed).toMatchObject({ id: jobId, state: 'failed', canCancel: false, canRetry: true });
    expect(failed.error).toBeTruthy();
    expect((await request(failingApp.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: user.token })).status).toBe(409);

    const retried = await request<{ job: { id: string; retriedFrom: string } }>(failingApp.baseUrl, `/api/jobs/clip/${jobId}/retry`, { method: 'POST', token: user.token });
    expect(retried.status).toBe(200);
    const row = await testKnex()('video_generation_jobs').where({ id: retried.body.job.id }).first('options', 'render_id');
    expect(row).toMatchObject({ render_id: user.renderId, options: expect.objectContaining({ effect: 'Drone Shot', platform: 'TikTok', aspectRatio: '9:16' }) });
    await waitForJob(failingApp.baseUrl, user, retried.body.job.id);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
    await expectLedgerOk(testKnex(), user.id);
  });
});
