/**
 * Assembly (issue 10, item 8): 5 clips assembled through the API (POST /api/video/assemble, then GET
 * /api/video/assemble?jobId= every 250 ms until completed) on the real worker (workers/main.ts, its own Temporal dev
 * server), beside the bare ffmpeg xfade command on the same 5 clip files, in the same run, rounds alternating.
 * Target: the API path at most 1.2x the bare command, in wall time and in CPU.
 *
 * The API path does what the product needs: admission, the timeline, the render with the half-size watermarked
 * preview from the same graph, a thumbnail, the compiled video row and the approval hand-off. Its CPU is the
 * worker process and its ffmpeg children (utime + stime, cutime + cstime from /proc) plus the API process; the
 * Temporal server and PostgreSQL are left out (shared infrastructure). The bare command is scale/pad, fps and
 * xfade (fade, 0.5 s, the default cut) into H.264 at the same preset and quality, timed by /usr/bin/time.
 *
 * Then, on the same stack, the full edit and its formats (bench/assembly/fullEdit.ts): title card, brand captions, logo,
 * end card and music at 1080x1920 against the bare command with the same filter graph (at most 1.2x wall), and four
 * formats from one edit against four single-format assemblies (at least 1.5x faster).
 *
 * Env: BENCH_ROUNDS (3), VIDEO_PRESET (veryfast, the production default), BENCH_CLIP_SECONDS (5, as generated
 * clips are), BENCH_ORIENTATION (landscape | portrait), BENCH_FULL_EDIT (1; 0 skips the full edit and formats).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AssemblyJobView } from '../domain/assembly';
import { fileUrl } from '../storage';
import { benchFullEdit } from './assembly/fullEdit';
import { makeClip, timedFfmpeg, processTreeCpu } from './assembly/media';
import { callApi } from './support/benchClient';
import { ROOT, withBenchDatabase, withWorkflowStack } from './support/benchEnv';
import { figure, ratio, recordResults } from './support/results';
import { median } from './support/stats';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PRESET = process.env.VIDEO_PRESET ?? 'veryfast';
const CLIP_SECONDS = Number(process.env.BENCH_CLIP_SECONDS ?? 5);
const ORIENTATION = process.env.BENCH_ORIENTATION === 'portrait' ? 'portrait' : 'landscape';
const CLIPS = 5;
const TARGET = 1.2;
const FULL_EDIT = process.env.BENCH_FULL_EDIT !== '0';

const CLIP = ORIENTATION === 'landscape' ? { w: 1280, h: 720, aspect: '16:9', platform: 'youtube' } : { w: 720, h: 1280, aspect: '9:16', platform: 'tiktok' };
const OUT = ORIENTATION === 'landscape' ? { w: 1920, h: 1080 } : { w: 1080, h: 1920 };

/** The bare command: the same inputs joined by xfade (fade 0.5 s) at the platform size, H.264 at the same preset. */
function bareArgs(inputs: string[], output: string): string[] {
  const chains = inputs.map(
    (_, i) => `[${i}:v]scale=${OUT.w}:${OUT.h}:force_original_aspect_ratio=decrease,pad=${OUT.w}:${OUT.h}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=30,format=yuv420p,settb=AVTB[c${i}]`,
  );
  let last = 'c0';
  for (let i = 1; i < inputs.length; i += 1) {
    chains.push(`[${last}][c${i}]xfade=transition=fade:duration=0.5:offset=${(i * (CLIP_SECONDS - 0.5)).toFixed(3)}[x${i}]`);
    last = `x${i}`;
  }
  return ['-y', ...inputs.flatMap((f) => ['-i', f]), '-filter_complex', chains.join(';'), '-map', `[${last}]`, '-c:v', 'libx264', '-preset', PRESET, '-crf', '21', '-pix_fmt', 'yuv420p', '-an', output];
}

function runBare(inputs: string[], output: string): Promise<{ wallS: number; cpuS: number }> {
  return timedFfmpeg(bareArgs(inputs, output));
}

async function main(): Promise<void> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-assembly-'));
  try {
    await withBenchDatabase({ max: 4 }, (db) =>
      withWorkflowStack(db.url, { VIDEO_PRESET: PRESET, TMPDIR: workDir }, async ({ api, worker, storageDir }) => {
        const user = await db.signUpUser('Assembly Bench');
        const project = await callApi<{ project: { id: string } }>(api.baseUrl, user.token, '/api/projects', { json: { name: 'Assembly bench' } });
        if (project.status !== 201) throw new Error(`POST /api/projects answered ${project.status}`);
        const projectId = project.body.project.id;

        // five clips stored and recorded as approved clips are
        const inputs: string[] = [];
        const clipIds: string[] = [];
        for (let i = 0; i < CLIPS; i += 1) {
          const objectPath = `${user.userId}/${randomUUID()}/clip.mp4`;
          const file = path.join(storageDir, 'clips', objectPath);
          await fs.mkdir(path.dirname(file), { recursive: true });
          await makeClip(file, i, CLIP.w, CLIP.h, CLIP_SECONDS);
          const size = (await fs.stat(file)).size;
          const [row] = await db.knex('clips')
            .insert({
              project_id: projectId,
              workspace_id: user.userId,
              file_url: fileUrl('clips', objectPath),
              file_name: `Bench clip ${i + 1}.mp4`,
              duration: CLIP_SECONDS,
              camera_movement: 'Zoom In',
              analysis_data: JSON.stringify({ aspectRatio: CLIP.aspect }),
              storage_bucket: 'clips',
              storage_path: objectPath,
              storage_mime: 'video/mp4',
              storage_size: size,
            })
            .returning('id');
          inputs.push(file);
          clipIds.push(row.id as string);
        }

        const workerPid = worker.child.pid as number;
        const apiPid = api.child.pid as number;
        const viaApi = async (): Promise<{ wallS: number; cpuS: number; durationS: number }> => {
          const w0 = processTreeCpu(workerPid);
          const a0 = processTreeCpu(apiPid);
          const started = process.hrtime.bigint();
          const res = await callApi<{ jobId?: string; error?: string }>(api.baseUrl, user.token, '/api/video/assemble', {
            json: { projectId, platform: CLIP.platform, contentItems: clipIds.map((id) => ({ id, type: 'clip' })), clipOrder: clipIds },
          });
          if (res.status !== 200 || !res.body.jobId) throw new Error(`assemble answered ${res.status} ${JSON.stringify(res.body)}`);
          let job: AssemblyJobView;
          for (;;) {
            job = (await callApi<{ job: AssemblyJobView }>(api.baseUrl, user.token, `/api/video/assemble?jobId=${res.body.jobId}`)).body.job;
            if (job.status !== 'pending' && job.status !== 'processing') break;
            await new Promise((r) => setTimeout(r, 250));
          }
          const wallS = Number(process.hrtime.bigint() - started) / 1e9;
          if (job.status !== 'completed') throw new Error(`assembly ended ${job.status}: ${job.error}`);
          // wait for the worker's last ffmpeg child to be reaped into cutime
          await new Promise((r) => setTimeout(r, 300));
          const w1 = processTreeCpu(workerPid);
          const cpuS = w1 - w0 + (processTreeCpu(apiPid) - a0);
          // keep the pending queue short: approve it
          const approved = await callApi(api.baseUrl, user.token, '/api/approvals/approve', { json: { approvalId: job.result?.approvalId } });
          if (approved.status !== 200) throw new Error(`approve answered ${approved.status}`);
          return { wallS, cpuS, durationS: job.result?.durationSeconds ?? 0 };
        };

        process.stdout.write(
          `\nassembly of ${CLIPS} clips (${CLIP.w}x${CLIP.h}, ${CLIP_SECONDS} s, 30 fps) into ${OUT.w}x${OUT.h} ${CLIP.platform}, x264 ${PRESET}, ` +
            `${ROUNDS} rounds alternating, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`,
        );
        const api_: Array<{ wallS: number; cpuS: number; durationS: number }> = [];
        const bare: Array<{ wallS: number; cpuS: number }> = [];
        // a warm-up assembly loads the worker's code paths and the clip files into the page cache
        await viaApi();
        for (let round = 0; round < ROUNDS; round += 1) {
          const order = round % 2 === 0 ? ['api', 'bare'] : ['bare', 'api'];
          for (const which of order) {
            if (which === 'api') api_.push(await viaApi());
            else bare.push(await runBare(inputs, path.join(workDir, `bare-${round}.mp4`)));
          }
          const a = api_.at(-1) as { wallS: number; cpuS: number };
          const b = bare.at(-1) as { wallS: number; cpuS: number };
          process.stdout.write(`round ${round + 1}: API ${a.wallS.toFixed(2)} s wall, ${a.cpuS.toFixed(2)} s CPU | bare ffmpeg ${b.wallS.toFixed(2)} s wall, ${b.cpuS.toFixed(2)} s CPU\n`);
        }
        const wallRatio = median(api_.map((r) => r.wallS)) / median(bare.map((r) => r.wallS));
        const cpuRatio = median(api_.map((r) => r.cpuS)) / median(bare.map((r) => r.cpuS));
        const expected = CLIPS * CLIP_SECONDS - (CLIPS - 1) * 0.5;
        process.stdout.write(`video length: ${api_[0].durationS.toFixed(2)} s (expected ${expected.toFixed(2)} s)\n`);
        process.stdout.write(`median API: ${median(api_.map((r) => r.wallS)).toFixed(2)} s wall, ${median(api_.map((r) => r.cpuS)).toFixed(2)} s CPU (worker + its ffmpeg + API)\n`);
        process.stdout.write(`median bare: ${median(bare.map((r) => r.wallS)).toFixed(2)} s wall, ${median(bare.map((r) => r.cpuS)).toFixed(2)} s CPU\n`);
        process.stdout.write(`API / bare: wall x${wallRatio.toFixed(2)}, CPU x${cpuRatio.toFixed(2)} (target at most x${TARGET}): ${wallRatio <= TARGET && cpuRatio <= TARGET ? 'met' : 'NOT met'}\n`);
        recordResults(`assembly_${ORIENTATION}`, [
          ratio('wall_vs_bare_ffmpeg', wallRatio, 'lower', 'assembly through the API and worker against the bare xfade command, wall time', TARGET),
          ratio('cpu_vs_bare_ffmpeg', cpuRatio, 'lower', 'assembly through the API and worker against the bare xfade command, CPU seconds', TARGET),
          figure('api_wall_median', median(api_.map((r) => r.wallS)), 's', 'lower', 'median wall time of one assembly through the API'),
          figure('bare_wall_median', median(bare.map((r) => r.wallS)), 's', 'lower', 'median wall time of the bare ffmpeg command'),
        ]);
        if (FULL_EDIT) {
          const fullEditUser = await db.signUpUser('Full Edit Bench');
          recordResults('assembly_full_edit', await benchFullEdit({ api, worker, storageDir, knex: db.knex, user: fullEditUser, workDir }));
        }
      }),
    );
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
    await fs.rm(path.join(ROOT, '.data', `bench-storage-${process.pid}`), { recursive: true, force: true }).catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
