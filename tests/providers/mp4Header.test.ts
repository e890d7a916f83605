/**
 * A hosted clip's download is described from its MP4 header in the worker (providers/media/mp4Header.ts) instead of
 * by an ffprobe process: the same figures as ffprobe for the clips ffmpeg writes (moov at the end or at the start,
 * fractional frame rates, portrait), and null (ffprobe decides) for anything else.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { probeVideo } from '../../providers/media/ffmpeg';
import { probeMp4Header } from '../../providers/media/mp4Header';

const run = promisify(execFile);
let dir: string;

async function clip(name: string, size: string, rate: string, seconds: number, extra: string[] = []): Promise<string> {
  const file = path.join(dir, name);
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=${rate}`, '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', ...extra, file]);
  return file;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp4-header-'));
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('probeMp4Header', () => {
  it.each([
    ['moov at the end', 'end.mp4', '160x90', '30', 2, []],
    ['moov at the start (+faststart)', 'start.mp4', '1280x720', '24', 5, ['-movflags', '+faststart']],
    ['portrait at 29.97 fps', 'portrait.mp4', '720x1280', '30000/1001', 3, []],
  ])('reads what ffprobe reads: %s', async (_what, name, size, rate, seconds, extra) => {
    const file = await clip(name, size, rate, seconds, extra);
    const header = await probeMp4Header(file);
    const probe = await probeVideo(file);
    expect(header).toMatchObject({ codec: probe.codec, width: probe.width, height: probe.height, frames: probe.frames });
    expect(header!.durationSeconds).toBeCloseTo(probe.durationSeconds, 3);
    expect(header!.fps).toBeCloseTo(probe.fps, 3);
  });

  it('gives null for what is not an MP4 it can read: ffprobe decides', async () => {
    const text = path.join(dir, 'not-a-video.mp4');
    await fs.writeFile(text, 'not a video at all');
    expect(await probeMp4Header(text)).toBeNull();
    const full = await fs.readFile(await clip('whole.mp4', '160x90', '30', 1));
    const cut = path.join(dir, 'cut.mp4');
    await fs.writeFile(cut, full.subarray(0, Math.floor(full.length / 2)));
    expect(await probeMp4Header(cut)).toBeNull();
    expect(await probeMp4Header(path.join(dir, 'missing.mp4'))).toBeNull();
  });
});
