/**
 * Clip workflows under load: 20 clips started at once through POST /api/video-generation/start (20 users, as a
 * user runs one clip at a time), all on ONE worker process (the real worker entry workers/main.ts, local
 * provider), a Temporal dev server of its own, the API in its own process. Measures the start call (admission
 * included), the time to each clip's completion, the total wall time and the worker's CPU time (its own plus the
 * ffmpeg processes it ran), then checks the money: before approval every user has exactly one active 4-credit
 * reservation keyed on the clip's workflow and no charge; after approving all 20 through the API, exactly one
 * 4-credit charge each; the ledger invariant holds for every user throughout.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * Env: BENCH_CLIPS (20), VIDEO_PRESET (the production default, veryfast).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { ClipJobView } from '../domain/clipGeneration';
import { PLATFORMS, VIDEO_EFFECTS } from '../domain/constants';
import { checkLedgerInvariant } from '../services/billing/credits';
import { clipWorkflowId } from '../workflows/clipGeneration';
import { callApi, projectWithRender } from './support/benchClient';
import { ROOT, withBenchDatabase, withWorkflowStack, type BenchDatabase } from './support/benchEnv';
import { median, percentile } from './support/stats';
import { figure, ratio, recordResults } from './support/results';

const CLIPS = Number(process.env.BENCH_CLIPS ?? 20);
const PRESET = process.env.VIDEO_PRESET ?? 'veryfast';
const CLK_TCK = 100;

/** A 1920 x 1080 stand-in for a render. */
async function render1080(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080" viewBox="0 0 480 270">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3d85c6"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="480" height="190" fill="url(#s)"/><rect y="190" width="480" height="80" fill="#38761d"/>
    <rect x="40" y="90" width="120" height="110" fill="#e6e0d4"/><rect x="300" y="60" width="140" height="140" fill="#990000"/>
    <rect x="330" y="90" width="30" height="30" fill="#ffd966"/><rect x="380" y="90" width="30" height="30" fill="#ffd966"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

/** utime + stime of the process, and of its children that have exited (ffmpeg runs), in seconds. */
function cpuSeconds(pid: number): { self: number; children: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14)
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]) / CLK_TCK);
  return { self: utime + stime, children: cutime + cstime };
}

interface Participant {
  userId: string;
  token: string;
  projectId: string;
  renderId: string;
  renderUrl: string;
}

interface Outcome {
  participant: Participant;
  jobId: string;
  startMs: number;
  doneMs: number;
  job: ClipJobView;
  progressMonotonic: boolean;
}

async function prepare(baseUrl: string, db: BenchDatabase, image: Buffer): Promise<Participant> {
  const user = await db.signUpUser('Clip Bench');
  const { projectId, renderId, renderUrl } = await projectWithRender(baseUrl, user.token, 'Clip bench', image);
  return { userId: user.userId, token: user.token, projectId, renderId, renderUrl };
}

async function runClip(baseUrl: string, p: Participant, index: number, t0: number): Promise<Outcome> {
  const effect = VIDEO_EFFECTS[index % VIDEO_EFFECTS.length];
  const platform = PLATFORMS[index % PLATFORMS.length];
  const started = Date.now();
  const res = await callApi<{ success: boolean; jobId?: string; error?: string }>(baseUrl, p.token, '/api/video-generation/start', {
    json: { options: { imageUrl: p.renderUrl, movement: effect, duration: 5, platform }, context: { projectId: p.projectId, renderId: p.renderId } },
  });
  if (res.status !== 200 || !res.body.jobId) throw new Error(`start answered ${res.status} ${JSON.stringify(res.body)}`);
  const startMs = Date.now() - started;
  const jobId = res.body.jobId;
  let last = -1;
  let monotonic = true;
  for (;;) {
    const status = await callApi<{ job: ClipJobView }>(baseUrl, p.token, `/api/video-generation/status/${jobId}`);
    const job = status.body.job;
    if (job.progress < last) monotonic = false;
    last = job.progress;
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') {
      return { participant: p, jobId, startMs, doneMs: Date.now() - t0, job, progressMonotonic: monotonic };
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

interface MoneyCheck {
  ok: boolean;
  problems: string[];
}

async function checkMoney(knex: Knex, outcomes: Outcome[], phase: 'pending' | 'approved'): Promise<MoneyCheck> {
  const problems: string[] = [];
  for (const o of outcomes) {
    const id = o.participant.userId;
    const invariant = await checkLedgerInvariant(knex, id);
    if (!invariant.ok) problems.push(`${id}: ledger invariant ${JSON.stringify(invariant)}`);
    const reservations = (await knex('credit_reservations').where({ workspace_id: id }).select('idempotency_key', 'status', 'amount')) as Array<{ idempotency_key: string; status: string; amount: number }>;
    const consumes = (await knex('credit_transactions').where({ workspace_id: id, transaction_type: 'consume' }).select('amount')) as Array<{ amount: number }>;
    const profile = (await knex('profiles').where({ id }).first('credits', 'reserved_credits')) as { credits: number; reserved_credits: number };
    const expected = phase === 'pending' ? { credits: 5, reserved: 4, reservation: 'active', consumes: 0 } : { credits: 1, reserved: 0, reservation: 'consumed', consumes: 1 };
    if (reservations.length !== 1 || reservations[0].idempotency_key !== clipWorkflowId(o.jobId) || reservations[0].amount !== 4 || reservations[0].status !== expected.reservation) {
      problems.push(`${id}: reservations ${JSON.stringify(reservations)}`);
    }
    if (consumes.length !== expected.consumes || consumes.some((c) => c.amount !== -4)) problems.push(`${id}: charges ${JSON.stringify(consumes)}`);
    if (profile.credits !== expected.credits || profile.reserved_credits !== expected.reserved) problems.push(`${id}: balance ${JSON.stringify(profile)}`);
  }
  return { ok: problems.length === 0, problems };
}

async function main(): Promise<void> {
  const workDir = path.join(ROOT, '.data', `bench-providers-${process.pid}`);
  fs.mkdirSync(workDir, { recursive: true });
  try {
    await withBenchDatabase({ max: 4 }, (db) =>
      withWorkflowStack(db.url, { VIDEO_PRESET: PRESET, TMPDIR: workDir }, async ({ api, worker }) => {
        const image = await render1080();
        const participants: Participant[] = [];
        for (let i = 0; i < CLIPS; i += 1) participants.push(await prepare(api.baseUrl, db, image));
        const cpuBefore = cpuSeconds(worker.child.pid as number);

        const t0 = Date.now();
        const outcomes = await Promise.all(participants.map((p, i) => runClip(api.baseUrl, p, i, t0)));
        const wallMs = Date.now() - t0;
        const cpuAfter = cpuSeconds(worker.child.pid as number);

        const failed = outcomes.filter((o) => o.job.status !== 'completed');
        const pending = await checkMoney(db.knex, outcomes, 'pending');
        for (const o of outcomes.filter((x) => x.job.status === 'completed')) {
          const approved = await callApi<{ success: boolean }>(api.baseUrl, o.participant.token, '/api/approvals/approve', { json: { approvalId: o.job.result?.approvalId } });
          if (approved.status !== 200) throw new Error(`approve answered ${approved.status} ${JSON.stringify(approved.body)}`);
        }
        const approved = await checkMoney(db.knex, outcomes, 'approved');

        const starts = outcomes.map((o) => o.startMs).sort((a, b) => a - b);
        const dones = outcomes.map((o) => o.doneMs).sort((a, b) => a - b);
        const fmt = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
        process.stdout.write(`\n${CLIPS} clip workflows started at once on one worker (local provider, x264 ${PRESET}, 5 s at 30 fps, platforms cycled over 16:9 / 9:16 / 1:1)\n`);
        process.stdout.write(`completed: ${outcomes.length - failed.length}/${outcomes.length}${failed.length ? ` (not completed: ${failed.map((f) => `${f.jobId} ${f.job.status}`).join(', ')})` : ''}\n`);
        process.stdout.write(`total wall time: ${fmt(wallMs)}  (${(wallMs / 1000 / CLIPS).toFixed(1)} s per clip)\n`);
        process.stdout.write(`start call (admission included): p50 ${median(starts)} ms, p95 ${percentile(starts, 95)} ms, max ${starts.at(-1)} ms\n`);
        process.stdout.write(`time to completed: first ${fmt(dones[0])}, p50 ${fmt(percentile(dones, 50))}, p95 ${fmt(percentile(dones, 95))}, last ${fmt(dones.at(-1) as number)}\n`);
        process.stdout.write(
          `worker CPU: ${(cpuAfter.self - cpuBefore.self).toFixed(1)} s in the worker process + ${(cpuAfter.children - cpuBefore.children).toFixed(1)} s in its ffmpeg runs ` +
            `(${((cpuAfter.self - cpuBefore.self + cpuAfter.children - cpuBefore.children) / (wallMs / 1000)).toFixed(2)} cores busy on average)\n`,
        );
        process.stdout.write(`progress never went back: ${outcomes.every((o) => o.progressMonotonic) ? 'yes' : 'NO'}\n`);
        process.stdout.write(`credits before approval (one active 4-credit reservation each, nothing charged, ledger invariant): ${pending.ok ? 'ok' : 'BROKEN'}\n`);
        process.stdout.write(`credits after approving all (one 4-credit charge each, nothing reserved, ledger invariant): ${approved.ok ? 'ok' : 'BROKEN'}\n`);
        for (const problem of [...pending.problems, ...approved.problems]) process.stdout.write(`  ${problem}\n`);
        const cpuS = cpuAfter.self - cpuBefore.self + cpuAfter.children - cpuBefore.children;
        recordResults('clipWorkflows', [
          ratio('completed_share', (outcomes.length - failed.length) / outcomes.length, 'higher', 'clips completed of those started', 1),
          ratio('ffmpeg_share_of_cpu', (cpuAfter.children - cpuBefore.children) / cpuS, 'higher', "ffmpeg's share of the worker's CPU (the rest is the worker's own overhead)"),
          figure('wall_per_clip', wallMs / 1000 / CLIPS, 's', 'lower', 'total wall time over the number of clips'),
          figure('cores_busy', cpuS / (wallMs / 1000), 'cores', 'higher', 'average cores busy during the run'),
        ]);
        if (failed.length || !pending.ok || !approved.ok || !outcomes.every((o) => o.progressMonotonic)) process.exitCode = 1;
      }),
    );
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
