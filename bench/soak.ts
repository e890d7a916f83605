/**
 * The soak benchmark (issue 28, item 2; `npm run bench -- soak [--duration 10m] [--rate N] [--vus N] [--users N]
 * [--warmup 2m] [--chaos]`): the scaled-out topology (2 APIs behind haproxy, 2 workers, S3 on SeaweedFS) on a
 * PostgreSQL and Temporal dev server of its own (bench/soak/topology.ts), users seeded through the API with credits
 * granted by an admin (bench/soak/seed.ts), then k6 virtual users doing what real users do, in proportion
 * (bench/soak/k6/soak.js), at a constant arrival rate, while every seeded user keeps an event stream open
 * (bench/soak/eventWatchers.ts). With --chaos, bench/soak/chaos.ts kills and restarts processes meanwhile.
 *
 * After the run: in-flight jobs are given time to finish, then the report: per route group p50/p95/p99 and errors,
 * jobs by kind and outcome, SSE delivery lag, PostgreSQL connections and slow statements, Temporal schedule-to-start
 * latency, each process's RSS and heap at the end of warm-up and at the end, the machine's CPU use, and the
 * invariant checker's verdict (services/platform/invariants.ts, also `npm run check`). Targets are printed met or
 * MISSED; the figures go to `--json` like every bench. The whole report is also written to .data/soak/report.json,
 * the request lines to .data/soak/requests.jsonl.
 *
 * The default rate (unless --rate or BENCH_SOAK_RATE says otherwise; up to 100 virtual users) is what this machine
 * sustains, derived from measured capacity (bench/soak/sustainableRate.ts): the stack's CPU per user action, from this
 * machine's last soak without faults or docs/benchmarks.md, against a little over half of the cores. The report marks
 * the run MISSED when the jobs waiting kept growing through the measured window all the same.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { connectDatabase } from '../db/connection';
import { imageEditWorkflowId } from '../domain/imageEdit';
import { checkInvariants, type InvariantReport } from '../services/platform/invariants';
import { createStorage } from '../storage';
import { figure, recordResults, type BenchMeasure } from './support/results';
import { watchEvents, type EventWatchReport } from './soak/eventWatchers';
import { CpuMeter, treeCpuSeconds, loggedSlowStatements, readMemory, resetStatements, sampleConnections, scheduleToStartNames, scrapeWorkers, slowStatements, type ConnectionSample, type MemoryReading } from './soak/probes';
import {
  backlogTrend,
  difference,
  evaluateTargets,
  faultImpacts,
  formatGroups,
  formatTargets,
  histogram,
  parseRequestLines,
  READ_P99_TARGET_MS,
  summarizeRequests,
  type BacklogSample,
  type FaultRecord,
  type JobOutcomes,
  type ProcessMemory,
} from './soak/report';
import { parseSoakArgs } from './soak/options';
import { readMeasuredCapacity, saveMeasuredCapacity, sustainableRate } from './soak/sustainableRate';
import { seedUsers, writeSoakImages } from './soak/seed';
import { ROOT, startSoakTopology, type SoakTopology } from './soak/topology';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../scripts/lib/tools') as { ensureK6(): string };
// the AWS SDK's notice about Node versions to come (the invariant checker's S3 client) says nothing about this run
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function log(line: string): void {
  process.stdout.write(`[soak] ${line}\n`);
}

/** CPU seconds of the whole stack: scaleOut.js and its children (APIs, workers and their ffmpeg, haproxy, SeaweedFS), PostgreSQL, Temporal. */
function stackCpu(topology: SoakTopology): number | null {
  const { stack, postgres, temporal } = topology.servicePids();
  const parts = [treeCpuSeconds(stack), treeCpuSeconds(postgres), treeCpuSeconds(temporal)];
  return parts.some((p) => p === null) ? null : parts.reduce((a, b) => a! + b!, 0);
}

interface ChaosModule {
  startChaos(input: { topology: SoakTopology; log: (line: string) => void; random: () => number; durationMs?: number }): { stop(): Promise<Array<FaultRecord & { detail?: string }>> };
}

/** The chaos mode (helper module bench/soak/chaos.ts), when it is there. */
async function loadChaos(): Promise<ChaosModule | null> {
  const file = path.join(__dirname, 'soak', 'chaos.ts');
  if (!fs.existsSync(file)) return null;
  return (await import(file)) as ChaosModule;
}

/** Jobs made since `since`, by kind and state, and the admitted ones that have no row or did not finish. */
async function jobOutcomes(knex: ReturnType<typeof connectDatabase>, since: Date, admitted: ReadonlyArray<{ kind: string; id: string }>): Promise<JobOutcomes> {
  const tables: Array<[string, string]> = [
    ['clip', 'video_generation_jobs'],
    ['image-edit', 'ai_image_edits'],
    ['assembly', 'assembly_jobs'],
    ['draft', 'draft_jobs'],
  ];
  const byKind: JobOutcomes['byKind'] = [];
  for (const [kind, table] of tables) {
    const rows = (await knex(table).where('created_at', '>=', since).select('status').count({ n: '*' }).groupBy('status')) as Array<{ status: string; n: string }>;
    const of = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
    const started = rows.reduce((n, r) => n + Number(r.n), 0);
    byKind.push({ kind, started, completed: of('completed'), failed: of('failed'), cancelled: of('cancelled'), running: of('pending') + of('processing') });
  }
  const notTerminal: string[] = [];
  const missingRows: string[] = [];
  for (const job of admitted) {
    const row =
      job.kind === 'clip'
        ? await knex('video_generation_jobs').where({ id: job.id }).first('status')
        : job.kind === 'assembly'
          ? await knex('assembly_jobs').where({ id: job.id }).first('status')
          : await knex('ai_image_edits').where({ workflow_id: imageEditWorkflowId(job.id) }).first('status');
    if (!row) missingRows.push(`${job.kind}:${job.id}`);
    else if (row.status === 'pending' || row.status === 'processing') notTerminal.push(`${job.kind}:${job.id} (${row.status})`);
  }
  return { byKind, notTerminal, missingRows, severalTerminalStates: [] };
}

async function runningJobs(knex: ReturnType<typeof connectDatabase>): Promise<number> {
  let n = 0;
  for (const table of ['video_generation_jobs', 'ai_image_edits', 'assembly_jobs', 'draft_jobs']) {
    const [{ count }] = (await knex(table).whereIn('status', ['pending', 'processing']).count({ count: '*' })) as Array<{ count: string }>;
    n += Number(count);
  }
  return n;
}

function runK6(k6: string, env: Record<string, string>, consoleFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(k6, ['run', '--no-usage-report', '--quiet', '--log-format', 'raw', '--console-output', consoleFile, path.join(__dirname, 'soak', 'k6', 'soak.js')], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const capacity = readMeasuredCapacity(ROOT);
  const options = parseSoakArgs(process.argv.slice(2), process.env, sustainableRate(capacity));
  const k6 = tools.ensureK6();
  const rateSource = process.argv.some((a) => a.startsWith('--rate')) || process.env.BENCH_SOAK_RATE ? 'as asked' : capacity ? `what this machine sustains: ${capacity.stackCpuSPerAction} CPU-s per action from ${capacity.source}` : 'no capacity measured yet';
  log(`${options.durationS}s at ${options.rate} user actions/s (${rateSource}; up to ${options.vus} virtual users, ${options.users} seeded users), warm-up ${options.warmupS}s${options.chaos ? ', with chaos' : ''}`);
  const loadBefore = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const topology = await startSoakTopology({ log });
  const knex = connectDatabase(topology.databaseUrl, { min: 0, max: 3 });
  let connection: Connection | null = null;
  try {
    const runId = Date.now().toString(36);
    const images = await writeSoakImages(path.join(topology.dataDir, 'images'), 16);
    log(`seeding ${options.users} users (credits through the admin endpoint, 2 projects with 2 renders each)`);
    const { users } = await seedUsers({ baseUrl: topology.baseUrl, knex, users: options.users, projectsPerUser: 2, rendersPerProject: 2, creditsPerUser: 5000, images, runId, log });
    const probe = (await seedUsers({ baseUrl: topology.baseUrl, knex, users: 1, projectsPerUser: 1, rendersPerProject: 0, creditsPerUser: 10, images, runId: `${runId}-probe`, log: () => undefined })).users[0];
    const usersFile = path.join(topology.dataDir, 'users.json');
    fs.writeFileSync(usersFile, JSON.stringify(users.map(({ token: _token, ...u }) => u)));
    const imagesFile = path.join(topology.dataDir, 'images.json');
    fs.writeFileSync(imagesFile, JSON.stringify(images));
    const requestsFile = path.join(topology.dataDir, 'requests.jsonl');
    const summaryFile = path.join(topology.dataDir, 'k6-summary.json');

    const watchers = watchEvents(
      topology.baseUrl,
      users.map((u) => u.token),
      probe.token,
    );
    watchers.startProbe({ token: probe.token, projectId: probe.projects[0].id, image: fs.readFileSync(images[0]) });

    const chaosModule = options.chaos ? await loadChaos() : null;
    if (options.chaos && !chaosModule) log('--chaos: bench/soak/chaos.ts is not there yet; running without faults');
    const chaos = chaosModule ? chaosModule.startChaos({ topology, log, random: Math.random, durationMs: options.durationS * 1000 }) : null;

    const cpu = new CpuMeter();
    const cpuSamples: Array<{ at: number; busy: number }> = [];
    const connections: ConnectionSample[] = [];
    const backlog: BacklogSample[] = [];
    const startedAt = new Date();
    const warmupEnd = startedAt.getTime() + options.warmupS * 1000;
    let warm: { at: number; memory: MemoryReading[]; cpu: Map<string, number | null>; stackCpu: number | null; workers: Awaited<ReturnType<typeof scrapeWorkers>> } | null = null;
    const sampler = setInterval(() => {
      const busy = cpu.read();
      if (busy !== null && Date.now() >= warmupEnd) cpuSamples.push({ at: Date.now(), busy });
      void sampleConnections(knex)
        .then((s) => connections.push(s))
        .catch(() => undefined);
      const at = Date.now();
      void runningJobs(knex)
        .then((waiting) => backlog.push({ at, waiting }))
        .catch(() => undefined);
    }, 10_000);
    const warmupTimer = setTimeout(() => {
      void (async () => {
        const processes = topology.processes();
        warm = {
          at: Date.now(),
          stackCpu: stackCpu(topology),
          memory: await readMemory(topology),
          cpu: new Map(processes.map((p) => [p.name, treeCpuSeconds(p.pid)])),
          workers: await scrapeWorkers(processes),
        };
        await resetStatements(knex);
        log('warm-up over: memory, CPU and worker metrics read; measuring from here');
      })();
    }, options.warmupS * 1000);
    // a reading halfway through the measured window: whether a process that grew kept growing or levelled off
    let midMemory: MemoryReading[] = [];
    const midTimer = setTimeout(() => {
      void readMemory(topology).then((m) => (midMemory = m));
    }, (options.warmupS + (options.durationS - options.warmupS) / 2) * 1000);

    log(`k6: ${options.rate}/s for ${options.durationS}s (request lines in ${path.relative(ROOT, requestsFile)})`);
    const k6Code = await runK6(
      k6,
      {
        SOAK_BASE_URL: topology.baseUrl,
        SOAK_USERS_FILE: usersFile,
        SOAK_IMAGES_FILE: imagesFile,
        SOAK_RATE: String(options.rate),
        SOAK_VUS: String(options.vus),
        SOAK_DURATION: `${options.durationS}s`,
        SOAK_ACCESS_CODE: topology.storageEnv.ENHANCE_ACCESS_CODE ?? '',
        SOAK_SUMMARY_FILE: summaryFile,
      },
      requestsFile,
    );
    clearTimeout(warmupTimer);
    clearTimeout(midTimer);
    clearInterval(sampler);
    const endedAt = Date.now();
    const endProcesses = topology.processes();
    const endStackCpu = stackCpu(topology);
    const endMemory = await readMemory(topology);
    const endCpu = new Map(endProcesses.map((p) => [p.name, treeCpuSeconds(p.pid)]));
    const endWorkers = await scrapeWorkers(endProcesses);
    const slow = await slowStatements(knex);
    const faults = chaos ? await chaos.stop() : [];
    if (k6Code !== 0) log(`k6 exited with ${k6Code}`);
    if (!fs.existsSync(requestsFile)) throw new Error(`k6 wrote no request lines (exit ${k6Code}); see its output above`);

    // In-flight work settles before it is judged: job rows terminal, every admitted job with its row, and no run left
    // open by a backlog of workflow tasks (an overloaded machine queues them for minutes). Up to 5 minutes; what is
    // still unsettled then is reported as it is.
    const lines = parseRequestLines(fs.readFileSync(requestsFile, 'utf8'));
    const requests = summarizeRequests(lines, warmupEnd, faults);
    let invariants: InvariantReport | null = null;
    let jobs: JobOutcomes = await jobOutcomes(knex, startedAt, requests.admittedJobs);
    const drainStarted = Date.now();
    try {
      const config = loadConfig({ ...process.env, ...topology.env, ...topology.storageEnv, DATABASE_URL: topology.databaseUrl, TEMPORAL_ADDRESS: topology.temporalAddress });
      connection = await Connection.connect({ address: topology.temporalAddress, connectTimeout: '10s' });
      const checkDeps = { knex, storage: createStorage(config).objects, temporal: new Client({ connection, namespace: config.temporalNamespace }) };
      for (let round = 0; ; round++) {
        const running = await runningJobs(knex);
        jobs = await jobOutcomes(knex, startedAt, requests.admittedJobs);
        const unsettled = running + jobs.missingRows.length + jobs.notTerminal.length;
        if (unsettled === 0) {
          invariants = await checkInvariants(checkDeps, { graceMs: 10_000 });
          if (invariants.ok || Date.now() - drainStarted > 300_000) break;
          if (round % 4 === 0) log(`the checker still sees ${invariants.workflows.openForFinishedJobs.length} open runs of finished jobs, ${invariants.storage.objectsWithoutRow.length} objects without a row; waiting`);
        } else if (Date.now() - drainStarted > 300_000) {
          invariants = await checkInvariants(checkDeps, { graceMs: 10_000 });
          break;
        } else if (round % 4 === 0) log(`waiting for ${running} running jobs and ${jobs.missingRows.length} admitted jobs without their row`);
        await new Promise((resolve) => setTimeout(resolve, 5000));
      }
    } catch (err) {
      log(`the invariant checker could not run: ${(err as Error).message}`);
    }
    const drainS = (Date.now() - drainStarted) / 1000;
    const events: EventWatchReport = await watchers.stop();
    jobs.severalTerminalStates = events.severalTerminalStates;

    const warmMemory: MemoryReading[] = warm ? (warm as { memory: MemoryReading[] }).memory : [];
    // a process the chaos mode killed (even before warm-up ended) was young at one reading: its growth says nothing
    const killed = new Set(faults.filter((f) => f.kind === 'kill-api' || f.kind === 'kill-worker').map((f) => f.target));
    const memory: ProcessMemory[] = endMemory.map((end) => {
      const before = warmMemory.find((w) => w.name === end.name);
      return { name: end.name, rssWarm: before?.rssMb ?? null, rssEnd: end.rssMb, heapWarm: before?.heapMb ?? null, heapEnd: end.heapMb, noteWarm: before?.note, noteEnd: end.note, restarted: (before !== undefined && before.pid !== end.pid) || killed.has(end.name) };
    });
    const backlogSeen = backlogTrend(backlog, warmupEnd);
    const targets = evaluateTargets({ requests, jobs, invariants, memory, backlog: backlogSeen });

    // Temporal schedule-to-start over the measured window (end scrape minus the warm-up scrape)
    const temporalWindow = warm ? difference(endWorkers.temporal, (warm as { workers: { temporal: typeof endWorkers.temporal } }).workers.temporal) : endWorkers.temporal;
    const scheduleToStart = scheduleToStartNames(endWorkers.temporal).map((name) => ({ name, stats: histogram(temporalWindow, name) }));
    const measuredS = (endedAt - Math.max(warmupEnd, startedAt.getTime())) / 1000;
    const warmState = warm as { at: number; cpu: Map<string, number | null>; stackCpu: number | null } | null;
    const cpuByProcess = endProcesses.map((p) => {
      const before = warmState?.cpu.get(p.name) ?? null;
      const after = endCpu.get(p.name) ?? null;
      return { name: p.name, kind: p.kind, cores: before !== null && after !== null && after >= before && measuredS > 0 ? (after - before) / measuredS : null };
    });
    const stackCores = warmState && warmState.stackCpu !== null && endStackCpu !== null ? (endStackCpu - warmState.stackCpu) / ((endedAt - warmState.at) / 1000) : null;
    const machineBusy = cpuSamples.length ? cpuSamples.reduce((s, c) => s + c.busy, 0) / cpuSamples.length : null;
    const peakConnections = connections.reduce((max, c) => Math.max(max, c.total), 0);
    const completedPerMinute = jobs.byKind.reduce((n, k) => n + k.completed, 0) / ((endedAt - startedAt.getTime()) / 60_000);
    const impacts = faultImpacts(lines, faults);

    // what one unit of work costs: the sizing rule in docs/benchmarks.md is built from these
    const k6Summary = readK6Summary(summaryFile);
    const totalS = (endedAt - startedAt.getTime()) / 1000;
    const measuredShare = totalS > 0 ? measuredS / totalS : 0;
    const sumCores = (kind: 'api' | 'worker') => cpuByProcess.filter((c) => c.kind === kind && c.cores !== null).reduce((n, c) => n + c.cores!, 0);
    const measuredRequests = requests.throughput * measuredS;
    const apiCpuMsPerRequest = measuredRequests > 0 ? (sumCores('api') * measuredS * 1000) / measuredRequests : null;
    const jobsCompleted = jobs.byKind.reduce((n, k) => n + k.completed, 0);
    const workerCpuSPerJob = jobsCompleted > 0 ? (sumCores('worker') * measuredS) / (jobsCompleted * measuredShare) : null;
    const actionsPerS = k6Summary.iterations !== null ? k6Summary.iterations / options.durationS : null;
    const stackCpuSPerAction = stackCores !== null && actionsPerS ? stackCores / actionsPerS : null;

    // ---- the report
    const out: string[] = [];
    out.push(`\nSoak: ${options.durationS}s at ${options.rate} actions/s, ${options.users} users, 2 APIs + 2 workers behind haproxy; machine load before start ${loadBefore}`);
    out.push(`measured after a ${options.warmupS}s warm-up: ${requests.throughput.toFixed(1)} requests/s; the stack used ${stackCores === null ? 'n/a' : `${stackCores.toFixed(2)} cores (${((stackCores / 2) * 100).toFixed(0)} % of 2)`}, the whole machine ${machineBusy === null ? 'n/a' : `${machineBusy.toFixed(2)} cores (${((machineBusy / 2) * 100).toFixed(0)} %; the rest is other work on the machine and k6)`}`);
    out.push(
      `user actions: ${k6Summary.iterations ?? 'n/a'} done (${actionsPerS === null ? 'n/a' : actionsPerS.toFixed(2)}/s), ${k6Summary.dropped ?? 0} dropped by k6 for want of a free virtual user; per unit: API ${fmtNum(apiCpuMsPerRequest, 1)} ms CPU per request, worker ${fmtNum(workerCpuSPerJob, 2)} s CPU per completed job (ffmpeg included), whole stack ${fmtNum(stackCpuSPerAction, 3)} s CPU per user action`,
    );
    out.push('\nRoutes (ms; errors over the whole run):');
    out.push(formatGroups(requests.groups));
    out.push(`  reads (GET/HEAD): ${requests.reads.requests} requests, p50 ${requests.reads.p50.toFixed(0)} / p95 ${requests.reads.p95.toFixed(0)} / p99 ${requests.reads.p99.toFixed(0)} ms`);
    out.push(`  slowest read routes by p99: ${requests.slowestReads.map((r) => `${r.route} ${r.p99.toFixed(0)} ms`).join('; ')}`);
    if (requests.unexpected.length) out.push(`  not 2xx: ${requests.unexpected.slice(0, 10).map((u) => `${u.route} ${u.status}${u.code ? ` ${u.code}` : ''} x${u.count}`).join('; ')}`);
    out.push(`\nJobs (rows made during the run; in-flight work settled for ${drainS.toFixed(0)} s after k6 ended):`);
    for (const k of jobs.byKind) out.push(`  ${k.kind.padEnd(11)} started ${k.started}, completed ${k.completed}, failed ${k.failed}, cancelled ${k.cancelled}, still running ${k.running}`);
    out.push(`  ${completedPerMinute.toFixed(1)} jobs completed per minute`);
    out.push(`\nEvent streams: ${events.streams} open, ${events.delivered} events delivered (${Object.entries(events.byKind).map(([k, n]) => `${k} ${n}`).join(', ')}), ${events.reconnects} reconnects`);
    out.push(`  delivery lag (probe upload answered -> its event): p50 ${events.lag.p50} / p95 ${events.lag.p95} / p99 ${events.lag.p99} / max ${events.lag.max} ms over ${events.lag.samples} probes, ${events.lag.missed} missed`);
    out.push(`\nPostgreSQL: peak ${peakConnections} connections (${connections.length ? Object.entries(connections[connections.length - 1].byApplication).map(([a, n]) => `${a} ${n}`).join(', ') : 'no sample'})`);
    if (slow) for (const s of slow.slice(0, 6)) out.push(`  ${s.totalMs.toFixed(0).padStart(7)} ms total, ${s.calls} calls, mean ${s.meanMs.toFixed(1)} ms, max ${s.maxMs.toFixed(0)} ms: ${s.query}`);
    else out.push(`  pg_stat_statements not loaded; statements over 100 ms logged: ${loggedSlowStatements(path.join(topology.postgresDataDir, 'server.log')).join(' | ') || 'none'}`);
    out.push('\nTemporal schedule-to-start (measured window, all workers):');
    for (const { name, stats } of scheduleToStart) out.push(`  ${name}: ${stats ? `${stats.count} tasks, mean ${(stats.mean * 1000).toFixed(0)} ms, p50 <= ${fmtS(stats.p50)}, p95 <= ${fmtS(stats.p95)}, p99 <= ${fmtS(stats.p99)}` : 'no tasks'}`);
    out.push('\nProcesses (RSS MB at warm-up end -> halfway -> at the end, heap MB at warm-up end -> at the end; CPU cores used over the measured window):');
    for (const m of memory) {
      const c = cpuByProcess.find((p) => p.name === m.name);
      const mid = midMemory.find((r) => r.name === m.name && !m.restarted);
      out.push(`  ${m.name.padEnd(22)} RSS ${fmt(m.rssWarm)} -> ${mid ? `${fmt(mid.rssMb)} -> ` : ''}${fmt(m.rssEnd)}  heap ${fmt(m.heapWarm)} -> ${fmt(m.heapEnd)}${c && c.cores !== null ? `  CPU ${c.cores.toFixed(2)} cores` : ''}${m.restarted ? '  (restarted)' : ''}`);
      if (m.noteWarm || m.noteEnd) out.push(`  ${''.padEnd(22)} ${m.noteWarm ?? '?'} -> ${m.noteEnd ?? '?'}`);
    }
    if (invariants) out.push(`\nInvariant checker: ${invariants.ok ? 'ok' : 'NOT ok'} (${invariants.ledger.accountsChecked} accounts, ${invariants.storage.objectsChecked} objects, ${invariants.workflows.checked} runs${invariants.skipped.length ? `; skipped: ${invariants.skipped.join(', ')}` : ''})`);
    if (invariants && !invariants.ok) out.push(`  ${JSON.stringify({ ledger: invariants.ledger.violations.slice(0, 5), storage: { objectsWithoutRow: invariants.storage.objectsWithoutRow.slice(0, 5), rowsWithoutObject: invariants.storage.rowsWithoutObject.slice(0, 5) }, workflows: invariants.workflows.openForFinishedJobs.slice(0, 5), jobs: invariants.jobs.nonTerminalStale.slice(0, 5) })}`);
    if (jobs.notTerminal.length || jobs.missingRows.length || jobs.severalTerminalStates.length) out.push(`  jobs: ${[...jobs.notTerminal, ...jobs.missingRows, ...jobs.severalTerminalStates].slice(0, 10).join(', ')}`);
    if (impacts.length) {
      out.push('\nFaults injected and what the clients saw (from the fault to 5 s after its recovery):');
      for (const f of impacts) {
        out.push(`  ${f.fault.at} ${f.fault.kind} ${f.fault.target}: recovered ${f.fault.recoveredAfterMs === null ? 'NOT' : `after ${(f.fault.recoveredAfterMs / 1000).toFixed(1)}s`}; ${f.requests} requests, ${f.failedAttempts} attempts 5xx or unanswered, ${f.failedCalls} calls failed after retries; statuses ${JSON.stringify(f.statuses)}${(f.fault as { detail?: string }).detail ? `; ${(f.fault as { detail?: string }).detail}` : ''}`);
      }
    }
    out.push('\nTargets:');
    out.push(formatTargets(targets));
    process.stdout.write(`${out.join('\n')}\n`);

    // what this run measured sets the next run's default rate (a run with faults spends CPU on restarts: not a measure)
    if (!options.chaos && stackCpuSPerAction !== null && Number.isFinite(stackCpuSPerAction) && stackCpuSPerAction > 0) saveMeasuredCapacity(ROOT, Number(stackCpuSPerAction.toFixed(3)));

    const report = { options, midMemory, backlog, backlogTrend: backlogSeen, startedAt: startedAt.toISOString(), drainS, loadBefore, machineBusy, stackCores, k6: k6Summary, perUnit: { apiCpuMsPerRequest, workerCpuSPerJob, stackCpuSPerAction, actionsPerS }, requests: { ...requests, admittedJobs: requests.admittedJobs.length }, jobs, events, connections, slow, scheduleToStart, memory, cpuByProcess, invariants, faults: impacts, targets };
    fs.writeFileSync(path.join(topology.dataDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    log(`full report in ${path.relative(ROOT, path.join(topology.dataDir, 'report.json'))}`);

    const measures: BenchMeasure[] = [
      figure('read_p99_ms', requests.reads.p99, 'ms', 'lower', `p99 of every GET/HEAD after warm-up, through haproxy${options.chaos ? ", outside the faults' windows" : ''}`, READ_P99_TARGET_MS),
      figure('read_p50_ms', requests.reads.p50, 'ms', 'lower', 'p50 of every GET/HEAD after warm-up'),
      figure('requests_per_s', requests.throughput, 'req/s', 'higher', 'requests per second over the measured window (2 APIs)'),
      figure('server_errors', requests.serverErrorsOutsideFaults, 'count', 'lower', options.chaos ? "answers 5xx outside the faults' windows" : 'answers 5xx over the run', 0),
      figure('unexpected_4xx', requests.totals.unexpected4xx, 'count', 'lower', '4xx the calls did not expect', 0),
      figure('jobs_completed_per_min', completedPerMinute, 'jobs/min', 'higher', 'image edits, clips and assemblies completed per minute (2 workers)'),
      figure('jobs_not_ended_once', jobs.notTerminal.length + jobs.missingRows.length + jobs.severalTerminalStates.length, 'count', 'lower', 'admitted jobs not ending in exactly one terminal state', 0),
      figure('sse_lag_p99_ms', events.lag.p99, 'ms', 'lower', 'event delivery lag p99 (probe upload answered -> event)'),
      figure('peak_pg_connections', peakConnections, 'count', 'lower', 'PostgreSQL connections at the busiest sample'),
    ];
    for (const group of requests.groups) measures.push(figure(`${group.group}_p99_ms`, group.p99, 'ms', 'lower', `p99 of the ${group.group} routes`));
    if (apiCpuMsPerRequest !== null) measures.push(figure('api_cpu_ms_per_request', apiCpuMsPerRequest, 'ms', 'lower', 'API CPU per request (both APIs over the measured window)'));
    if (workerCpuSPerJob !== null) measures.push(figure('worker_cpu_s_per_job', workerCpuSPerJob, 's', 'lower', 'worker CPU (ffmpeg included) per completed job, this mix of image edits, clips and assemblies'));
    if (stackCpuSPerAction !== null) measures.push(figure('stack_cpu_s_per_action', stackCpuSPerAction, 's', 'lower', 'CPU of the whole stack per user action of the mix'));
    if (actionsPerS !== null) measures.push(figure('user_actions_per_s', actionsPerS, 'actions/s', 'higher', 'user actions (k6 iterations) per second'));
    if (k6Summary.dropped !== null) measures.push(figure('dropped_actions', k6Summary.dropped, 'count', 'lower', 'user actions k6 could not start for want of a free virtual user'));
    if (stackCores !== null) measures.push(figure('stack_cpu_cores', stackCores, 'cores', 'lower', 'CPU cores the whole stack (APIs, workers, ffmpeg, haproxy, SeaweedFS, PostgreSQL, Temporal) used on average over the measured window'));
    if (machineBusy !== null) measures.push(figure('machine_cpu_cores', machineBusy, 'cores', 'lower', 'busy cores on average over the measured window (all processes, the other helpers too)'));
    for (const c of cpuByProcess) if (c.cores !== null) measures.push(figure(`${c.name}_cpu_cores`, c.cores, 'cores', 'lower', `CPU cores ${c.name} used on average`));
    for (const m of memory) {
      const key = m.name.replace(/[^a-z0-9]+/gi, '_').replace(/_+$/, '').toLowerCase();
      if (m.rssEnd !== null) measures.push(figure(`${key}_rss_mb`, m.rssEnd, 'MB', 'lower', `RSS of ${m.name} at the end`));
      if (!m.restarted && m.rssWarm && m.rssEnd !== null) measures.push(figure(`${key}_rss_growth_pct`, ((m.rssEnd - m.rssWarm) / m.rssWarm) * 100, '%', 'lower', `RSS growth of ${m.name} from warm-up end to the end`, 10));
    }
    const ledgerOk = invariants ? (invariants.ledger.violations.length === 0 ? 1 : 0) : null;
    if (ledgerOk !== null) measures.push(figure('invariants_ok', invariants!.ok ? 1 : 0, 'bool', 'higher', 'the invariant checker found nothing (ledger, storage, runs)', 1));
    recordResults('soak', measures);
    if (targets.some((t) => t.met === false)) log('some targets were MISSED (see above)');
  } finally {
    await connection?.close().catch(() => undefined);
    await knex.destroy().catch(() => undefined);
    log('stopping the stack');
    await topology.stop();
  }
}

/** Iterations done and dropped, from k6's end-of-test summary (handleSummary in bench/soak/k6/soak.js). */
function readK6Summary(file: string): { iterations: number | null; dropped: number | null } {
  try {
    const metrics = (JSON.parse(fs.readFileSync(file, 'utf8')) as { metrics: Record<string, { values?: { count?: number } }> }).metrics;
    return { iterations: metrics.iterations?.values?.count ?? null, dropped: metrics.dropped_iterations?.values?.count ?? 0 };
  } catch {
    return { iterations: null, dropped: null };
  }
}

function fmtNum(value: number | null, digits: number): string {
  return value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
}

function fmt(mb: number | null): string {
  return mb === null ? '  n/a' : mb.toFixed(0).padStart(5);
}

function fmtS(seconds: number): string {
  return Number.isFinite(seconds) ? `${(seconds * 1000).toFixed(0)} ms` : '+Inf';
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
