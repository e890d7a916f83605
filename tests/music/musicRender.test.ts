/**
 * Issue 44, acceptance 3 and 7 (music): an assembly with music, rendered for real (API, dev server, worker, ffmpeg).
 * The output's streams are checked with ffprobe (one AAC stereo audio stream as long as the video) and its loudness
 * with ffmpeg's ebur128 filter: about -14 LUFS integrated at full volume, 6 dB less at half volume. A track that ends
 * before the video is padded with silence; without music the video stays silent (no audio stream). The test audio is
 * made by ffmpeg here. The workflow's commands are the same with or without music: its history replays.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { AestheticChatAnswer } from '../../domain/assembly';
import type { AssemblyEdit } from '../../domain/assemblyTimeline';
import type { MusicTrackView } from '../../domain/music';
import { assemblyWorkflowId } from '../../workflows/assembly';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { assemble, assemblyUser, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, withAssemblyFile, type AssemblyTestApp, type AssemblyUser } from '../assembly/fixtures';
import { integratedLoudness, makeAudio, probeStreams, type StreamFacts } from '../support/audio';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { replayWithCurrentCode, testClient } from '../support/temporal';
import { testNote } from '../support/testNotes';

interface Rendered {
  jobId: string;
  dryRun: { request: AssemblyEdit; preview: { totalDuration: number; music: { name: string; summary: string } | null } };
  video: StreamFacts[];
  preview: StreamFacts[];
  loudness: number | null;
}

describe('assembly with music (API, dev server, real worker, ffmpeg)', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;
  let user: AssemblyUser;
  let clipIds: string[];
  let scratch: string;
  const runs: Record<'silent' | 'full' | 'half' | 'short', Rendered> = {} as never;

  async function addTrack(bytes: Buffer, name: string): Promise<MusicTrackView> {
    const res = await request<{ track: MusicTrackView }>(app.baseUrl, `/api/workspaces/${user.id}/music?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      token: user.token,
      body: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (res.status !== 201) throw new Error(`upload answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.track;
  }

  async function render(music: Record<string, unknown> | null): Promise<Rendered> {
    const set = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic/music`, { method: 'PUT', token: user.token, json: music ?? { trackId: null } });
    expect(set.status).toBe(200);
    const dry = await request<Rendered['dryRun']>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds } });
    expect(dry.status).toBe(200);
    const started = await assemble(app.baseUrl, user, clipIds, { platform: 'landscape' });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const { job } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 400_000, intervalMs: 300 });
    expect(job).toMatchObject({ status: 'completed', error: null });
    const copy = async (name: string) =>
      withAssemblyFile(user.id, jobId, name, async (file) => {
        const target = path.join(scratch, `${jobId}-${name}`);
        await fs.copyFile(file, target);
        return target;
      });
    const video = await copy('video.mp4');
    const preview = await copy('preview.mp4');
    const videoStreams = await probeStreams(video);
    return {
      jobId,
      dryRun: dry.body,
      video: videoStreams,
      preview: await probeStreams(preview),
      loudness: videoStreams.some((s) => s.type === 'audio') ? await integratedLoudness(video) : null,
    };
  }

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'music-render-'));
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    ({ client, close: closeClient } = await testClient());
    user = await assemblyUser(app.baseUrl, 'Harbour Villas');
    // three 2 s clips: 6 s less two 0.5 s transitions, a 5 s video
    clipIds = [];
    for (let i = 0; i < 3; i += 1) clipIds.push((await storeClip(app.config, user, { orientation: 'landscape', index: i, seconds: 2 })).id);
    // a mono noise track, quiet at the source (the normalisation brings it up), and a 2 s tone shorter than the video
    const calm = await addTrack(await makeAudio('mp3', { seconds: 20, source: 'noise', channels: 1, gainDb: -12 }), 'Calm noise.mp3');
    const short = await addTrack(await makeAudio('wav', { seconds: 2, channels: 2 }), 'Short tone.wav');
    runs.silent = await render(null);
    runs.full = await render({ trackId: calm.id, offsetSeconds: 3, volume: 1, fadeInSeconds: 0.5, fadeOutSeconds: 1 });
    runs.half = await render({ trackId: calm.id, offsetSeconds: 3, volume: 0.5, fadeInSeconds: 0.5, fadeOutSeconds: 1 });
    runs.short = await render({ trackId: short.id, offsetSeconds: 0, volume: 1, fadeInSeconds: 0, fadeOutSeconds: 0 });
  }, 900_000);

  afterAll(async () => {
    await worker?.stop();
    await closeClient?.();
    await app?.close();
    await removeFixtures();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
    await closeTestKnex();
  });

  const videoDuration = (run: Rendered) => run.video.find((s) => s.type === 'video')?.duration ?? NaN;

  it('without music the video stays silent: one video stream, no audio', () => {
    expect(runs.silent.video.map((s) => s.type)).toEqual(['video']);
    expect(runs.silent.preview.map((s) => s.type)).toEqual(['video']);
    expect(runs.silent.dryRun.request.timeline.soundtrack).toBeUndefined();
    expect(runs.silent.dryRun.preview.music).toBeNull();
  });

  it('the dry run shows the soundtrack the worker renders, trimmed to the video', async () => {
    const soundtrack = runs.full.dryRun.request.timeline.soundtrack;
    expect(soundtrack).toMatchObject({ effect: 'fadeInFadeOut', volume: 1, trim: 3, length: 5, fadeInSeconds: 0.5, fadeOutSeconds: 1, loudness: -14 });
    expect(soundtrack?.src).toMatch(/^\/api\/files\/videos\/music\//);
    expect(runs.full.dryRun.preview.music).toMatchObject({ name: 'Calm noise', summary: 'Calm noise at 100% volume, from 0:03, fading in over 0.5 s and out over 1 s' });
    const job = await testKnex()('assembly_jobs').where({ id: runs.full.jobId }).first('options');
    expect(job.options.timeline).toEqual(runs.full.dryRun.request);
    // the short track plays 2 s of the 5 s video
    expect(runs.short.dryRun.request.timeline.soundtrack).toMatchObject({ trim: 0, length: 2 });
  });

  it('with music the output has one AAC stereo audio stream as long as the video, in the preview too', () => {
    for (const run of [runs.full, runs.half, runs.short]) {
      const audio = run.video.filter((s) => s.type === 'audio');
      expect(audio).toHaveLength(1);
      expect(audio[0]).toMatchObject({ codec: 'aac', channels: 2, sampleRate: 48000 });
      expect(Math.abs(videoDuration(run) - 5)).toBeLessThan(0.1);
      expect(Math.abs((audio[0].duration ?? 0) - videoDuration(run))).toBeLessThan(0.1);
      expect(run.preview.filter((s) => s.type === 'audio')).toEqual([expect.objectContaining({ codec: 'aac', channels: 2 })]);
    }
  });

  it('the music is loudness-normalised: about -14 LUFS integrated (ebur128) at full volume, 6 dB less at half', () => {
    testNote(`integrated loudness (LUFS): full ${runs.full.loudness}, half ${runs.half.loudness}, short track ${runs.short.loudness}`);
    expect(runs.full.loudness).not.toBeNull();
    expect(Math.abs((runs.full.loudness as number) - -14)).toBeLessThan(1);
    expect(Math.abs((runs.half.loudness as number) - -20)).toBeLessThan(1);
    // the tone plays 2 s and then silence: what plays is still normalised (the gate leaves the silence out)
    expect(Math.abs((runs.short.loudness as number) - -14)).toBeLessThan(1.5);
  });

  it("the assembly's history replays with the current workflow code", async () => {
    const histories = await Promise.all(
      [runs.silent, runs.full].map(async (run) => ({ workflowId: assemblyWorkflowId(run.jobId), history: await client.workflow.getHandle(assemblyWorkflowId(run.jobId)).fetchHistory() })),
    );
    const results = await replayWithCurrentCode(histories);
    expect(results.map((r) => r.error)).toEqual([undefined, undefined]);
  });
});
