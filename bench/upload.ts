/**
 * A 150 MB render upload through POST /api/upload/renders, beside a plain streamed copy of the same file on the
 * same disk in the same run, with the API server's peak RSS growth during the upload.
 * Targets (issue 3): upload throughput at least half the copy's, RSS growth under 100 MB.
 *
 * Database and API process: bench/support/benchEnv.ts; the API gets its own STORAGE_DIR, and its RSS is its own.
 * Env: BENCH_UPLOAD_RUNS (3): the figures are the median run. Like the copy, the upload is warmed with one run of the
 * full file first, outside the times: the first 150 MB through a fresh API process took 0.66-0.92 s against
 * 0.36-0.59 s for the next ones (2026-11-26). Its RSS growth counts: that run is where the server grows most.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import sharp from 'sharp';
import { ROOT, startBenchApi, withBenchDatabase, type BenchApi } from './support/benchEnv';
import { serverPid } from './support/procStats';
import { BENCH_RENDER_SIDE, makeBenchRender, renderUploadRequest } from './support/renderUpload';
import { median } from './support/stats';
import { figure, ratio, recordResults } from './support/results';

const WORK_DIR = path.join(ROOT, '.data', 'bench-upload');
const RUNS = Number(process.env.BENCH_UPLOAD_RUNS ?? 3);

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]);
}

interface UploadFigures {
  seconds: number;
  rssBeforeMb: number;
  peakGrowthMb: number;
  status: number;
  body: string;
}

async function uploadOnce(baseUrl: string, token: string, projectId: string, file: string, size: number, pid: number): Promise<UploadFigures> {
  const rssBeforeMb = statusKb(pid, 'VmRSS') / 1024;
  // reset the peak so VmHWM afterwards is this upload's peak
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  let sampledPeakKb = statusKb(pid, 'VmRSS');
  const sampler = setInterval(() => {
    try {
      sampledPeakKb = Math.max(sampledPeakKb, statusKb(pid, 'VmRSS'));
    } catch {
      // the process is gone: the request fails below
    }
  }, 10);
  const started = process.hrtime.bigint();
  const res = await fetch(`${baseUrl}/api/upload/renders`, renderUploadRequest(token, projectId, file, size));
  const text = await res.text();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  const peakKb = Math.max(sampledPeakKb, statusKb(pid, 'VmHWM'));
  return { seconds, rssBeforeMb, peakGrowthMb: peakKb / 1024 - rssBeforeMb, status: res.status, body: text };
}

type CopyKind = 'stream' | 'stream-1mb' | 'copyFile';

/** A plain copy of the same bytes: node streams with default buffers, with the server's 1 MB windows, or the kernel's copy. */
async function copyOnce(file: string, dir: string, kind: CopyKind): Promise<number> {
  const target = path.join(dir, `copy-${randomUUID()}.png`);
  const started = process.hrtime.bigint();
  if (kind === 'copyFile') await fsp.copyFile(file, target, fs.constants.COPYFILE_EXCL);
  else {
    const window = kind === 'stream-1mb' ? { highWaterMark: 1024 * 1024 } : {};
    await pipeline(fs.createReadStream(file, window), fs.createWriteStream(target, { flags: 'wx', ...window }));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await fsp.rm(target);
  return seconds;
}

async function main(): Promise<void> {
  fs.mkdirSync(WORK_DIR, { recursive: true });
  const storageDir = path.join(WORK_DIR, `storage-${process.pid}`);
  const copyDir = path.join(storageDir, 'copies');
  fs.mkdirSync(copyDir, { recursive: true });
  const image = path.join(WORK_DIR, `noise-${BENCH_RENDER_SIDE}.png`);
  const size = await makeBenchRender(image);
  const mb = size / 1e6;

  try {
    await withBenchDatabase({ max: 2 }, async (db) => {
      const user = await db.signUpUser('Bench Uploader');
      const api: BenchApi = await startBenchApi(db.url, { STORAGE_DIR: storageDir });
      try {
        const pid = serverPid(api.child.pid as number);

        // warm up: the page cache for both sides, and the server (its first upload loads sharp and libvips' threads)
        await copyOnce(image, copyDir, 'stream');
        const [warmProject] = await db.knex('projects').insert({ workspace_id: user.userId, name: 'Bench warm-up' }).returning('id');
        const warm = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 90, g: 120, b: 150 } } }).png().toBuffer();
        const warmFile = path.join(WORK_DIR, 'warm.png');
        fs.writeFileSync(warmFile, warm);
        const warmUp = await uploadOnce(api.baseUrl, user.token, warmProject.id, warmFile, warm.length, pid);
        if (warmUp.status !== 200) throw new Error(`warm-up upload answered ${warmUp.status}: ${warmUp.body.slice(0, 300)}`);

        const uploads: UploadFigures[] = [];
        const copies: Record<CopyKind, number[]> = { stream: [], 'stream-1mb': [], copyFile: [] };
        // run -1: the full-size warm-up (the copy had its own above), timed but not in the median
        let fullWarmUp: UploadFigures | null = null;
        for (let run = -1; run < RUNS; run++) {
          // a new project per run: the same bytes in one project would be answered as a duplicate without being stored
          const [project] = await db.knex('projects').insert({ workspace_id: user.userId, name: `Bench ${run}` }).returning('id');
          const up = await uploadOnce(api.baseUrl, user.token, project.id, image, size, pid);
          if (up.status !== 200) throw new Error(`upload answered ${up.status}: ${up.body.slice(0, 300)}`);
          const answer = JSON.parse(up.body) as { duplicate: boolean; processingInfo: { width: number; fileSize: number } };
          if (answer.duplicate || answer.processingInfo.fileSize !== size || answer.processingInfo.width !== BENCH_RENDER_SIDE) throw new Error(`unexpected answer ${up.body.slice(0, 300)}`);
          if (run < 0) {
            fullWarmUp = up;
            continue;
          }
          uploads.push(up);
          for (const kind of Object.keys(copies) as CopyKind[]) copies[kind].push(await copyOnce(image, copyDir, kind));
        }
        if (!fullWarmUp) throw new Error('no warm-up upload');

        const upSeconds = median(uploads.map((u) => u.seconds));
        const growth = Math.max(fullWarmUp.peakGrowthMb, ...uploads.map((u) => u.peakGrowthMb));
        const fmt = (n: number, d = 1) => n.toFixed(d).padStart(10);
        const row = (label: string, seconds: number, ratio: boolean) =>
          process.stdout.write(`${label.padEnd(50)}${fmt(seconds, 3)}${fmt(mb / seconds)}${ratio ? `${((100 * seconds) / upSeconds).toFixed(0).padStart(9)}%` : ''}\n`);
        process.stdout.write(`\nrender upload: ${mb.toFixed(1)} MB PNG (${BENCH_RENDER_SIDE}x${BENCH_RENDER_SIDE}), median of ${RUNS} runs\n`);
        process.stdout.write(`${'target'.padEnd(50)}${'seconds'.padStart(10)}${'MB/s'.padStart(10)}${'upload/it'.padStart(10)}\n`);
        row('POST /api/upload/renders (stream, sha256, row)', upSeconds, false);
        row('plain streamed copy (node streams, default buffers)', median(copies.stream), true);
        row('plain streamed copy (1 MB buffers, as the server)', median(copies['stream-1mb']), true);
        row('fs.copyFile (kernel copy)', median(copies.copyFile), true);
        recordResults('upload', [
          ratio('upload_vs_stream', median(copies.stream) / upSeconds, 'higher', 'upload throughput over a plain streamed copy of the same bytes', 0.8),
          ratio('upload_vs_copyfile', median(copies.copyFile) / upSeconds, 'higher', 'upload throughput over fs.copyFile'),
          figure('upload_mb_s', mb / upSeconds, 'MB/s', 'higher', 'upload throughput'),
          figure('rss_growth', growth, 'MB', 'lower', 'server peak RSS growth during an upload', 100),
        ]);
        process.stdout.write(
          `server RSS ${fullWarmUp.rssBeforeMb.toFixed(0)} MB before, peak growth during an upload ${growth.toFixed(1)} MB (target: under 100 MB); ` +
            `full-size warm-up ${fullWarmUp.seconds.toFixed(2)} s/+${fullWarmUp.peakGrowthMb.toFixed(0)} MB, runs: ${uploads.map((u) => `${u.seconds.toFixed(2)} s/+${u.peakGrowthMb.toFixed(0)} MB`).join(', ')}\n`,
        );
      } finally {
        await api.stop();
      }
    });
  } finally {
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
