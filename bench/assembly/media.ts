/**
 * What the assembly benches share (bench/assembly.ts): clip files like generated ones, the worker's CPU from /proc, and
 * a bare ffmpeg command timed by /usr/bin/time (or ffmpeg's own -benchmark line where time(1) is missing).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { FFMPEG } from '../../providers/media/ffmpeg';
import { treeCpuSeconds } from '../soak/probes';

const TIME = '/usr/bin/time';

export interface Timed {
  wallS: number;
  cpuS: number;
}

/**
 * CPU seconds of a process started by the bench and every process below it: the worker's ffmpeg runs are started by a
 * launcher process of its own and reaped there, not by the worker, and an API's short-lived children come and go
 * (bench/soak/probes.ts treeCpuSeconds).
 */
export function processTreeCpu(pid: number): number {
  const seconds = treeCpuSeconds(pid);
  if (seconds === null) throw new Error(`process ${pid} is gone`);
  return seconds;
}

export function run(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stderr) : reject(new Error(`${binary} exited with ${code}: ${stderr.slice(-600)}`))));
  });
}

/** A clip like a generated one: moving detail at `width`x`height`, `seconds` long, H.264 at 30 fps; `index` tints it. */
export async function makeClip(file: string, index: number, width: number, height: number, seconds: number): Promise<void> {
  await run(FFMPEG, [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc2=s=${width}x${height}:r=30:d=${seconds}`,
    '-vf', `hue=h=${index * 60},noise=alls=12:allf=t`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-an', file,
  ]);
}

/** Runs ffmpeg with `args` (no -v), timing its wall and CPU. */
export async function timedFfmpeg(args: string[]): Promise<Timed> {
  const started = process.hrtime.bigint();
  if (existsSync(TIME)) {
    const stderr = await run(TIME, ['-f', 'BENCH %e %U %S', FFMPEG, '-v', 'error', ...args]);
    const m = /BENCH ([\d.]+) ([\d.]+) ([\d.]+)/.exec(stderr);
    if (!m) throw new Error('no times from /usr/bin/time');
    return { wallS: Number(process.hrtime.bigint() - started) / 1e9, cpuS: Number(m[2]) + Number(m[3]) };
  }
  const stderr = await run(FFMPEG, ['-v', 'info', '-benchmark', ...args]);
  const m = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
  if (!m) throw new Error('no -benchmark line from ffmpeg');
  return { wallS: Number(process.hrtime.bigint() - started) / 1e9, cpuS: Number(m[1]) + Number(m[2]) };
}
