/**
 * The clip's preview and thumbnail frame from one ffmpeg run (activities/clipMedia.ts watermarkVideo with `frame`):
 * the frame is the unmarked picture at the asked time, the same one a separate seek takes, and the preview is the
 * whole clip with the watermark. And the still framed for the provider (frameStill): exactly the frame's size, the
 * picture whole in the middle of a pad, over a darkened blur of itself.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { frameStill, watermarkVideo } from '../../activities/clipMedia';
import { PreviewBatcher, batchArguments } from '../../activities/previewBatch';
import { FFMPEG, probeVideo } from '../../providers/media/ffmpeg';

jest.setTimeout(60_000);

let dir: string;
let clip: string;

/** Raw RGB of a PNG, to compare pictures rather than files. */
async function pixels(png: Buffer | string): Promise<Buffer> {
  return sharp(png).removeAlpha().raw().toBuffer();
}

/** The frame at `seconds` of `video` by a seek, as PNG. */
function frameAt(video: string, seconds: number): Buffer {
  return execFileSync(FFMPEG, ['-v', 'error', '-ss', String(seconds), '-i', video, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']);
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-media-test-'));
  clip = path.join(dir, 'clip.mp4');
  // a test pattern with a running counter: every second looks different
  execFileSync(FFMPEG, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=24:duration=3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('watermarkVideo with a frame', () => {
  it('writes the watermarked preview and the unmarked frame at the asked time in one run', async () => {
    const preview = path.join(dir, 'preview.mp4');
    const frame = path.join(dir, 'frame.png');
    await watermarkVideo(clip, preview, { width: 320, height: 180 }, { preset: 'veryfast', durationSeconds: 3, frame: { path: frame, atSeconds: 1 } });

    expect(await probeVideo(preview)).toMatchObject({ codec: 'h264', width: 320, height: 180, frames: 72 });
    // the same picture a seek to 1 s gives (what the thumbnail was made from before)
    expect(await pixels(frame)).toEqual(await pixels(frameAt(clip, 1)));
    // and not the watermarked one, nor another second's
    expect(await pixels(frame)).not.toEqual(await pixels(frameAt(preview, 1)));
    expect(await pixels(frame)).not.toEqual(await pixels(frameAt(clip, 2)));
  });

  it('writes no frame when none is asked for', async () => {
    const out = await fs.mkdtemp(path.join(dir, 'preview-only-'));
    await watermarkVideo(clip, path.join(out, 'preview.mp4'), { width: 320, height: 180 }, { preset: 'veryfast', durationSeconds: 3 });
    expect(await probeVideo(path.join(out, 'preview.mp4'))).toMatchObject({ width: 320, height: 180, frames: 72 });
    // the overlay it drew beside the output is gone too
    expect(await fs.readdir(out)).toEqual(['preview.mp4']);
  });
});

describe('previews in one ffmpeg run (PreviewBatcher)', () => {
  it('makes each queued preview and frame as its own run would, several to one run', async () => {
    const out = await fs.mkdtemp(path.join(dir, 'batch-'));
    // asked for together: made by one run (and the same with a run going, gathered for the next one)
    const batcher = new PreviewBatcher({ concurrency: 1, maxBatch: 8 });
    const jobs = Array.from({ length: 5 }, (_, i) => ({
      input: clip,
      output: path.join(out, `preview-${i}.mp4`),
      size: { width: 320, height: 180 },
      options: { preset: 'veryfast', durationSeconds: 3, frame: i % 2 === 1 ? { path: path.join(out, `frame-${i}.png`), atSeconds: 1 } : undefined },
    }));
    await Promise.all(jobs.map((job) => batcher.encode(job)));
    const alone = path.join(dir, 'alone.mp4');
    await watermarkVideo(clip, alone, { width: 320, height: 180 }, { preset: 'veryfast', durationSeconds: 3 });
    for (const [i, job] of jobs.entries()) {
      expect(await probeVideo(job.output)).toMatchObject({ codec: 'h264', width: 320, height: 180, frames: 72 });
      // the watermark is there: the same picture as a preview made on its own (looked at in two of them)
      if (i < 2) expect(await pixels(frameAt(job.output, 2))).toEqual(await pixels(frameAt(alone, 2)));
      if (job.options.frame) expect(await pixels(job.options.frame.path)).toEqual(await pixels(frameAt(clip, 1)));
      else expect(await fs.readdir(out)).not.toContain(`frame-${i}.png`);
    }
    // the overlays drawn beside the outputs are gone
    expect((await fs.readdir(out)).filter((f) => f.includes('overlay'))).toEqual([]);
  });

  it('puts each preview\'s inputs, chain and outputs in one command', () => {
    const args = batchArguments([
      { input: 'a.mp4', overlay: 'a.png', output: 'a-preview.mp4', size: { width: 320, height: 180 }, options: { preset: 'veryfast', durationSeconds: 3, frame: { path: 'a.png', atSeconds: 1 } } },
      { input: 'b.mp4', overlay: 'b.png', output: 'b-preview.mp4', size: { width: 320, height: 180 }, options: { preset: 'veryfast', durationSeconds: 3 } },
    ]);
    expect(args.slice(0, 10)).toEqual(['-y', '-i', 'a.mp4', '-i', 'a.png', '-i', 'b.mp4', '-i', 'b.png', '-filter_complex']);
    expect(args[args.indexOf('-filter_complex') + 1]).toBe(
      '[0:v]split=2[m0][s0];[m0][1:v]overlay=0:0:format=auto,format=yuv420p[v0];[s0]trim=start=1,setpts=PTS-STARTPTS[f0];[2:v][3:v]overlay=0:0:format=auto,format=yuv420p[v1]',
    );
    expect(args.filter((a) => a === '-map')).toHaveLength(3);
  });

  it('fails only the preview whose input is bad, and gives a cancelled one up at once', async () => {
    const out = await fs.mkdtemp(path.join(dir, 'batch-bad-'));
    const bad = path.join(out, 'not-a-video.mp4');
    await fs.writeFile(bad, 'not a video');
    const batcher = new PreviewBatcher({ concurrency: 1, maxBatch: 8 });
    const job = (input: string, name: string, signal?: AbortSignal) => ({
      input,
      output: path.join(out, name),
      size: { width: 320, height: 180 },
      options: { preset: 'veryfast', durationSeconds: 3, signal },
    });
    const cancel = new AbortController();
    const first = batcher.encode(job(clip, 'first.mp4'));
    // gathered into the first's run, which fails for the bad input: each is then made alone
    const results = Promise.allSettled([batcher.encode(job(clip, 'good.mp4')), batcher.encode(job(bad, 'bad.mp4')), batcher.encode(job(clip, 'cancelled.mp4', cancel.signal))]);
    cancel.abort();
    await first;
    const [good, broken, cancelled] = await results;
    expect(good.status).toBe('fulfilled');
    expect(broken).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/ffmpeg exited/) }) });
    expect(cancelled).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ name: 'AbortError' }) });
    expect(await probeVideo(path.join(out, 'good.mp4'))).toMatchObject({ width: 320, height: 180, frames: 72 });
  });
});

describe('frameStill', () => {
  /** A 1280 x 720 landscape: a light band over a dark one, and a red square in the middle. */
  const landscape = () =>
    sharp({ create: { width: 1280, height: 720, channels: 3, background: '#d0d0d0' } })
      .composite([
        { input: { create: { width: 1280, height: 360, channels: 3, background: '#202020' } }, left: 0, top: 360 },
        { input: { create: { width: 200, height: 200, channels: 3, background: '#ff0000' } }, left: 540, top: 260 },
      ])
      .jpeg({ quality: 95 })
      .toBuffer();

  /** The mean absolute difference of two same-sized pictures' pixels, 0-255. */
  async function meanDifference(a: Buffer, b: Buffer): Promise<number> {
    const [x, y] = await Promise.all([pixels(a), pixels(b)]);
    expect(x.length).toBe(y.length);
    let sum = 0;
    for (let i = 0; i < x.length; i += 1) sum += Math.abs(x[i] - y[i]);
    return sum / x.length;
  }

  it('crops to exactly the frame', async () => {
    const still = await frameStill(await landscape(), { width: 720, height: 720 }, 'crop');
    expect(await sharp(still).metadata()).toMatchObject({ format: 'jpeg', width: 720, height: 720 });
    const centre = await sharp(await landscape()).extract({ left: 280, top: 0, width: 720, height: 720 }).png().toBuffer();
    expect(await meanDifference(still, centre)).toBeLessThan(3);
  });

  it('pads: the whole picture in the middle, over a darkened blur of itself', async () => {
    const size = { width: 1080, height: 1920 };
    const still = await frameStill(await landscape(), size, 'pad');
    expect(await sharp(still).metadata()).toMatchObject({ format: 'jpeg', width: 1080, height: 1920 });
    // the picture, scaled to the frame's width, is the middle band (1080 x 608 at top 656)
    const band = await sharp(still).extract({ left: 0, top: 656, width: 1080, height: 608 }).png().toBuffer();
    const scaled = await sharp(await landscape()).resize(1080, 608, { fit: 'fill' }).png().toBuffer();
    expect(await meanDifference(band, scaled)).toBeLessThan(3);
    // above it the fill: the picture's light band blurred and darkened (brightness 0.55, in lightness), no detail left
    const fill = await sharp(await sharp(still).extract({ left: 0, top: 100, width: 1080, height: 300 }).png().toBuffer()).stats();
    const light = 0xd0;
    for (const channel of fill.channels.slice(0, 3)) {
      expect(channel.mean).toBeGreaterThan(light * 0.3);
      expect(channel.mean).toBeLessThan(light * 0.65);
      expect(channel.stdev).toBeLessThan(10);
    }
  });
});
