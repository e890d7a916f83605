import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { VIDEO_EFFECTS, type VideoEffect } from '../../domain/constants';
import { LocalImageToVideoProvider } from '../../providers/local/video';
import { probeVideo } from '../../providers/media/ffmpeg';
import type { ClipAspectRatio, VideoProgress, VideoResult } from '../../providers/types';
import { streetStill } from '../support/stills';

const execFileAsync = promisify(execFile);
const FRAME_W = 64;
/**
 * The length of the clips of the tests about the job's life (a stale claim, a follower, a cancelled wait) and of the
 * framing (the other aspects' sizes, an EXIF orientation), not about the length: a 1 s render goes through the same
 * steps and frames the picture the same way as a 5 s one (each effect's motion runs over the clip's length,
 * providers/local/clipEffects.ts) in a fifth of the time. The seven effects at 16:9 render the product's 5 s: the
 * length, the frame count and each motion are checked on those.
 */
const SHORT_SECONDS = 1;

/** A small source with structure in every direction: sky gradient, a building off-centre, coloured blocks, a lawn. */
async function still(): Promise<Buffer> {
  return streetStill().jpeg({ quality: 92 }).toBuffer();
}

/**
 * The first, middle and last frame (0, 75 and 149 of a 5 s clip) as 64-px-wide RGB rasters. The select filter looks at
 * every frame, so this decodes the whole clip: an error anywhere in it (`-v error`) fails here.
 */
async function keyFrames(file: string, aspect: ClipAspectRatio = '16:9', frames = 150): Promise<Buffer[]> {
  const height = aspect === '16:9' ? 36 : aspect === '9:16' ? 114 : 64;
  const [mid, last] = [Math.floor(frames / 2), frames - 1];
  const { stdout, stderr } = await execFileAsync(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-vf', `select='eq(n\\,0)+eq(n\\,${mid})+eq(n\\,${last})',scale=${FRAME_W}:${height}`, '-vsync', '0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 1 << 24 },
  );
  expect(stderr.toString('utf8').trim()).toBe('');
  const size = FRAME_W * height * 3;
  expect(stdout.length).toBe(size * 3);
  return [0, 1, 2].map((i) => stdout.subarray(i * size, (i + 1) * size));
}

function meanAbsDiff(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

function channelMeans(frame: Buffer): { r: number; g: number; b: number; luma: number } {
  let r = 0, g = 0, b = 0;
  const n = frame.length / 3;
  for (let i = 0; i < n; i += 1) {
    r += frame[i * 3];
    g += frame[i * 3 + 1];
    b += frame[i * 3 + 2];
  }
  return { r: r / n, g: g / n, b: b / n, luma: (0.299 * r + 0.587 * g + 0.114 * b) / n };
}

/**
 * A playable clip of `aspect` at width x height lasting `seconds` (5 unless said) at 30 fps; its key frames (keyFrames),
 * which decoding it end to end gave.
 */
async function expectPlayableClip(result: VideoResult, aspect: ClipAspectRatio, width: number, height: number, seconds = 5): Promise<Buffer[]> {
  const probe = await probeVideo(result.path);
  expect(probe).toMatchObject({ codec: 'h264', width, height, pixelFormat: 'yuv420p', frames: seconds * 30 });
  expect(probe.fps).toBeCloseTo(30, 5);
  expect(Math.abs(probe.durationSeconds - seconds)).toBeLessThan(0.05);
  expect(result).toMatchObject({ mime: 'video/mp4', width, height, fps: 30, model: 'local/ffmpeg-effects' });
  // the facts the provider took from the ffmpeg run are the file's own
  expect(result.durationSeconds).toBeCloseTo(probe.durationSeconds, 3);
  // +faststart: the index comes before the media data, so browsers play while downloading
  const head = await fs.readFile(result.path);
  expect(head.indexOf('moov')).toBeGreaterThan(0);
  expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat'));
  expect(result.sizeBytes).toBe(head.length);
  // decodes end to end without errors
  return keyFrames(result.path, aspect, seconds * 30);
}

describe('LocalImageToVideoProvider', () => {
  let workDir: string;
  let provider: LocalImageToVideoProvider;
  let image: Buffer;
  const clips = new Map<VideoEffect, { result: VideoResult; frames: Buffer[]; progress: VideoProgress[] }>();

  beforeAll(async () => {
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'local-video-test-'));
    provider = new LocalImageToVideoProvider({ workDir, preset: 'ultrafast', maxConcurrentRenders: 1, followIntervalMs: 50 });
    image = await still();
  });

  afterAll(async () => {
    await fs.rm(workDir, { recursive: true, force: true });
  });

  // seven renders one after another: on a machine busy with other work that takes minutes, so the bound only guards
  // against a hang (the render's speed is a benchmark's business, docs/benchmarks.md)
  it('renders all seven effects as playable 5 s, 30 fps H.264 MP4s at 1280x720, reporting progress', async () => {
    for (const effect of VIDEO_EFFECTS) {
      const { jobId } = await provider.submit({ image, effect, platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
      await expect(provider.status(jobId)).resolves.toMatchObject({ state: 'queued' });
      const progress: VideoProgress[] = [];
      const result = await provider.wait(jobId, { onProgress: (p) => void progress.push(p) });
      const frames = await expectPlayableClip(result, '16:9', 1280, 720);
      await expect(provider.status(jobId)).resolves.toEqual({ state: 'completed', progress: 100, message: 'Clip ready' });
      clips.set(effect, { result, frames, progress });
    }
    for (const [effect, { progress }] of clips) {
      const values = progress.map((p) => p.progress);
      expect({ effect, monotonic: values.every((v, i) => i === 0 || v >= values[i - 1]) }).toEqual({ effect, monotonic: true });
      expect(values.length).toBeGreaterThanOrEqual(2);
      expect(Math.max(...values)).toBeGreaterThanOrEqual(90);
      expect(progress.every((p) => p.state === 'running' && p.message.startsWith(`Rendering ${effect}`))).toBe(true);
    }
  }, 600_000);

  it('gives each effect its own motion', () => {
    const effects = [...clips.keys()];
    expect(effects).toHaveLength(7);
    for (const effect of effects) {
      const [first, , last] = clips.get(effect)!.frames;
      expect({ effect, moves: meanAbsDiff(first, last) > 4 }).toEqual({ effect, moves: true });
    }
    // no two effects produce the same sequence of frames
    for (const a of effects) {
      for (const b of effects) {
        if (a >= b) continue;
        const fa = clips.get(a)!.frames;
        const fb = clips.get(b)!.frames;
        const distance = Math.max(meanAbsDiff(fa[1], fb[1]), meanAbsDiff(fa[2], fb[2]));
        expect({ pair: `${a}/${b}`, distinct: distance > 3 }).toEqual({ pair: `${a}/${b}`, distinct: true });
      }
    }
  });

  it('pans in opposite directions: Pan Left starts where Pan Right ends', () => {
    const left = clips.get('Pan Left')!.frames;
    const right = clips.get('Pan Right')!.frames;
    expect(meanAbsDiff(left[0], right[2])).toBeLessThan(2);
    expect(meanAbsDiff(left[2], right[0])).toBeLessThan(2);
    expect(meanAbsDiff(left[0], left[2])).toBeGreaterThan(10);
  });

  it('Zoom In ends on an enlarged centre of its first frame; Day to Night ends darker and bluer', async () => {
    const zoom = clips.get('Zoom In')!.frames;
    // the centre of frame 0 scaled up to full size looks like the last frame (zoom 1.32)
    const first = await sharp(zoom[0], { raw: { width: FRAME_W, height: 36, channels: 3 } }).png().toBuffer();
    const cropW = Math.round(FRAME_W / 1.32);
    const cropH = Math.round(36 / 1.32);
    const centre = await sharp(first)
      .extract({ left: Math.round((FRAME_W - cropW) / 2), top: Math.round((36 - cropH) / 2), width: cropW, height: cropH })
      .resize(FRAME_W, 36, { fit: 'fill' })
      .raw()
      .toBuffer();
    expect(meanAbsDiff(centre, zoom[2])).toBeLessThan(meanAbsDiff(zoom[0], zoom[2]) / 2);

    const night = clips.get('Day to Night')!.frames;
    const day = channelMeans(night[0]);
    const dark = channelMeans(night[2]);
    expect(dark.luma).toBeLessThan(day.luma * 0.7);
    expect(dark.b / Math.max(1, dark.r)).toBeGreaterThan(day.b / day.r);
  });

  it('frames a sideways JPEG with an EXIF orientation upright, like the same scene stored upright', async () => {
    // stored rotated 90 degrees anticlockwise, with orientation 6 saying "turn it clockwise to show it"
    const sideways = await sharp(await streetStill().png().toBuffer()).rotate(270).jpeg({ quality: 92 }).withMetadata({ orientation: 6 }).toBuffer();
    expect((await sharp(sideways).metadata()).orientation).toBe(6);
    // 1 s: its first and last frames are the 5 s clip's (the zoom runs over the clip's length)
    const { jobId } = await provider.submit({ image: sideways, effect: 'Zoom In', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: SHORT_SECONDS });
    const result = await provider.wait(jobId);
    const frames = await expectPlayableClip(result, '16:9', 1280, 720, SHORT_SECONDS);
    const upright = clips.get('Zoom In')?.frames;
    if (!upright) throw new Error('the upright Zoom In clip is rendered by the first test');
    expect(meanAbsDiff(frames[0], upright[0])).toBeLessThan(6);
    expect(meanAbsDiff(frames[2], upright[2])).toBeLessThan(6);
  });

  it.each([
    ['9:16', 'TikTok', 720, 1280],
    ['1:1', 'Square', 1080, 1080],
  ] as const)('renders %s for %s at %ix%i', async (aspectRatio, platform, width, height) => {
    const { jobId } = await provider.submit({ image, effect: 'Walk Through', platform, aspectRatio, durationSeconds: SHORT_SECONDS });
    const result = await provider.wait(jobId);
    const frames = await expectPlayableClip(result, aspectRatio, width, height, SHORT_SECONDS);
    expect(meanAbsDiff(frames[0], frames[2])).toBeGreaterThan(4);
  });

  it('answers a second wait from the finished job without rendering again', async () => {
    const { result } = clips.get('Pan Right')!;
    const jobId = path.basename(path.dirname(result.path));
    const before = (await fs.stat(result.path)).mtimeMs;
    const again = await provider.wait(jobId);
    expect(again.path).toBe(result.path);
    expect((await fs.stat(result.path)).mtimeMs).toBe(before);
  });

  it('resumes in a new process after a worker died mid-render (stale claim)', async () => {
    const { jobId } = await provider.submit({ image, effect: 'Zoom In', platform: 'Square', aspectRatio: '1:1', durationSeconds: SHORT_SECONDS });
    // a claim left by a process that no longer exists
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    await fs.writeFile(path.join(workDir, jobId, 'owner.json'), JSON.stringify({ pid: dead, instance: 'gone' }));
    const restarted = new LocalImageToVideoProvider({ workDir, preset: 'ultrafast' });
    await expect(restarted.status(jobId)).resolves.toMatchObject({ state: 'queued' });
    const result = await restarted.wait(jobId);
    await expectPlayableClip(result, '1:1', 1080, 1080, SHORT_SECONDS);
  });

  it('lets a second waiter follow the render instead of starting another', async () => {
    const { jobId } = await provider.submit({ image, effect: 'Drone Shot', platform: 'Facebook', aspectRatio: '16:9', durationSeconds: SHORT_SECONDS });
    // the owner is held at its first 'running' report, which the provider awaits after claiming the job and before it
    // starts ffmpeg: the follower comes while the owner holds the job whatever the machine's speed, and the owner goes
    // on only once the follower has looked at the job (and reported what it saw)
    const ownerProgress: VideoProgress[] = [];
    let ownerClaimed!: () => void;
    const claimed = new Promise<void>((resolve) => (ownerClaimed = resolve));
    let releaseOwner!: () => void;
    const ownerHeld = new Promise<void>((resolve) => (releaseOwner = resolve));
    let holding = false;
    const owner = provider.wait(jobId, {
      onProgress: (p) => {
        ownerProgress.push(p);
        if (holding || p.state !== 'running') return undefined;
        holding = true;
        ownerClaimed();
        return ownerHeld;
      },
    });
    // an owner that failed before its first report settles the race instead
    await Promise.race([claimed, owner]);
    const followerProgress: VideoProgress[] = [];
    let followerLooked!: () => void;
    const looked = new Promise<void>((resolve) => (followerLooked = resolve));
    const follower = provider.wait(jobId, {
      onProgress: (p) => {
        followerProgress.push(p);
        followerLooked();
      },
    });
    try {
      // a follower that ended without looking (a second render, a failure) settles the race instead
      await Promise.race([looked, follower]);
    } finally {
      releaseOwner();
    }
    const [a, b] = await Promise.all([owner, follower]);
    expect(b).toEqual(a);
    expect(followerProgress.length).toBeGreaterThan(0);
    const renders = (await fs.readdir(path.join(workDir, jobId))).filter((f) => f.startsWith('render-'));
    expect(renders).toEqual([]);
  });

  it('stops ffmpeg when the waiting activity is cancelled, and a retry renders the clip', async () => {
    const { jobId } = await provider.submit({ image, effect: 'Bring to Life', platform: 'Instagram', aspectRatio: '9:16', durationSeconds: SHORT_SECONDS });
    const controller = new AbortController();
    // aborted at its first progress report: the wait ends with ABORTED instead of the clip (not timed), and the job
    // is back in the queue below, so ffmpeg was stopped rather than left to finish
    const aborted = provider.wait(jobId, { signal: controller.signal, onProgress: () => controller.abort() });
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(provider.status(jobId)).resolves.toMatchObject({ state: 'queued' });
    const result = await provider.wait(jobId);
    await expectPlayableClip(result, '9:16', 720, 1280, SHORT_SECONDS);
  });

  it('stops the render and rethrows when the progress callback (the heartbeat) throws', async () => {
    const { jobId } = await provider.submit({ image, effect: 'Pan Left', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
    const heartbeatFailure = new Error('heartbeat failed');
    await expect(provider.wait(jobId, { onProgress: () => Promise.reject(heartbeatFailure) })).rejects.toBe(heartbeatFailure);
    await expect(provider.status(jobId)).resolves.toMatchObject({ state: 'queued' });
    expect((await fs.readdir(path.join(workDir, jobId))).filter((f) => f.endsWith('.mp4') || f === 'owner.json')).toEqual([]);
  });

  it('cancels a running job: the waiter fails with JOB_CANCELLED and the job stays cancelled', async () => {
    const { jobId } = await provider.submit({ image, effect: 'Day to Night', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
    let cancelled = false;
    const waiting = provider.wait(jobId, {
      onProgress: () => {
        if (!cancelled) {
          cancelled = true;
          void provider.cancel(jobId);
        }
      },
    });
    await expect(waiting).rejects.toMatchObject({ code: 'JOB_CANCELLED' });
    await expect(provider.status(jobId)).resolves.toMatchObject({ state: 'cancelled' });
    await expect(provider.wait(jobId)).rejects.toMatchObject({ code: 'JOB_CANCELLED' });
    expect((await fs.readdir(path.join(workDir, jobId))).filter((f) => f.endsWith('.mp4'))).toEqual([]);
  });

  it('releases a job and refuses unknown ids and bad requests', async () => {
    const { result } = clips.get('Zoom In')!;
    const jobId = path.basename(path.dirname(result.path));
    await provider.release(jobId);
    await expect(fs.access(result.path)).rejects.toThrow();
    await expect(provider.status(jobId)).rejects.toMatchObject({ code: 'UNKNOWN_JOB' });
    await expect(provider.wait('local-00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({ code: 'UNKNOWN_JOB' });
    await expect(provider.wait('../etc')).rejects.toMatchObject({ code: 'UNKNOWN_JOB' });
    await expect(
      provider.submit({ image, effect: 'Moonwalk' as VideoEffect, platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 }),
    ).rejects.toMatchObject({ code: 'INPUT' });
    await expect(provider.submit({ image: Buffer.from('nope'), effect: 'Zoom In', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 })).rejects.toMatchObject({
      code: 'INPUT',
    });
  });
});
