import path from 'node:path';
import type { Client } from '@temporalio/client';
import { assemblyWorkflowId } from '../../workflows/assembly';
import { closeTestKnex, testKnex } from '../support/db';
import { testClient } from '../support/temporal';
import { shortHeartbeatBundle } from '../support/workflowBundles';
import { killGroup, spawnClipWorker, type ChildWorker } from '../clips/support/clipWorkerProcess';
import { assemble, assemblyUser, probeOutput, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, withAssemblyFile, type AssemblyTestApp } from './fixtures';

/**
 * The app's worker in a process group of its own, at the production preset. Its heartbeat timeouts are short
 * (tests/support/workflowBundles.ts), so the render is retried soon.
 */
const spawnWorker = async (taskQueue: string, storageDir: string, env: Record<string, string> = {}): Promise<ChildWorker> =>
  spawnClipWorker(taskQueue, { STORAGE_DIR: storageDir, VIDEO_PRESET: 'veryfast', TEST_WORKFLOW_BUNDLE_PATH: await shortHeartbeatBundle(), ...env });

/**
 * The worker killed mid-render renders through tests/clips/support/pacedFfmpeg.sh: the real ffmpeg render of the
 * assembly's graph (video and preview), paced by ffmpeg's realtime filter to a tenth of real time (the 5 s video would
 * take 50 s), so it is still running, whatever the machine's speed, when the test sees its progress and kills it, and
 * it costs next to no CPU meanwhile. The restarted worker renders at full speed.
 */
const PACED_RENDER = { FFMPEG_PATH: path.join(__dirname, '..', 'clips', 'support', 'pacedFfmpeg.sh'), PACED_FFMPEG_SPEED: '0.1' };

describe('a worker killed during an assembly (SIGKILL, then a new worker)', () => {
  let app: AssemblyTestApp;
  let client: Client;
  let closeClient: () => Promise<void>;
  const workers: ChildWorker[] = [];

  beforeAll(async () => {
    app = await startAssemblyApp();
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    for (const worker of workers.splice(0)) await killGroup(worker, 'SIGKILL');
    await closeClient?.();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('finishes the assembly once after the restart: one render stored, one compiled video, one approval', async () => {
    workers.push(await spawnWorker(app.taskQueue, app.config.storageDir, PACED_RENDER));
    const user = await assemblyUser(app.baseUrl);
    const clipIds: string[] = [];
    for (let i = 0; i < 3; i += 1) clipIds.push((await storeClip(app.config, user, { seconds: 2, index: i })).id);
    const res = await assemble(app.baseUrl, user, clipIds);
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;

    // killed while ffmpeg renders (progress past the render's start, 50 s before the paced render could end)
    const before = await waitForAssembly(app.baseUrl, user, jobId, { intervalMs: 100, timeoutMs: 240_000, until: (j) => j.progress > 15 || j.status !== 'pending' && j.status !== 'processing' });
    expect(before.job.status).toBe('processing');
    await killGroup(workers[0], 'SIGKILL');
    const during = await waitForAssembly(app.baseUrl, user, jobId, { intervalMs: 500, until: (j) => j.status === 'processing' });
    expect(during.job.progress).toBeGreaterThanOrEqual(before.job.progress);

    // the restarted worker renders at full speed: only the killed one had to be slow
    workers.push(await spawnWorker(app.taskQueue, app.config.storageDir));
    const after = await waitForAssembly(app.baseUrl, user, jobId, { intervalMs: 500, timeoutMs: 400_000 });
    expect(after.job).toMatchObject({ status: 'completed', progress: 100 });
    const progress = [...before.seen, ...during.seen, ...after.seen].map((s) => s.progress);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);

    const info = await withAssemblyFile(user.id, jobId, 'video.mp4', probeOutput);
    expect(info).toMatchObject({ codec: 'h264', width: 1920, height: 1080 });
    expect(Math.abs(info.duration - 5)).toBeLessThan(0.1);

    // the render ran again on the new worker (attempt 2 or later), and everything after it happened once
    const history = await client.workflow.getHandle(assemblyWorkflowId(jobId)).fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    const named = (name: string) => scheduled.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
    expect(named('renderAssembly')).toHaveLength(1);
    const renderStarted = (history.events ?? []).find(
      (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.scheduledEventId?.toString() === named('renderAssembly')[0].eventId?.toString(),
    );
    expect(Number(renderStarted?.activityTaskStartedEventAttributes?.attempt)).toBeGreaterThanOrEqual(2);
    expect(named('storeCompiledVideo')).toHaveLength(1);
    expect(named('createPendingApproval')).toHaveLength(1);
    expect(await testKnex()('compiled_videos').where({ assembly_job_id: jobId })).toHaveLength(1);
    expect(await testKnex()('compiled_videos').where({ workspace_id: user.id })).toHaveLength(1);
    expect(await testKnex()('pending_approvals').where({ source_job_id: jobId })).toHaveLength(1);
    expect(await testKnex()('assembly_jobs').where({ workspace_id: user.id })).toHaveLength(1);
  }, 600_000);
});
