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
