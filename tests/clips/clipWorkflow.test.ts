import type { Client } from '@temporalio/client';
import sharp from 'sharp';
import { CLIP_MESSAGES, type ClipJobView } from '../../domain/clipGeneration';
import { PLATFORM_ASPECT, VIDEO_EFFECTS, type Platform, type VideoEffect } from '../../domain/constants';
import { CLIP_SIZE } from '../../providers/local/clipEffects';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { fileRefOfLink, runStorage, storedObjectExists, withStoredFile } from '../support/objectStorage';
import { testClient } from '../support/temporal';
import {
  approveByWorkflow,
  clipUser,
  creditState,
  expectLedgerOk,
  probe,
  startClip,
  startClipApp,
  startClipWorker,
  waitForJob,
  type ClipTestApp,
  type ClipUser,
  type RunningWorker,
} from './fixtures';

const PLATFORM_FOR: Record<VideoEffect, Platform> = {
  'Bring to Life': 'YouTube',
  'Walk Through': 'TikTok',
  'Day to Night': 'Square',
  'Drone Shot': 'Instagram',
  'Zoom In': 'Facebook',
  'Pan Left': 'TikTok',
  'Pan Right': 'Square',
};

interface Run {
  effect: VideoEffect;
  platform: Platform;
  user: ClipUser;
  jobId: string;
  job: ClipJobView;
  seen: ClipJobView[];
}

describe('clip generation workflow (API, dev server, real worker, ffmpeg)', () => {
  let app: ClipTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;
  const runs: Run[] = [];

  beforeAll(async () => {
    app = await startClipApp();
    worker = await startClipWorker(app.taskQueue);
    ({ client, close: closeClient } = await testClient());

    // one user per effect (a user runs one clip at a time), all started at once
    const started = await Promise.all(
      VIDEO_EFFECTS.map(async (effect) => {
        const user = await clipUser(app.baseUrl);
        const res = await startClip(app.baseUrl, user, { movement: effect, platform: PLATFORM_FOR[effect] });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, jobId: expect.any(String) });
        return { effect, platform: PLATFORM_FOR[effect], user, jobId: res.body.jobId as string };
      }),
    );
    const finished = await Promise.all(
      started.map(async (s) => ({ ...s, ...(await waitForJob(app.baseUrl, s.user, s.jobId, { timeoutMs: 540_000, intervalMs: 200 })) })),
    );
    runs.push(...finished);
    // seven 5 s renders at once through the worker's media slots: minutes of CPU on a busy 2-core machine; the bound
    // only stops a run that hangs
  }, 600_000);

  afterAll(async () => {
    await worker?.stop();
    await closeClient?.();
    await app?.close();
    await closeTestKnex();
  });

  it('produces a playable 5 s H.264 MP4 at the platform size for each of the seven effects', async () => {
    expect(runs.map((r) => r.effect).sort()).toEqual([...VIDEO_EFFECTS].sort());
    for (const run of runs) {
      expect(run.job).toMatchObject({ status: 'completed', progress: 100, message: CLIP_MESSAGES.completed, error: null });
      const aspect = PLATFORM_ASPECT[run.platform];
      const { width, height } = CLIP_SIZE[aspect];
      const clipPath = `${run.user.id}/${run.jobId}/clip.mp4`;
      const info = await withStoredFile('clips', clipPath, probe);
      expect({ effect: run.effect, ...info }).toMatchObject({ effect: run.effect, codec: 'h264', width, height, frames: 150, fps: '30/1', pixFmt: 'yuv420p' });
      expect(Math.abs(info.duration - 5)).toBeLessThan(0.05);
      expect(run.job.result).toMatchObject({ effect: run.effect, platform: run.platform, aspectRatio: aspect, width, height, durationSeconds: 5 });
      expect(run.job.result?.fileSize).toBe((await runStorage().objects.stat('clips', clipPath))?.size);
    }
  });

  it('stores a WebP thumbnail and a watermarked preview beside the clip, and sends the clip for approval', async () => {
    for (const run of runs) {
      const folder = `${run.user.id}/${run.jobId}`;
      const thumb = await withStoredFile('clips', `${folder}/thumbnail.webp`, (file) => sharp(file).metadata());
      expect(thumb.format).toBe('webp');
      expect(thumb.width).toBe(480);
      const preview = await withStoredFile('clips', `${folder}/preview.mp4`, probe);
      expect(preview).toMatchObject({ codec: 'h264', width: run.job.result?.width, height: run.job.result?.height, frames: 150 });
      // the watermark is burnt in: the first frames differ visibly
      const frame = async (file: string) =>
        sharp(
          (await import('node:child_process')).execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']),
        )
          .resize(160, 160, { fit: 'fill' })
          .greyscale()
          .raw()
          .toBuffer();
      const [a, b] = await Promise.all([withStoredFile('clips', `${folder}/clip.mp4`, frame), withStoredFile('clips', `${folder}/preview.mp4`, frame)]);
      let changed = 0;
      for (let i = 0; i < a.length; i += 1) if (Math.abs(a[i] - b[i]) > 16) changed += 1;
      // the PREVIEW lettering covers a few percent of the frame; encoder noise alone changes almost nothing
      expect(changed / a.length).toBeGreaterThan(0.02);

      const approval = await testKnex()('pending_approvals').where({ source_job_id: run.jobId }).first();
      expect(approval).toMatchObject({
        workspace_id: run.user.id,
        project_id: run.user.projectId,
        content_type: 'clip',
        status: 'pending',
        aspect_ratio: PLATFORM_ASPECT[run.platform],
        original_path: `${run.user.id}/${run.jobId}/clip.mp4`,
        watermarked_path: `${run.user.id}/${run.jobId}/preview.mp4`,
        thumbnail_path: `${run.user.id}/${run.jobId}/thumbnail.webp`,
        cost: 4,
        remaining_cost: 4,
        workflow_id: run.job.result?.approvalWorkflowId,
      });
      expect(approval.metadata).toMatchObject({ kind: 'clip', renderId: run.user.renderId, effect: run.effect, platform: run.platform, durationSeconds: 5 });
      const child = await client.workflow.getHandle(approval.workflow_id).describe();
      expect(child.status.name).toBe('RUNNING');
      // 4 credits held until the decision; nothing charged yet
      expect(await creditState(testKnex(), run.user.id)).toEqual({ credits: 5, reserved: 4, available: 1 });
      await expectLedgerOk(testKnex(), run.user.id);
      const row = await testKnex()('video_generation_jobs').where({ id: run.jobId }).first();
      expect(row).toMatchObject({ status: 'completed', progress: 100, workflow_id: clipWorkflowId(run.jobId), render_id: run.user.renderId });
      expect(row.provider_job_id).toMatch(/^local-/);
    }
  });

  it('reports progress through the status call that never goes back, from queued to completed', () => {
    for (const run of runs) {
      const progress = run.seen.map((s) => s.progress);
      for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);
      expect(progress.at(-1)).toBe(100);
      const statuses = [...new Set(run.seen.map((s) => s.status))];
      expect(statuses.at(-1)).toBe('completed');
      expect(statuses.every((s) => ['pending', 'processing', 'completed'].includes(s))).toBe(true);
    }
    // seen together, the runs showed intermediate render progress (renders take seconds, polls every 200 ms)
    const intermediate = runs.flatMap((r) => r.seen.map((s) => s.progress)).filter((p) => p > 10 && p < 85);
    expect(intermediate.length).toBeGreaterThan(3);
  });

  it('after approval the clip is in the library with thumbnail, duration and aspect badge, and streams with Range', async () => {
    const run = runs.find((r) => r.platform === 'TikTok') as Run;
    const contentId = await approveByWorkflow(client, run.job.result?.approvalWorkflowId as string, run.user.id);
    expect(contentId).toEqual(expect.any(String));
    expect(await creditState(testKnex(), run.user.id)).toEqual({ credits: 1, reserved: 0, available: 1 });
    await expectLedgerOk(testKnex(), run.user.id);
    const consumed = await testKnex()('credit_transactions').where({ workspace_id: run.user.id, transaction_type: 'consume' });
    expect(consumed).toHaveLength(1);
    expect(consumed[0].amount).toBe(-4);

    const listing = await request<{ content: Array<{ type: string; data: Record<string, unknown>; signed_url: string }> }>(
      app.baseUrl,
      `/api/projects/${run.user.projectId}/content?bust=${Date.now()}`,
      { token: run.user.token },
    );
    const clip = listing.body.content.find((item) => item.type === 'clip');
    expect(clip).toBeDefined();
    expect(clip?.data).toMatchObject({ id: contentId, aspect_ratio: '9:16', duration: 5, movement: run.effect, render_id: run.user.renderId });
    expect(fileRefOfLink(clip?.data.thumbnail_url as string)?.bucket).toBe('clips');

    const thumb = await fetch(new URL(clip?.data.thumbnail_url as string, app.baseUrl));
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    const range = await fetch(new URL(clip?.signed_url as string, app.baseUrl), { headers: { Range: 'bytes=0-1023' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-type')).toBe('video/mp4');
    expect(range.headers.get('content-range')).toMatch(/^bytes 0-1023\/\d+$/);
    expect((await range.arrayBuffer()).byteLength).toBe(1024);
    // the approved clip no longer needs its watermarked preview
    expect(await storedObjectExists('clips', `${run.user.id}/${run.jobId}/preview.mp4`)).toBe(false);
  });
});
