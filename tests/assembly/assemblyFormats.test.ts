/**
 * Issue 44 item 4: every format from one edit. One assembly asked for 9:16 and 1:1 renders both in one workflow (one
 * ffmpeg run), each its own compiled video and its own free approval item, named apart; one asked for its platform's
 * own format alone behaves as before formats; a bad list of formats is refused before anything starts.
 */
import type { Client } from '@temporalio/client';
import { ASSEMBLY_FORMATS_MESSAGE, type AssemblyJobView } from '../../domain/assembly';
import type { AssemblyEdit } from '../../domain/assemblyTimeline';
import { ASSEMBLY_FORMATS_PATCH, assemblyWorkflowId } from '../../workflows/assembly';
import { approveByWorkflow, startClipWorker, type RunningWorker } from '../clips/fixtures';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { withStoredFile } from '../support/objectStorage';
import { testClient } from '../support/temporal';
import { assemble, assemblyFileStored, assemblyUser, probeOutput, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, type AssemblyTestApp, type AssemblyUser } from './fixtures';

interface DryRunFormats {
  request: AssemblyEdit;
  formats: Array<{ format: string; label: string; width: number; height: number; request: AssemblyEdit }>;
  preview: { width: number; height: number; aspectRatio: string };
}

describe('assembly formats: every format from one edit (API, real worker, ffmpeg)', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;
  let user: AssemblyUser;
  let clipIds: string[];

  beforeAll(async () => {
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    ({ client, close: closeClient } = await testClient());
    user = await assemblyUser(app.baseUrl, 'Harbour Villas');
    clipIds = [];
    for (let i = 0; i < 3; i += 1) clipIds.push((await storeClip(app.config, user, { orientation: 'portrait', index: i, seconds: 1 })).id);
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await closeClient?.();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('refuses a bad list of formats with a clear 400, starting nothing', async () => {
    for (const formats of [['3:2'], [], ['1:1', '1:1'], '1:1', [916], ['9:16', '1:1', '4:5', '16:9', '9:16']]) {
      const res = await assemble(app.baseUrl, user, clipIds, { platform: 'tiktok', formats });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^formats must /);
      const dry = await request<{ error: string }>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds, formats } });
      expect(dry.status).toBe(400);
    }
    const unknown = await assemble(app.baseUrl, user, clipIds, { platform: 'tiktok', formats: ['2:1'] });
    expect(unknown.body.error).toBe(ASSEMBLY_FORMATS_MESSAGE);
    expect(await testKnex()('assembly_jobs').where({ workspace_id: user.id })).toHaveLength(0);
  });

  it('answers the edit in each format asked for from the dry run: same timing, each its own size', async () => {
    const dry = await request<DryRunFormats>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds, formats: ['4:5', '1:1', '9:16'] } });
    expect(dry.status).toBe(200);
    // the platform's own edit as before formats, and each format in the picker's order
    expect(dry.body.preview).toMatchObject({ width: 1080, height: 1920, aspectRatio: '9:16' });
    expect(dry.body.formats.map((f) => [f.format, f.label, f.width, f.height])).toEqual([
      ['9:16', 'Reels', 1080, 1920],
      ['1:1', 'Square', 1080, 1080],
      ['4:5', 'Feed', 1080, 1350],
    ]);
    expect(dry.body.formats[0].request).toEqual(dry.body.request);
    for (const f of dry.body.formats) {
      expect(f.request.output).toMatchObject({ size: { width: f.width, height: f.height }, aspectRatio: f.format, platform: 'tiktok' });
      expect(f.request.totalDuration).toBe(dry.body.request.totalDuration);
      const video = f.request.timeline.tracks.at(-1)?.clips as Array<{ start: number; length: number; fit: string }>;
      expect(video.map((c) => [c.start, c.length])).toEqual((dry.body.request.timeline.tracks.at(-1)?.clips as Array<{ start: number; length: number }>).map((c) => [c.start, c.length]));
      // the platform's own format keeps the whole picture; square and 4:5 fill the frame
      expect(new Set(video.map((c) => c.fit))).toEqual(new Set([f.format === '9:16' ? 'contain' : 'crop']));
    }
    // without formats: the platform's own alone
    const plain = await request<DryRunFormats>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds } });
    expect(plain.body.formats.map((f) => f.format)).toEqual(['9:16']);
  });

  it('renders 9:16 and 1:1 in one workflow: two compiled videos, two free approval items named apart, each at its size', async () => {
    const dry = await request<DryRunFormats>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds, formats: ['1:1', '9:16'] } });
    const res = await assemble(app.baseUrl, user, clipIds, { platform: 'tiktok', formats: ['1:1', '9:16'] });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    const { job, seen } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 300_000, intervalMs: 250 });
    expect(job.status).toBe('completed');
    const progress = seen.map((s) => s.progress);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);

    const result = job.result as NonNullable<AssemblyJobView['result']>;
    expect(result.formats?.map((f) => [f.aspectRatio, f.width, f.height, f.fileName])).toEqual([
      ['9:16', 1080, 1920, 'Harbour Villas · 9:16 Reels (3 clips).mp4'],
      ['1:1', 1080, 1080, 'Harbour Villas · 1:1 Square (3 clips).mp4'],
    ]);
    expect(result).toMatchObject({ ...result.formats?.[0] });

    // the job recorded each format's timeline: what the dry run answered
    const row = await testKnex()('assembly_jobs').where({ id: jobId }).first();
    expect(row.options.editions.map((e: { timeline: AssemblyEdit }) => e.timeline)).toEqual(dry.body.formats.map((f) => f.request));
    expect(row.options.timeline).toEqual(dry.body.formats[0].request);

    const approvals = await testKnex()('pending_approvals').where({ source_job_id: jobId }).orderBy('aspect_ratio', 'desc');
    expect(approvals.map((a) => [a.aspect_ratio, a.file_name, a.status, a.cost, a.remaining_cost, a.reservation_id, a.content_type])).toEqual([
      ['9:16', 'Harbour Villas · 9:16 Reels (3 clips).mp4', 'pending', 0, 0, null, 'assembly'],
      ['1:1', 'Harbour Villas · 1:1 Square (3 clips).mp4', 'pending', 0, 0, null, 'assembly'],
    ]);
    const videos = await testKnex()('compiled_videos').where({ assembly_job_id: jobId });
    expect(videos).toHaveLength(2);
    const durations: number[] = [];
    for (const [i, f] of (result.formats ?? []).entries()) {
      const approval = approvals.find((a) => a.id === f.approvalId);
      const video = videos.find((v) => v.id === f.compiledVideoId);
      expect(approval.metadata).toMatchObject({ kind: 'assembly', compiledVideoId: video.id, aspectRatio: f.aspectRatio, clipIds });
      expect(video).toMatchObject({ file_name: f.fileName, workspace_id: user.id, clip_ids: clipIds, storage_path: approval.original_path });
      expect(video.editing_data).toMatchObject({ status: 'pending_approval', platform: 'tiktok', aspect_ratio: f.aspectRatio });
      // the first format in the job's folder as before formats, the next in a folder of its own
      expect(approval.original_path).toBe(i === 0 ? `${user.id}/${jobId}/video.mp4` : `${user.id}/${jobId}/1x1/video.mp4`);
      const probed = await withStoredFile('videos', approval.original_path, probeOutput);
      expect(probed).toMatchObject({ codec: 'h264', pixFmt: 'yuv420p', width: f.width, height: f.height });
      durations.push(probed.duration);
      const preview = await withStoredFile('videos', approval.watermarked_path, probeOutput);
      expect(preview).toMatchObject({ width: f.width / 2, height: f.height / 2 });
      expect(approval.thumbnail_path).toBe(approval.original_path.replace('video.mp4', 'thumbnail.webp'));
      expect(await withStoredFile('videos', approval.thumbnail_path, async () => true)).toBe(true);
      expect((await client.workflow.getHandle(approval.workflow_id).describe()).status.name).toBe('RUNNING');
    }
    expect(Math.abs(durations[0] - durations[1])).toBeLessThan(0.1);
    expect(Math.abs(durations[0] - dry.body.request.totalDuration)).toBeLessThan(0.2);
    // free: nothing reserved or charged
    expect(await testKnex()('profiles').where({ id: user.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
    // the history carries the formats patch (histories from before it replay the one-format path)
    const history = await client.workflow.getHandle(assemblyWorkflowId(jobId)).fetchHistory();
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
    expect(markers).toHaveLength(1);

    // each item is decided on its own: approving the square one leaves the 9:16 one pending
    const square = result.formats?.[1] as NonNullable<typeof result.formats>[number];
    expect(await approveByWorkflow(client, square.approvalWorkflowId, user.id)).toBe(square.compiledVideoId);
    const after = await testKnex()('compiled_videos').where({ assembly_job_id: jobId });
    expect(after.map((v) => [v.file_name, v.editing_data.status]).sort()).toEqual([
      ['Harbour Villas · 1:1 Square (3 clips).mp4', 'approved'],
      ['Harbour Villas · 9:16 Reels (3 clips).mp4', 'pending_approval'],
    ]);
    expect(await assemblyFileStored(user.id, jobId, 'preview.mp4')).toBe(true);
    expect(await assemblyFileStored(user.id, jobId, '1x1/preview.mp4')).toBe(false);
  }, 320_000);

  it("asked for its platform's own format alone, behaves as before formats", async () => {
    const res = await assemble(app.baseUrl, user, clipIds.slice(0, 1), { platform: 'tiktok', formats: ['9:16'] });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    const { job } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 200_000, intervalMs: 250 });
    expect(job.status).toBe('completed');
    expect(job.result).toMatchObject({ aspectRatio: '9:16', width: 1080, height: 1920, fileName: 'Harbour Villas - TikTok 9x16 (1 clip).mp4' });
    expect(job.result?.formats).toBeUndefined();
    const approvals = await testKnex()('pending_approvals').where({ source_job_id: jobId });
    expect(approvals.map((a) => [a.file_name, a.cost, a.original_path])).toEqual([['Harbour Villas - TikTok 9x16 (1 clip).mp4', 0, `${user.id}/${jobId}/video.mp4`]]);
    expect(await testKnex()('compiled_videos').where({ assembly_job_id: jobId, workflow_id: assemblyWorkflowId(jobId) })).toHaveLength(1);
    expect(ASSEMBLY_FORMATS_PATCH).toBe('assembly-formats');
  }, 220_000);
});
