/**
 * Local clip generation per effect (issue 5, item 7, first half): the provider's submit + wait beside the
 * bare ffmpeg command for the same effect on the same prepared still, in the same run.
 *
 * Provider CPU = this process's CPU during submit + wait (sharp, progress parsing) plus the CPU of every child
 * process it ran and reaped meanwhile (ffmpeg, and ffprobe when the provider uses it), from /proc/self/stat's
 * cutime + cstime; where /proc is missing, ffmpeg's own `-benchmark` figure. Bare CPU = `/usr/bin/time -f '%e %U %S'`
 * around ffmpeg (falls back to `-benchmark` when /usr/bin/time is missing).
 *
 * Env: BENCH_ASPECT (16:9 | 9:16 | 1:1, default 16:9), BENCH_PRESET (x264 preset, default veryfast as
 * in production), BENCH_SOURCE_PX (long side of the synthetic render, default 2048), BENCH_ROUNDS (3: each effect's
 * provider render and bare command run this many times, which one goes first alternating; the medians are reported,
 * since single runs of the same command differ by up to a quarter on a shared 2-core machine).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { CLIP_DURATION_SECONDS, CLIP_FPS, PLATFORM_ASPECT, VIDEO_EFFECTS, type Platform } from '../domain/constants';
import { LocalImageToVideoProvider } from '../providers/local/video';
import { clipFfmpegArgs } from '../providers/local/clipEffects';
import { FFMPEG } from '../providers/media/ffmpeg';
import { median } from './support/stats';
import type { ClipAspectRatio } from '../providers/types';
import { figure, ratio, recordResults } from './support/results';

const ASPECT = (process.env.BENCH_ASPECT ?? '16:9') as ClipAspectRatio;
const PRESET = process.env.BENCH_PRESET ?? 'veryfast';
const SOURCE_PX = Number(process.env.BENCH_SOURCE_PX ?? 2048);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PLATFORM = (Object.keys(PLATFORM_ASPECT) as Platform[]).find((p) => PLATFORM_ASPECT[p] === ASPECT) ?? 'YouTube';
const TIME = '/usr/bin/time';
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A render-like still: textured noise under a sky, a building with windows and a lawn, so x264 has detail to encode. */
async function syntheticRender(): Promise<Buffer> {
  const width = SOURCE_PX;
  const height = Math.round((SOURCE_PX * 9) / 16);
  const windows: string[] = [];
  for (let row = 0; row < 4; row += 1) {
    for (let col = 0; col < 8; col += 1) {
      windows.push(`<rect x="${30 + col * 5}%" y="${30 + row * 8}%" width="3%" height="5%" fill="#${row % 2 ? '3d5a80' : 'ffd966'}"/>`);
    }
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3d85c6"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="100%" height="70%" fill="url(#s)" fill-opacity="0.85"/><rect y="70%" width="100%" height="30%" fill="#38761d" fill-opacity="0.85"/>
    <rect x="27%" y="25%" width="46%" height="47%" fill="#e6e0d4" fill-opacity="0.9"/>${windows.join('')}</svg>`;
  return sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .composite([{ input: Buffer.from(svg) }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

interface BareRun {
  wallS: number;
  cpuS: number;
}

function runBare(args: string[]): Promise<BareRun> {
  const useTime = existsSync(TIME);
  const [binary, fullArgs] = useTime ? [TIME, ['-f', 'BENCH %e %U %S', FFMPEG, '-v', 'error', ...args]] : [FFMPEG, ['-v', 'info', '-benchmark', ...args]];
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, fullArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallS = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) return reject(new Error(`bare ffmpeg exited with ${code}: ${stderr.slice(-500)}`));
      const timed = /BENCH ([\d.]+) ([\d.]+) ([\d.]+)/.exec(stderr);
      if (timed) return resolve({ wallS, cpuS: Number(timed[2]) + Number(timed[3]) });
      const bench = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
      if (bench) return resolve({ wallS, cpuS: Number(bench[1]) + Number(bench[2]) });
      reject(new Error('no CPU time reported for the bare ffmpeg run'));
    });
  });
}

/** CPU seconds of this process's reaped children (cutime + cstime), or null without /proc. */
function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): cutime and cstime are fields 16 and 17, in clock ticks
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-clip-effects-'));
  const provider = new LocalImageToVideoProvider({ workDir, preset: PRESET, maxConcurrentRenders: 1 });
  const image = await syntheticRender();
  console.log(
    `local clip generation: ${ASPECT} (${PLATFORM}), ${CLIP_DURATION_SECONDS} s at ${CLIP_FPS} fps, x264 preset ${PRESET}, source ${SOURCE_PX} px, medians of ${ROUNDS} runs, ` +
      `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}`,
  );
  const rows: string[][] = [];
  const totals = { providerWall: 0, providerCpu: 0, bareWall: 0, bareCpu: 0 };
  try {
    for (const [index, effect] of VIDEO_EFFECTS.entries()) {
      // the provider's submit + wait, timed as two spans; the bare command runs after the submit (it reads the
      // still the submit saved), before or after the wait by turns, so a change in the machine's load falls on both alike
      const timed = async <T>(work: () => Promise<T>) => {
        const cpuBefore = process.cpuUsage();
        const childrenBefore = childrenCpuSeconds();
        const started = process.hrtime.bigint();
        const value = await work();
        const wallS = Number(process.hrtime.bigint() - started) / 1e9;
        const node = process.cpuUsage(cpuBefore);
        const childrenAfter = childrenCpuSeconds();
        return { value, wallS, nodeS: (node.user + node.system) / 1e6, childrenS: childrenBefore !== null && childrenAfter !== null ? childrenAfter - childrenBefore : null };
      };
      const runs = { providerWall: [] as number[], providerCpu: [] as number[], nodeCpu: [] as number[], bareWall: [] as number[], bareCpu: [] as number[] };
      let sizeBytes = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        const submitted = await timed(() => provider.submit({ image, effect, platform: PLATFORM, aspectRatio: ASPECT, durationSeconds: CLIP_DURATION_SECONDS }));
        const { jobId } = submitted.value;
        const bareOut = path.join(workDir, `${jobId}-bare.mp4`);
        const runBareCommand = () =>
          runBare(
            clipFfmpegArgs({
              source: path.join(workDir, jobId, 'source.jpg'),
              output: bareOut,
              effect,
              aspectRatio: ASPECT,
              durationSeconds: CLIP_DURATION_SECONDS,
              fps: CLIP_FPS,
              preset: PRESET,
            }),
          );
        const bareFirst = (index + round) % 2 === 1;
        const bareEarly = bareFirst ? await runBareCommand() : null;
        const waited = await timed(() => provider.wait(jobId));
        const bare = bareEarly ?? (await runBareCommand());
        const result = waited.value;
        const nodeCpuS = submitted.nodeS + waited.nodeS;
        const ffmpegCpu =
          submitted.childrenS !== null && waited.childrenS !== null
            ? submitted.childrenS + waited.childrenS
            : (result.stats?.encoderUserSeconds ?? 0) + (result.stats?.encoderSystemSeconds ?? 0);
        runs.providerWall.push(submitted.wallS + waited.wallS);
        runs.providerCpu.push(nodeCpuS + ffmpegCpu);
        runs.nodeCpu.push(nodeCpuS);
        runs.bareWall.push(bare.wallS);
        runs.bareCpu.push(bare.cpuS);
        sizeBytes = result.sizeBytes;

        await provider.release(jobId);
        await fs.rm(bareOut, { force: true });
      }
      const providerWall = median(runs.providerWall);
      const bareWall = median(runs.bareWall);
      totals.providerWall += providerWall;
      totals.providerCpu += median(runs.providerCpu);
      totals.bareWall += bareWall;
      totals.bareCpu += median(runs.bareCpu);
      rows.push([
        effect,
        fmt(providerWall),
        fmt(median(runs.providerCpu)),
        fmt(median(runs.nodeCpu)),
        fmt(bareWall),
        fmt(median(runs.bareCpu)),
        `${fmt((providerWall / bareWall - 1) * 100, 0)}%`,
        `${fmt(sizeBytes / 1e6)} MB`,
      ]);
    }
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
  rows.push([
    'all seven',
    fmt(totals.providerWall),
    fmt(totals.providerCpu),
    '',
    fmt(totals.bareWall),
    fmt(totals.bareCpu),
    `${fmt((totals.providerWall / totals.bareWall - 1) * 100, 0)}%`,
    '',
  ]);
  const header = ['effect', 'provider wall s', 'provider CPU s', 'of which node s', 'bare ffmpeg wall s', 'bare ffmpeg CPU s', 'wall overhead', 'clip size'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  recordResults('clipEffects', [
    ratio('bare_vs_provider_wall', totals.bareWall / totals.providerWall, 'higher', 'bare ffmpeg wall time over the local provider, all seven effects', 0.95),
    ratio('bare_vs_provider_cpu', totals.bareCpu / totals.providerCpu, 'higher', 'bare ffmpeg CPU time over the local provider (node + ffmpeg)'),
    figure('provider_wall', totals.providerWall, 's', 'lower', 'local provider wall time, all seven effects'),
  ]);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
