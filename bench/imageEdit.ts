/**
 * Image edit end to end: POST /api/ai-image-simple for a 2048 px render until the item waits in the approval
 * queue (API in its own process, the real worker entry workers/main.ts, a Temporal dev server of its own, the
 * local provider), 20 runs one after another, p50 and p95; beside the same sharp pipeline called directly in
 * this process (read the source, refine, edit, upscale x2, watermarked preview, thumbnail), the two alternating
 * run by run so both see the same load. The steps of each workflow run are printed from its history. The ratio of the two
 * is what the workflow adds: Temporal round trips, storage writes, the ledger and the records. Beside it, the CPU
 * the whole machine used per timed run of each (/proc), and the worker's, Temporal server's and API's shares.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * Env: BENCH_RUNS (20), BENCH_WARMUP (2).
 */
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { imageThumbnail, readSourceImage, watermarkPreview } from '../activities/imageMedia';
import { loadConfig } from '../config/env';
import type { ImageEditResponse } from '../domain/imageEdit';
import { createProviders } from '../providers';
import { addCredits } from '../services/billing/credits';
import { callApi, projectWithRender } from './support/benchClient';
import { withBenchDatabase, withWorkflowStack } from './support/benchEnv';
import { cpuSeconds, systemCpuSeconds } from './support/procStats';
import { percentile } from './support/stats';
import { printStepTimes, workflowStepTimes } from './support/workflowSteps';
import { figure, ratio, recordResults, type BenchMeasure } from './support/results';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const PROMPT = 'a snowy winter evening with warm light in the windows';

/** A 2048 x 1536 stand-in for a render: a building under a sky, with grain so it compresses like a photo. */
async function render2048(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="1536">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6fa8dc"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="2048" height="1024" fill="url(#s)"/><rect y="1024" width="2048" height="512" fill="#6aa84f"/>
    <rect x="640" y="420" width="768" height="640" fill="#d9d2c5"/><rect x="740" y="520" width="160" height="160" fill="#3d5a80"/>
    <rect x="1148" y="520" width="160" height="160" fill="#3d5a80"/><rect x="944" y="800" width="160" height="260" fill="#7f6000"/></svg>`;
  const base = await sharp(Buffer.from(svg)).raw().toBuffer({ resolveWithObject: true });
  const grain = await sharp({ create: { width: 2048, height: 1536, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 18 } } })
    .raw()
    .toBuffer();
  const mixed = Buffer.alloc(base.data.length);
  const channels = base.info.channels;
  for (let i = 0, j = 0; i < base.data.length; i += channels, j += 3) {
    for (let c = 0; c < 3; c += 1) mixed[i + c] = Math.max(0, Math.min(255, base.data[i + c] + grain[j + c] - 128));
    if (channels === 4) mixed[i + 3] = 255;
  }
  return sharp(mixed, { raw: { width: 2048, height: 1536, channels } }).removeAlpha().jpeg({ quality: 90 }).toBuffer();
}

interface Figures {
  label: string;
  samples: number[];
}

function summary(f: Figures): { p50: number; p95: number; mean: number } {
  const sorted = [...f.samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/**
 * CPU used during the timed part of the runs, summed: the whole machine (every core and process: API, worker,
 * Temporal server, PostgreSQL, kernel) and the named processes. Off where /proc is missing.
 */
class CpuTally {
  runs = 0;
  machineSeconds = 0;
  readonly processSeconds = new Map<string, number>();
  readonly enabled = systemCpuSeconds() !== null;

  constructor(private readonly pids: Record<string, number>) {}

  /** Starts one run's window; the function it returns ends it. */
  start(): () => void {
    if (!this.enabled) return () => undefined;
    const machine0 = systemCpuSeconds() as number;
    const process0 = Object.entries(this.pids).map(([name, pid]) => [name, cpuSeconds(pid)] as const);
    return () => {
      this.runs += 1;
      this.machineSeconds += (systemCpuSeconds() as number) - machine0;
      for (const [name, before] of process0) this.processSeconds.set(name, (this.processSeconds.get(name) ?? 0) + cpuSeconds(this.pids[name]) - before);
    };
  }

  meanMs(seconds: number): number {
    return (1000 * seconds) / this.runs;
  }

  /** `whole machine N ms (name n, ...)`, means per run. */
  describe(): string {
    const parts = [...this.processSeconds].map(([name, s]) => `${name} ${this.meanMs(s).toFixed(0)}`);
    return `whole machine ${this.meanMs(this.machineSeconds).toFixed(0)} ms (${parts.join(', ')})`;
  }
}

/** One request to pending approval (timed), then the item approved outside the timing so the pending cap never stops the next run. */
async function workflowRun(baseUrl: string, token: string, renderId: string, cpu: CpuTally | null): Promise<{ ms: number; workflowId: string }> {
  const cpuDone = cpu?.start();
  const t0 = process.hrtime.bigint();
  const res = await callApi<ImageEditResponse>(baseUrl, token, '/api/ai-image-simple', {
    json: { workflow: 'ENHANCED_IMAGE_EDITING', context: { platform: 'web' }, parameters: { prompt: PROMPT, baseImage: renderId } },
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  cpuDone?.();
  if (res.status !== 200 || res.body.result?.savedImage.status !== 'pending_approval') {
    throw new Error(`POST /api/ai-image-simple answered ${res.status} ${JSON.stringify(res.body)}`);
  }
  const approved = await callApi<{ success: boolean }>(baseUrl, token, '/api/approvals/approve', { json: { approvalId: res.body.result.savedImage.approvalId } });
  if (approved.status !== 200) throw new Error(`approve answered ${approved.status} ${JSON.stringify(approved.body)}`);
  return { ms, workflowId: res.body.metadata.workflowId };
}

/** The same sharp pipeline in this process: read the source, refine, edit, upscale x2, preview and thumbnail. */
async function directRun(providers: ReturnType<typeof createProviders>, sourcePath: string, cpu: CpuTally | null): Promise<number> {
  const cpuDone = cpu?.start();
  const t0 = process.hrtime.bigint();
  const source = await readSourceImage(sourcePath);
  const refined = await providers.promptRefiner.refine({ prompt: PROMPT });
  const edited = await providers.imageEdit.edit({ image: source, prompt: refined.refinedPrompt, format: 'square', quality: 'hd' });
  const upscaled = await providers.upscale.upscale({ image: edited.image, scale: 2 });
  await Promise.all([watermarkPreview(upscaled.image), imageThumbnail(upscaled.image)]);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  cpuDone?.();
  if (upscaled.width !== 2048) throw new Error(`direct pipeline made ${upscaled.width} px`);
  return ms;
}

interface CpuTallies {
  workflow: CpuTally;
  direct: CpuTally;
}

/**
 * Both, one after the other in each round, the order alternating, so a change in the machine's load (other
 * work on a shared machine) falls on both alike. Nothing else runs meanwhile: the approval of the previous
 * item has finished, and the API and worker sit idle while the direct pipeline runs.
 */
async function benchBoth(
  baseUrl: string,
  token: string,
  renderId: string,
  sourcePath: string,
  cpu: CpuTallies,
): Promise<{ workflow: Figures & { workflowIds: string[] }; direct: Figures }> {
  const providers = createProviders({ ...loadConfig(), providerKind: 'local' });
  const workflow = { label: 'POST /api/ai-image-simple -> pending', samples: [] as number[], workflowIds: [] as string[] };
  const direct = { label: 'same sharp pipeline, direct', samples: [] as number[] };
  for (let i = 0; i < WARMUP + RUNS; i += 1) {
    const runWorkflow = async () => {
      const run = await workflowRun(baseUrl, token, renderId, i >= WARMUP ? cpu.workflow : null);
      if (i >= WARMUP) {
        workflow.samples.push(run.ms);
        workflow.workflowIds.push(run.workflowId);
      }
    };
    const runDirect = async () => {
      const ms = await directRun(providers, sourcePath, i >= WARMUP ? cpu.direct : null);
      if (i >= WARMUP) direct.samples.push(ms);
    };
    if (i % 2 === 0) {
      await runWorkflow();
      await runDirect();
    } else {
      await runDirect();
      await runWorkflow();
    }
  }
  return { workflow, direct };
}

function report(workflow: Figures, direct: Figures, cpu: CpuTallies): void {
  const w = summary(workflow);
  const d = summary(direct);
  const fmt = (n: number) => n.toFixed(1).padStart(10);
  process.stdout.write(`\nimage edit, 2048 x 1536 render, local provider, square hd, upscale x2: ${RUNS} runs each (after ${WARMUP} warm-up)\n`);
  process.stdout.write(`${'target'.padEnd(40)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'mean ms'.padStart(10)}\n`);
  for (const [f, s] of [
    [workflow, w],
    [direct, d],
  ] as const) {
    process.stdout.write(`${f.label.padEnd(40)}${fmt(s.p50)}${fmt(s.p95)}${fmt(s.mean)}\n`);
  }
  // each round's two runs are adjacent in time: their ratio and difference see the same machine
  const pairedRatios = direct.samples.map((ms, i) => ms / workflow.samples[i]).sort((a, b) => a - b);
  const pairedOverheads = workflow.samples.map((ms, i) => ms - direct.samples[i]).sort((a, b) => a - b);
  const pairedRatio = percentile(pairedRatios, 50);
  process.stdout.write(`workflow / direct: p50 x${(w.p50 / d.p50).toFixed(2)}, p95 x${(w.p95 / d.p95).toFixed(2)} (overhead ${(w.p50 - d.p50).toFixed(0)} ms at p50)\n`);
  process.stdout.write(`round by round: median direct / workflow ${pairedRatio.toFixed(3)}, median overhead ${percentile(pairedOverheads, 50).toFixed(0)} ms\n`);
  const cpuFigures: BenchMeasure[] = [];
  if (cpu.workflow.enabled && cpu.workflow.runs > 0 && cpu.direct.runs > 0) {
    // where the overhead is CPU work rather than waiting: on a machine this small every process shares the cores
    const cpuW = cpu.workflow.meanMs(cpu.workflow.machineSeconds);
    const cpuD = cpu.direct.meanMs(cpu.direct.machineSeconds);
    process.stdout.write(`CPU per run, means over the timed runs, ${os.availableParallelism()} cores (/proc):\n`);
    process.stdout.write(`  workflow: ${cpu.workflow.describe()}\n  direct:   ${cpu.direct.describe()}\n`);
    process.stdout.write(`  the workflow run uses ${(cpuW - cpuD).toFixed(0)} ms more CPU than the direct pipeline\n`);
    cpuFigures.push(
      figure('cpu_workflow_per_run', cpuW, 'ms', 'lower', 'CPU of the whole machine during one API-to-pending run (mean)'),
      figure('cpu_direct_per_run', cpuD, 'ms', 'lower', 'CPU of the whole machine during one direct pipeline run (mean)'),
      figure('cpu_overhead_per_run', cpuW - cpuD, 'ms', 'lower', 'the difference: CPU the workflow run adds (Temporal, worker, API, PostgreSQL)'),
    );
  }
  recordResults('imageEdit', [
    ratio('direct_vs_workflow_p50', d.p50 / w.p50, 'higher', 'direct sharp pipeline p50 over the API-to-pending-approval p50 (1 = no overhead)', 0.9),
    ratio('direct_vs_workflow_p95', d.p95 / w.p95, 'higher', 'the same at p95'),
    ratio('direct_vs_workflow_paired', pairedRatio, 'higher', 'median over the rounds of direct / workflow, the two runs of a round adjacent in time'),
    figure('overhead_paired', percentile(pairedOverheads, 50), 'ms', 'lower', 'median over the rounds of workflow - direct'),
    figure('workflow_p50', w.p50, 'ms', 'lower', 'API to pending approval, p50'),
    figure('direct_p50', d.p50, 'ms', 'lower', 'direct sharp pipeline, p50'),
    ...cpuFigures,
  ]);
}

async function main(): Promise<void> {
  await withBenchDatabase({ max: 2 }, (db) =>
    withWorkflowStack(db.url, {}, async ({ api, worker, storageDir, temporalAddress, temporalPid }) => {
      const user = await db.signUpUser('Bench User');
      await addCredits(db.knex, { workspaceId: user.userId, amount: WARMUP + RUNS, type: 'add', description: 'bench', idempotencyKey: `bench:${user.userId}` });
      const { renderId } = await projectWithRender(api.baseUrl, user.token, 'Bench', await render2048());
      const renderRow = (await db.knex('renders').where({ id: renderId }).first('storage_path', 'width', 'height', 'file_size')) as {
        storage_path: string;
        width: number;
        height: number;
        file_size: string;
      };
      process.stdout.write(`render: ${renderRow.width} x ${renderRow.height}, ${(Number(renderRow.file_size) / 1048576).toFixed(2)} MB JPEG\n`);

      const cpu: CpuTallies = {
        workflow: new CpuTally({ worker: worker.child.pid as number, 'Temporal server': temporalPid, API: api.child.pid as number }),
        direct: new CpuTally({ 'this process': process.pid }),
      };
      const { workflow, direct } = await benchBoth(api.baseUrl, user.token, renderId, path.join(storageDir, 'renders', renderRow.storage_path), cpu);
      // after the timed runs: the steps of each run from its history (the request's own time is what is timed)
      const steps = await workflowStepTimes(temporalAddress, workflow.workflowIds);
      if (steps) printStepTimes('image edit workflow', steps);
      report(workflow, direct, cpu);
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
