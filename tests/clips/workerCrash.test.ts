import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { CLIP_STEP_RETRY } from '../../domain/clipGeneration';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { testClient } from '../support/temporal';
import { killGroup, spawnClipWorker, spawnHeldClipWorker, type ChildWorker, type HeldWorker } from './support/clipWorkerProcess';
import { withStoredFile } from '../support/objectStorage';
import { shortHeartbeatBundle } from '../support/workflowBundles';
import { approveByWorkflow, clipUser, creditState, expectLedgerOk, probe, startClip, startClipApp, waitForJob, type ClipTestApp } from './fixtures';

/**
 * The app's worker in a process group of its own; its heartbeat timeouts are short (tests/support/workflowBundles.ts),
 * so the killed worker's activity is retried soon, and a workflow task the server put on the killed worker's sticky
 * queue goes back to the normal queue after a second (CLIP_WORKER_STICKY_TIMEOUT_MS) instead of the SDK's 10 s.
 */
const workerEnv = async (workDir: string, env: Record<string, string>): Promise<Record<string, string>> => ({
  CLIP_PROVIDER_WORK_DIR: workDir,
  VIDEO_PRESET: 'ultrafast',
  CLIP_WORKER_STICKY_TIMEOUT_MS: '1000',
  TEST_WORKFLOW_BUNDLE_PATH: await shortHeartbeatBundle(),
  ...env,
});
const spawnWorker = async (taskQueue: string, workDir: string, env: Record<string, string> = {}): Promise<ChildWorker> => spawnClipWorker(taskQueue, await workerEnv(workDir, env));
/** A replacement worker, started beside the one to be killed but polling only once released (after the kill). */
const spawnHeldWorker = async (taskQueue: string, workDir: string, env: Record<string, string> = {}): Promise<HeldWorker> =>
  spawnHeldClipWorker(taskQueue, await workerEnv(workDir, env));

/**
 * The worker killed mid-render renders through tests/clips/support/pacedFfmpeg.sh: the real ffmpeg render, paced by
 * ffmpeg's realtime filter to a fifth of real time (the 5 s clip would take 25 s), so it is still running, whatever
 * the machine's speed, when the test sees its progress and kills it, and it costs next to no CPU meanwhile.
 */
const PACED_RENDER = { FFMPEG_PATH: path.join(__dirname, 'support', 'pacedFfmpeg.sh'), PACED_FFMPEG_SPEED: '0.2' };

describe('a worker killed during a clip (SIGKILL, then a new worker)', () => {
  let app: ClipTestApp;
  let client: Client;
  let closeClient: () => Promise<void>;
  let workDir: string;
  /**
   * The hosted provider of the second test: IN_QUEUE twice, then IN_PROGRESS four times, so the job completes on the
   * 7th status poll. Started with the file (the first test uses the local provider: it sees no request).
   */
  let fal: FakeFal;
  const workers: ChildWorker[] = [];
  /** Kept for afterEach's kill as soon as it has started, even when something started beside it fails. */
  const tracked = <T extends ChildWorker>(spawning: Promise<T>): Promise<T> => spawning.then((worker) => (workers.push(worker), worker));
  /**
   * The second test's two workers (on the hosted provider), both held: they poll nothing until released, so they can
   * start while the first test waits for its killed worker's heartbeat to time out (an idle wait), and no task of the
   * first test can reach them. The first test starts them then; the second (also when run alone) takes them.
   */
  let hostedWorkers: Promise<HeldWorker[]> | null = null;
  const held: Promise<HeldWorker>[] = [];
  const hostedEnv = () => ({ AI_PROVIDER: 'fal', FAL_BASE_URL: fal.baseUrl, FAL_KEY: 'crash-key', FAL_VIDEO_MODEL: 'fake/video-crash', CLIP_VIDEO_POLL_MS: '250' });
  const startHostedWorkers = (): Promise<HeldWorker[]> => {
    hostedWorkers ??= Promise.all(
      [0, 1].map(() => {
        const spawning = spawnHeldWorker(app.taskQueue, workDir, hostedEnv());
        held.push(spawning);
        return spawning;
      }),
    );
    return hostedWorkers;
  };

  beforeAll(async () => {
    app = await startClipApp();
    ({ client, close: closeClient } = await testClient());
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-crash-'));
    fal = await startFakeFal({ apiKey: 'crash-key', models: { 'fake/video-crash': { kind: 'video', behaviour: 'succeed', queuedPolls: 2, runningPolls: 4 } } });
  });

  // each test has the task queue to itself: no worker of an earlier test may take its tasks (the second test's held
  // workers take none until that test releases them)
  afterEach(async () => {
    for (const worker of workers.splice(0)) await killGroup(worker, 'SIGKILL');
  });

  afterAll(async () => {
    for (const spawning of held.splice(0)) await spawning.then((worker) => killGroup(worker, 'SIGKILL')).catch(() => undefined);
    await fal?.close();
    await closeClient?.();
    await app?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await closeTestKnex();
  });

  it('finishes the clip after the restart, with one reservation, one provider job and one charge', async () => {
    // the user and their upload need no worker: made while the worker starts
    const [worker, user] = await Promise.all([tracked(spawnWorker(app.taskQueue, workDir, PACED_RENDER)), clipUser(app.baseUrl)]);
    // the replacement starts while the first works, but polls only once released after the kill. It renders at full
    // speed: only the killed one had to be slow
    const replacement = tracked(spawnHeldWorker(app.taskQueue, workDir));
    replacement.catch(() => undefined); // awaited (and its failure reported) after the kill
    const res = await startClip(app.baseUrl, user, { movement: 'Pan Right', platform: 'Facebook' });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;

    const before = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 200, until: (j) => j.progress > 12 });
    const providerJobId = (await testKnex()('video_generation_jobs').where({ id: jobId }).first('provider_job_id')).provider_job_id as string;
    expect(providerJobId).toMatch(/^local-/);

    await killGroup(worker, 'SIGKILL');
    // the next test's workers start while this one waits for the killed worker's heartbeat to time out
    void startHostedWorkers().catch(() => undefined);
    // with no worker the status call still answers, from the job row
    const during = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 500, until: (j) => j.status === 'processing' });
    expect(during.job.progress).toBeGreaterThanOrEqual(before.job.progress);

    await (await replacement).release();
    const after = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 500, timeoutMs: 240_000 });
    expect(after.job).toMatchObject({ status: 'completed', progress: 100 });
    const progress = [...before.seen, ...during.seen, ...after.seen].map((s) => s.progress);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);

    const info = await withStoredFile('clips', `${user.id}/${jobId}/clip.mp4`, probe);
    expect(info).toMatchObject({ codec: 'h264', width: 1280, height: 720, frames: 150 });

    // one submission (the job id came back from the row, not a second submit), the wait ran again
    const history = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    const named = (name: string) => scheduled.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
    expect(named('submitClipVideo')).toHaveLength(1);
    expect(named('awaitClipVideo')).toHaveLength(1);
    // submit and finish are scheduled with retries that outlast an open database breaker
    for (const step of ['submitClipVideo', 'finishClipMedia']) {
      expect(named(step)[0].activityTaskScheduledEventAttributes?.retryPolicy?.maximumAttempts).toBe(CLIP_STEP_RETRY.maximumAttempts);
    }
    const waitStarted = (history.events ?? []).find(
      (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.scheduledEventId?.toString() === named('awaitClipVideo')[0].eventId?.toString(),
    );
    expect(Number(waitStarted?.activityTaskStartedEventAttributes?.attempt)).toBeGreaterThanOrEqual(2);
    expect((await testKnex()('video_generation_jobs').where({ id: jobId }).first('provider_job_id')).provider_job_id).toBe(providerJobId);

    const reservations = await testKnex()('credit_reservations').where({ workspace_id: user.id });
    expect(reservations).toHaveLength(1);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 4, available: 1 });
    await approveByWorkflow(client, after.job.result?.approvalWorkflowId as string, user.id);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 1, reserved: 0, available: 1 });
    expect(await testKnex()('credit_transactions').where({ workspace_id: user.id, transaction_type: 'consume' })).toHaveLength(1);
    await expectLedgerOk(testKnex(), user.id);
  }, 300_000);

  it('resumes polling the same hosted job after the restart: the provider is paid once', async () => {
    // the job completes on the 7th status poll (fal above), so killed after the 4th it is still running, and only the
    // restarted worker can see it complete. Both workers started side by side (during the first test, or now): the
    // first polls from now on, the replacement only once released after the kill
    const [[first, replacement], user] = await Promise.all([startHostedWorkers().then((both) => (workers.push(...both), both)), clipUser(app.baseUrl)]);
    await first.release();
    const res = await startClip(app.baseUrl, user, { movement: 'Bring to Life', platform: 'YouTube' });
    const jobId = res.body.jobId as string;
    // killed between two looks at the job: after the 4th status poll, once the workflow waits on its timer with no
    // activity in flight (a look killed in flight would only be retried after its start-to-close timeout)
    const handle = client.workflow.getHandle(clipWorkflowId(jobId));
    const betweenLooks = async () => (fal.jobs[0]?.statusPolls ?? 0) >= 4 && ((await handle.describe()).raw.pendingActivities ?? []).length === 0;
    const deadline = Date.now() + 60_000;
    while (!(await betweenLooks()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(fal.jobs).toHaveLength(1);

    await killGroup(first, 'SIGKILL');
    const pollsAtKill = fal.jobs[0].statusPolls;
    expect(fal.jobs[0].completed).toBe(false);
    await replacement.release();
    const { job } = await waitForJob(app.baseUrl, user, jobId, { intervalMs: 500, timeoutMs: 240_000 });
    expect(job).toMatchObject({ status: 'completed', progress: 100 });
    // the same request was polled on after the restart; nothing was submitted again
    expect(fal.jobs).toHaveLength(1);
    expect(fal.jobs[0].statusPolls).toBeGreaterThan(pollsAtKill);
    expect(fal.log.filter((l) => l.method === 'POST')).toHaveLength(1);
    expect(await testKnex()('credit_reservations').where({ workspace_id: user.id })).toHaveLength(1);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 4, available: 1 });
    await expectLedgerOk(testKnex(), user.id);
  }, 300_000);
});
