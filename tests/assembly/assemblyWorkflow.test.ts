import fs from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { ASSEMBLY_MESSAGES, ASSEMBLY_MSG, type AssemblyJobView } from '../../domain/assembly';
import type { AssemblyEdit } from '../../domain/assemblyTimeline';
import { assemblyWorkflowId } from '../../workflows/assembly';
import { approveByWorkflow, startClipWorker, type RunningWorker } from '../clips/fixtures';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { testClient } from '../support/temporal';
import {
  assemble,
  assemblyUser,
  probeOutput,
  removeFixtures,
  startAssemblyApp,
  storeClip,
  waitForAssembly,
  type AssemblyTestApp,
  type AssemblyUser,
  type FixtureOrientation,
  assemblyFileStored,
  withAssemblyFile,
} from './fixtures';
import { fileRefOfLink } from '../support/objectStorage';

interface Run {
  orientation: FixtureOrientation;
  count: number;
  user: AssemblyUser;
  clipIds: string[];
  dryRun: { request: AssemblyEdit; preview: { totalDuration: number; width: number; height: number } };
  jobId: string;
  job: AssemblyJobView;
  seen: AssemblyJobView[];
}

const COUNTS = [2, 3, 5];
const SIZE = { landscape: { width: 1920, height: 1080, platform: 'youtube', aspect: '16:9' }, portrait: { width: 1080, height: 1920, platform: 'tiktok', aspect: '9:16' } } as const;

describe('assembly workflow (API, dev server, real worker, ffmpeg)', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;
  const runs: Run[] = [];

  beforeAll(async () => {
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    ({ client, close: closeClient } = await testClient());
    // one user per orientation (3 pending items each, under the cap of 5); clips of 1 s, the last one 2 s
    for (const orientation of ['landscape', 'portrait'] as const) {
      const user = await assemblyUser(app.baseUrl);
      for (const count of COUNTS) {
        const clips = [];
        for (let i = 0; i < count; i += 1) clips.push(await storeClip(app.config, user, { orientation, index: i, seconds: i === count - 1 ? 2 : 1 }));
        const clipIds = clips.map((c) => c.id);
        const dry = await request<Run['dryRun']>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds } });
        expect(dry.status).toBe(200);
        const res = await assemble(app.baseUrl, user, clipIds, { platform: orientation });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, jobId: expect.any(String) });
        runs.push({ orientation, count, user, clipIds, dryRun: dry.body, jobId: res.body.jobId as string } as Run);
      }
    }
    for (const run of runs) Object.assign(run, await waitForAssembly(app.baseUrl, run.user, run.jobId, { timeoutMs: 400_000, intervalMs: 300 }));
  }, 600_000);

  afterAll(async () => {
    await worker?.stop();
    await closeClient?.();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('renders 2, 3 and 5 clips of each orientation as H.264 at the platform size, lasting the sum of the clips minus the overlaps', async () => {
    expect(runs).toHaveLength(6);
    for (const run of runs) {
      const size = SIZE[run.orientation];
      expect(run.job).toMatchObject({ status: 'completed', progress: 100, message: ASSEMBLY_MESSAGES.completed, error: null, platform: size.platform });
      const { info, size: stored } = await withAssemblyFile(run.user.id, run.jobId, 'video.mp4', async (file) => ({ info: await probeOutput(file), size: (await fs.stat(file)).size }));
      expect({ count: run.count, ...info }).toMatchObject({ count: run.count, codec: 'h264', width: size.width, height: size.height, pixFmt: 'yuv420p' });
      // default editing: 0.5 s transitions, clamped to half a 1 s clip: (count - 1) s + 2 s - (count - 1) * 0.5 s
      const expected = run.count - 1 + 2 - (run.count - 1) * 0.5;
      expect(run.dryRun.preview.totalDuration).toBeCloseTo(expected, 3);
      expect(Math.abs(info.duration - expected)).toBeLessThan(0.1);
      expect(run.dryRun.preview).toMatchObject({ width: size.width, height: size.height });
      expect(run.job.result).toMatchObject({ width: size.width, height: size.height, platform: size.platform, aspectRatio: size.aspect });
      expect(run.job.result?.fileSize).toBe(stored);
    }
  });

  it('renders exactly the dry-run timeline, recorded on the job', async () => {
    for (const run of runs) {
      const job = await testKnex()('assembly_jobs').where({ id: run.jobId }).first();
      expect(job).toMatchObject({ status: 'completed', progress: 100, workflow_id: assemblyWorkflowId(run.jobId), clip_ids: run.clipIds });
      expect(job.options.timeline).toEqual(run.dryRun.request);
      const track = run.dryRun.request.timeline.tracks.at(-1)?.clips ?? [];
      expect(track.map((c) => (c as { clipId: string }).clipId)).toEqual(run.clipIds);
    }
  });

  it('stores a compiled video with thumbnail and watermarked preview, pending a free approval', async () => {
    for (const run of runs) {
      expect(await assemblyFileStored(run.user.id, run.jobId, 'thumbnail.webp')).toBe(true);
      const preview = await withAssemblyFile(run.user.id, run.jobId, 'preview.mp4', probeOutput);
      // made in the same ffmpeg run, at half size, the watermark burnt in
      expect(preview).toMatchObject({ codec: 'h264', width: SIZE[run.orientation].width / 2, height: SIZE[run.orientation].height / 2 });
      expect(Math.abs(preview.duration - (await withAssemblyFile(run.user.id, run.jobId, 'video.mp4', probeOutput)).duration)).toBeLessThan(0.1);
      const video = await testKnex()('compiled_videos').where({ id: run.job.result?.compiledVideoId }).first();
      expect(video).toMatchObject({ workspace_id: run.user.id, project_id: run.user.projectId, clip_ids: run.clipIds, workflow_id: assemblyWorkflowId(run.jobId), storage_bucket: 'videos' });
      expect(video.editing_data).toMatchObject({ status: 'pending_approval', platform: SIZE[run.orientation].platform, aspect_ratio: SIZE[run.orientation].aspect });
      const approval = await testKnex()('pending_approvals').where({ source_job_id: run.jobId }).first();
      expect(approval).toMatchObject({ content_type: 'assembly', status: 'pending', cost: 0, remaining_cost: 0, reservation_id: null, aspect_ratio: SIZE[run.orientation].aspect });
      expect(approval.metadata).toMatchObject({ kind: 'assembly', compiledVideoId: video.id, clipIds: run.clipIds });
      expect((await client.workflow.getHandle(approval.workflow_id).describe()).status.name).toBe('RUNNING');
    }
    // assemblies are free: nothing reserved or charged
    const credits = await testKnex()('profiles').where({ id: runs[0].user.id }).first('credits', 'reserved_credits');
    expect(credits).toEqual({ credits: 5, reserved_credits: 0 });
  });

  it('reports progress through the status call, never going back', () => {
    for (const run of runs) {
      const progress = run.seen.map((s) => s.progress);
      for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);
      expect(run.seen.at(-1)?.status).toBe('completed');
    }
  });

  it('after approval the video is listed under Videos with its aspect, and deleting it removes its files', async () => {
    const run = runs.find((r) => r.orientation === 'portrait' && r.count === 3) as Run;
    const contentId = await approveByWorkflow(client, run.job.result?.approvalWorkflowId as string, run.user.id);
    expect(contentId).toBe(run.job.result?.compiledVideoId);
    const listing = await request<{ content: Array<{ type: string; data: Record<string, unknown>; signed_url: string }> }>(
      app.baseUrl,
      `/api/projects/${run.user.projectId}/content?refresh=1&bust=${Date.now()}`,
      { token: run.user.token },
    );
    const videos = listing.body.content.filter((item) => item.type === 'compiled_video');
    // only the approved one: the two still pending are not in the library
    expect(videos).toHaveLength(1);
    expect(videos[0].data).toMatchObject({ id: contentId, aspect_ratio: '9:16', editing_data: expect.objectContaining({ status: 'approved', platform: 'tiktok' }) });
    const played = await fetch(new URL(videos[0].signed_url, app.baseUrl), { headers: { Range: 'bytes=0-99' } });
    expect(played.status).toBe(206);
    expect(played.headers.get('content-type')).toBe('video/mp4');
    await played.arrayBuffer();
    // approval drops the watermarked preview
    expect(await assemblyFileStored(run.user.id, run.jobId, 'preview.mp4')).toBe(false);
    expect((await testKnex()('profiles').where({ id: run.user.id }).first('total_assemblies_used')).total_assemblies_used).toBe(1);

    const removed = await request(app.baseUrl, `/api/projects/${run.user.projectId}/compiled-videos/${contentId}`, { method: 'DELETE', token: run.user.token });
    expect(removed.status).toBe(200);
    expect(await testKnex()('compiled_videos').where({ id: contentId }).first()).toBeUndefined();
    expect(await assemblyFileStored(run.user.id, run.jobId, 'video.mp4')).toBe(false);
    expect(await assemblyFileStored(run.user.id, run.jobId, 'thumbnail.webp')).toBe(false);
  });

  it('refuses mixed orientations, six clips, a missing project, another user\'s clips and project, without leaving a job', async () => {
    const user = await assemblyUser(app.baseUrl);
    const land = await storeClip(app.config, user, { orientation: 'landscape' });
    const port = await storeClip(app.config, user, { orientation: 'portrait' });
    const mixed = await assemble(app.baseUrl, user, [land.id, port.id]);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toBe('Cannot mix landscape and portrait clips. Please select clips of the same aspect ratio.');
    const mixedDry = await request(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds: [port.id, land.id] } });
    expect(mixedDry.status).toBe(400);
    expect(mixedDry.body.error).toBe('Cannot mix portrait and landscape clips. Please select clips of the same aspect ratio.');

    const six = [];
    for (let i = 0; i < 6; i += 1) six.push((await storeClip(app.config, user, { index: i })).id);
    const tooMany = await assemble(app.baseUrl, user, six);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toBe(ASSEMBLY_MSG.maxClips);

    const none = await assemble(app.baseUrl, user, []);
    expect(none.status).toBe(400);
    expect(none.body.error).toBe(ASSEMBLY_MSG.selectClip);
    const noProject = await assemble(app.baseUrl, user, [land.id], { projectId: null });
    expect(noProject.status).toBe(400);
    expect(noProject.body.error).toBe(ASSEMBLY_MSG.selectProject);
    const wrongPlatform = await assemble(app.baseUrl, user, [land.id], { platform: 'tiktok' });
    expect(wrongPlatform.status).toBe(400);

    const other = await assemblyUser(app.baseUrl);
    const theirs = await storeClip(app.config, other, { orientation: 'landscape' });
    const foreignClip = await assemble(app.baseUrl, user, [land.id, theirs.id]);
    expect(foreignClip.status).toBe(404);
    const foreignDry = await request(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds: [theirs.id] } });
    expect(foreignDry.status).toBe(404);
    const foreignProject = await assemble(app.baseUrl, user, [land.id], { projectId: other.projectId });
    expect(foreignProject.status).toBe(403);
    expect(foreignProject.body.error).toBe(ASSEMBLY_MSG.projectPermission);
    // the other user cannot read this user's jobs either
    const started = await assemble(app.baseUrl, user, [land.id]);
    expect(started.status).toBe(200);
    const peek = await request(app.baseUrl, `/api/video/assemble?jobId=${started.body.jobId}`, { token: other.token });
    expect(peek.status).toBe(404);
    await waitForAssembly(app.baseUrl, user, started.body.jobId as string, { timeoutMs: 120_000 });

    const jobs = await testKnex()('assembly_jobs').where({ workspace_id: user.id });
    expect(jobs).toHaveLength(1);

    const anonymous = await request(app.baseUrl, '/api/video/assemble', { json: { projectId: user.projectId, platform: 'youtube', contentItems: [], clipOrder: [] } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe(ASSEMBLY_MSG.authRequired);
    const anonymousStatus = await request(app.baseUrl, `/api/video/assemble?jobId=${started.body.jobId}`);
    expect(anonymousStatus.status).toBe(401);
    expect(anonymousStatus.body.error).toBe(ASSEMBLY_MSG.authRequired);
  });

  it('lists the user\'s approved clips for assembly with project name, duration, thumbnail and aspect', async () => {
    const run = runs.find((r) => r.orientation === 'landscape') as Run;
    const res = await request<{ clips: Array<Record<string, unknown>> }>(app.baseUrl, '/api/video-assembly/clips', { token: run.user.token });
    expect(res.status).toBe(200);
    const ids = res.body.clips.map((c) => c.id);
    for (const id of runs.filter((r) => r.user.id === run.user.id).flatMap((r) => r.clipIds)) expect(ids).toContain(id);
    expect(res.body.clips[0]).toMatchObject({ project_name: 'Harbour View', duration: expect.any(Number), aspect_ratio: '16:9', orientation: 'landscape', file_url: expect.any(String) });
    expect(fileRefOfLink(String(res.body.clips[0].file_url))?.bucket).toBe('clips');
    const portrait = await request<{ clips: unknown[] }>(app.baseUrl, '/api/video-assembly/clips?orientation=portrait', { token: run.user.token });
    expect(portrait.body.clips).toEqual([]);
  });
});
