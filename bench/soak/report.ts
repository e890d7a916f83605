/**
 * The soak's report from what was recorded (issue 28, item 2): the k6 virtual users' request lines (bench/soak/k6/soak.js
 * writes one JSON line per request attempt), Prometheus text from the processes, and the checks made at the end.
 * No I/O here: bench/soak.ts gathers, these functions count, so the counting is tested on recorded lines
 * (tests/bench/soakReport.test.ts).
 */
import { percentile } from '../support/stats';

/** One request attempt as the k6 script logs it. */
export interface RequestLine {
  /** start, epoch ms */
  t: number;
  /** duration, ms */
  d: number;
  /** route group (projects, library, credits ...) */
  g: string;
  /** route pattern */
  r: string;
  m: string;
  /** HTTP status; 0 when no answer came (refused, reset, timed out) */
  s: number;
  /** 1 for the first try, 2 and 3 for the front end's retries */
  a: number;
  /** whether the outcome is one the call expects (2xx, or a refusal of normal use such as the pending limit) */
  ok: boolean;
  /** the API's error code, when it answered one */
  c?: string;
  /** k6's error text when no answer came */
  e?: string;
  /** the job this request admitted */
  job?: { kind: string; id: string };
  vu?: number;
}

/** Reads the k6 console output: JSON request lines; anything else (k6's own warnings) is skipped. */
export function parseRequestLines(text: string): RequestLine[] {
  const lines: RequestLine[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Partial<RequestLine>;
      if (typeof value.t === 'number' && typeof value.d === 'number' && typeof value.g === 'string' && typeof value.s === 'number') lines.push(value as RequestLine);
    } catch {
      // a line cut short when k6 was stopped
    }
  }
  return lines;
}

/** Reads are GET and HEAD: what the read-route latency target is about. */
export function isRead(line: Pick<RequestLine, 'm'>): boolean {
  return line.m === 'GET' || line.m === 'HEAD';
}

export interface LatencyStats {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface GroupStats extends LatencyStats {
  group: string;
  /** answers 500-599 (every attempt counts: a retry that then worked still met a 5xx) */
  serverErrors: number;
  /** 4xx the call did not expect */
  unexpected4xx: number;
  /** refusals of normal use (pending-approvals limit, cooldown, decided by another tab) */
  expectedRefusals: number;
  /** no answer at all */
  networkErrors: number;
  /** calls whose last attempt still failed (what the user saw as an error) */
  failedCalls: number;
}

function latency(durations: number[]): LatencyStats {
  const sorted = [...durations].sort((a, b) => a - b);
  if (sorted.length === 0) return { requests: 0, p50: 0, p95: 0, p99: 0, max: 0 };
  return { requests: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

/** What the clients met while faults were injected (chaos mode; null without faults). */
export interface AtFaults {
  /** attempts that overlapped a fault's window */
  requests: number;
  /** 5xx answers there (each one must be a clear answer: a code the client can act on) */
  serverErrors: number;
  /** writes that got no answer at all and were not tried again (the user cannot know what happened) */
  unansweredWrites: number;
  /** 5xx answers without an error code (a bare proxy page, or a crash), not followed by a successful retry */
  uncodedServerErrors: number;
  /** reads that still failed after the front end's retries (reads must survive a fault) */
  failedReads: number;
  /** read latency of the answered reads there (not part of the read target) */
  reads: LatencyStats;
}

export interface RequestSummary {
  groups: GroupStats[];
  /** every read (GET/HEAD) after warm-up, all groups together; with faults, those outside every fault's window */
  reads: LatencyStats;
  /** 5xx answers outside every fault's window (all of them when there were no faults) */
  serverErrorsOutsideFaults: number;
  atFaults: AtFaults | null;
  /** the slowest read routes by p99 (after warm-up) */
  slowestReads: Array<{ route: string } & LatencyStats>;
  totals: { attempts: number; serverErrors: number; unexpected4xx: number; networkErrors: number; failedCalls: number; expectedRefusals: number };
  /** what the unexpected answers were, by route, status and code */
  unexpected: Array<{ route: string; status: number; code: string | null; count: number }>;
  /** requests per second over the measured window */
  throughput: number;
  admittedJobs: Array<{ kind: string; id: string }>;
}

/** A fault's window: from the fault to 5 s after its recovery (30 s when it did not recover), epoch ms. */
export interface FaultWindow {
  from: number;
  to: number;
}

export function faultWindows(faults: readonly FaultRecord[]): FaultWindow[] {
  return faults.map((fault) => {
    const from = Date.parse(fault.at);
    return { from, to: from + (fault.recoveredAfterMs ?? 30_000) + 5000 };
  });
}

/** Whether a request attempt overlapped a fault's window. */
export function duringFault(line: Pick<RequestLine, 't' | 'd'>, windows: readonly FaultWindow[]): boolean {
  return windows.some((w) => line.t + line.d >= w.from && line.t <= w.to);
}

/**
 * Latency counts requests that started at or after `measuredFrom` (the end of warm-up); errors count over the whole
 * run. A call that the front end would retry and that then worked is not a failed call, but its 5xx still counts.
 * With `faults` (chaos mode), what happened inside their windows is counted apart (`atFaults`): there a write may fail,
 * but only with a clear answer, and a read must still succeed after the retries; the read latency target and the
 * 5xx count are about the rest of the run.
 */
export function summarizeRequests(lines: readonly RequestLine[], measuredFrom = 0, faults: readonly FaultRecord[] = []): RequestSummary {
  const byGroup = new Map<string, RequestLine[]>();
  for (const line of lines) {
    const list = byGroup.get(line.g) ?? [];
    list.push(line);
    byGroup.set(line.g, list);
  }
  const failedCalls = new Set<RequestLine>();
  const isFailedCall = (line: RequestLine, all: readonly RequestLine[], index: number): boolean => {
    if (line.ok) return false;
    // the call failed for the user when no later attempt of the same call (same VU and route, next attempt number) followed
    const next = all.slice(index + 1, index + 40).find((l) => l.vu === line.vu && l.r === line.r && l.a === line.a + 1);
    if (next === undefined) failedCalls.add(line);
    return next === undefined;
  };
  const groups: GroupStats[] = [];
  for (const [group, list] of [...byGroup.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const measured = list.filter((l) => l.t >= measuredFrom);
    groups.push({
      group,
      ...latency(measured.map((l) => l.d)),
      serverErrors: list.filter((l) => l.s >= 500).length,
      unexpected4xx: list.filter((l) => l.s >= 400 && l.s < 500 && !l.ok).length,
      expectedRefusals: list.filter((l) => l.s >= 400 && l.ok).length,
      networkErrors: list.filter((l) => l.s === 0).length,
      failedCalls: list.filter((l, i) => isFailedCall(l, list, i)).length,
    });
  }
  const windows = faultWindows(faults);
  const atFault = (l: RequestLine) => windows.length > 0 && duringFault(l, windows);
  const measuredReads = lines.filter((l) => l.t >= measuredFrom && isRead(l) && l.s !== 0 && !atFault(l));
  const byRoute = new Map<string, number[]>();
  for (const l of measuredReads) byRoute.set(`${l.m} ${l.r}`, [...(byRoute.get(`${l.m} ${l.r}`) ?? []), l.d]);
  const slowestReads = [...byRoute.entries()]
    .map(([route, ds]) => ({ route, ...latency(ds) }))
    .sort((a, b) => b.p99 - a.p99)
    .slice(0, 5);
  const unexpectedCounts = new Map<string, { route: string; status: number; code: string | null; count: number }>();
  for (const l of lines) {
    if (l.ok || (l.s >= 200 && l.s < 400)) continue;
    const key = `${l.m} ${l.r}|${l.s}|${l.c ?? ''}`;
    const entry = unexpectedCounts.get(key) ?? { route: `${l.m} ${l.r}`, status: l.s, code: l.c ?? null, count: 0 };
    entry.count += 1;
    unexpectedCounts.set(key, entry);
  }
  const measured = lines.filter((l) => l.t >= measuredFrom);
  const span = measured.length ? (Math.max(...measured.map((l) => l.t + l.d)) - Math.min(...measured.map((l) => l.t))) / 1000 : 0;
  const sum = (key: keyof GroupStats) => groups.reduce((total, g) => total + (g[key] as number), 0);
  const admitted = new Map<string, { kind: string; id: string }>();
  for (const l of lines) if (l.job) admitted.set(`${l.job.kind}:${l.job.id}`, l.job);
  const inWindows = windows.length ? lines.filter(atFault) : [];
  const atFaults: AtFaults | null = windows.length
    ? {
        requests: inWindows.length,
        serverErrors: inWindows.filter((l) => l.s >= 500).length,
        unansweredWrites: inWindows.filter((l) => !isRead(l) && l.s === 0 && failedCalls.has(l)).length,
        uncodedServerErrors: inWindows.filter((l) => l.s >= 500 && !l.c && failedCalls.has(l)).length,
        failedReads: inWindows.filter((l) => isRead(l) && failedCalls.has(l)).length,
        reads: latency(inWindows.filter((l) => l.t >= measuredFrom && isRead(l) && l.s !== 0).map((l) => l.d)),
      }
    : null;
  return {
    groups,
    reads: latency(measuredReads.map((l) => l.d)),
    serverErrorsOutsideFaults: lines.filter((l) => l.s >= 500 && !atFault(l)).length,
    atFaults,
    slowestReads,
    totals: {
      attempts: lines.length,
      serverErrors: sum('serverErrors'),
      unexpected4xx: sum('unexpected4xx'),
      networkErrors: sum('networkErrors'),
      failedCalls: sum('failedCalls'),
      expectedRefusals: sum('expectedRefusals'),
    },
    unexpected: [...unexpectedCounts.values()].sort((a, b) => b.count - a.count),
    throughput: span > 0 ? measured.length / span : 0,
    admittedJobs: [...admitted.values()],
  };
}

/** A fault the chaos mode injected (bench/soak/chaos.ts; contract in SOAK.md). */
export interface FaultRecord {
  at: string;
  kind: 'kill-api' | 'kill-worker' | 'restart-postgres' | 'restart-temporal';
  target: string;
  pid?: number;
  recoveredAfterMs: number | null;
}

export interface FaultImpact {
  fault: FaultRecord;
  /** the window looked at: from the fault to its recovery (or 30 s when it did not recover) plus 5 s */
  windowMs: number;
  requests: number;
  /** attempts answered 5xx or not at all */
  failedAttempts: number;
  /** calls that failed for the user after the front end's retries */
  failedCalls: number;
  statuses: Record<string, number>;
}

/** What the clients saw around each fault: the requests that started from the fault until 5 s after its recovery. */
export function faultImpacts(lines: readonly RequestLine[], faults: readonly FaultRecord[]): FaultImpact[] {
  const windows = faultWindows(faults);
  return faults.map((fault, index) => {
    const window = windows[index];
    const windowMs = window.to - window.from;
    const inWindow = lines.filter((l) => duringFault(l, [window]));
    const statuses: Record<string, number> = {};
    for (const l of inWindow) statuses[String(l.s)] = (statuses[String(l.s)] ?? 0) + 1;
    const failed = (l: RequestLine) => l.s === 0 || l.s >= 500;
    return {
      fault,
      windowMs,
      requests: inWindow.length,
      failedAttempts: inWindow.filter(failed).length,
      failedCalls: inWindow.filter((l) => !l.ok && (l.a >= 3 || !isRead(l))).length,
      statuses,
    };
  });
}

/** One sample of Prometheus text: name, labels, value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    const value = Number(m[4]);
    if (Number.isFinite(value) || m[4] === '+Inf') samples.push({ name: m[1], labels, value });
  }
  return samples;
}

/** The first sample of `name` (a gauge such as nodejs_heap_size_used_bytes), or null. */
export function gauge(samples: readonly PromSample[], name: string): number | null {
  return samples.find((s) => s.name === name)?.value ?? null;
}

export interface HistogramSummary {
  count: number;
  /** seconds */
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

/**
 * A histogram's count, mean and quantiles (upper bound of the bucket that reaches the rank, as Prometheus's
 * histogram_quantile without interpolation) over every label set of `name` and every scrape given (e.g. all workers).
 * Counts are cumulative: pass the difference of two scrapes to look at a window.
 */
export function histogram(samples: readonly PromSample[], name: string): HistogramSummary | null {
  const buckets = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const s of samples) {
    if (s.name === `${name}_bucket`) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      buckets.set(le, (buckets.get(le) ?? 0) + s.value);
    } else if (s.name === `${name}_count`) count += s.value;
    else if (s.name === `${name}_sum`) sum += s.value;
  }
  if (count <= 0) return null;
  const sorted = [...buckets.entries()].sort(([a], [b]) => a - b);
  const quantile = (q: number): number => {
    const rank = q * count;
    for (const [le, cumulative] of sorted) if (cumulative >= rank) return le;
    return Infinity;
  };
  return { count, mean: sum / count, p50: quantile(0.5), p95: quantile(0.95), p99: quantile(0.99) };
}

/** `later - earlier` for counters and histogram series (same name and labels): what happened between two scrapes. */
export function difference(later: readonly PromSample[], earlier: readonly PromSample[]): PromSample[] {
  const key = (s: PromSample) => `${s.name}|${JSON.stringify(Object.entries(s.labels).sort())}`;
  const before = new Map(earlier.map((s) => [key(s), s.value]));
  return later.map((s) => ({ ...s, value: s.value - (before.get(key(s)) ?? 0) }));
}

export interface ProcessMemory {
  name: string;
  /** MB at the end of warm-up and at the end of the run */
  rssWarm: number | null;
  rssEnd: number | null;
  heapWarm: number | null;
  heapEnd: number | null;
  /** what else the readings said at warm-up end and at the end (the dev server's history cache) */
  noteWarm?: string;
  noteEnd?: string;
  /** whether the process was restarted between the two readings (a chaos kill): its growth says nothing then */
  restarted: boolean;
}

export function rssGrowth(p: ProcessMemory): number | null {
  if (p.restarted || p.rssWarm === null || p.rssEnd === null || p.rssWarm <= 0) return null;
  return (p.rssEnd - p.rssWarm) / p.rssWarm;
}

export interface JobOutcomes {
  /** per kind: rows made during the run, and how many ended in each state */
  byKind: Array<{ kind: string; started: number; completed: number; failed: number; cancelled: number; running: number }>;
  /** admitted jobs (a start answered with a job id) with no row, or whose row is not terminal after the drain */
  notTerminal: string[];
  missingRows: string[];
  /** jobs whose event stream announced more than one distinct terminal state */
  severalTerminalStates: string[];
}

/** How many jobs were waiting or running at a moment (rows pending or processing), sampled through the run. */
export interface BacklogSample {
  at: number;
  waiting: number;
}

export interface BacklogTrend {
  samples: number;
  /** mean jobs waiting or running over the first, middle and last third of the measured window */
  first: number;
  middle: number;
  last: number;
  /** the backlog kept growing: the machine does not sustain this rate (each third above the one before, and the last at least half again the first and 5 jobs more) */
  growing: boolean;
}

/**
 * Whether work piles up faster than the workers finish it, over the measured window (samples from `from` on; at
 * least 6 needed). A steady backlog goes up and down around a level; a growing one climbs third after third.
 */
export function backlogTrend(samples: readonly BacklogSample[], from = 0): BacklogTrend | null {
  const measured = samples.filter((s) => s.at >= from).sort((a, b) => a.at - b.at);
  if (measured.length < 6) return null;
  const third = Math.floor(measured.length / 3);
  const mean = (list: readonly BacklogSample[]) => list.reduce((n, s) => n + s.waiting, 0) / list.length;
  const first = mean(measured.slice(0, third));
  const middle = mean(measured.slice(third, measured.length - third));
  const last = mean(measured.slice(measured.length - third));
  const growing = middle > first && last > middle && last >= first * 1.5 && last - first >= 5;
  return { samples: measured.length, first, middle, last, growing };
}

export interface TargetResult {
  name: string;
  met: boolean | null;
  detail: string;
}

export const READ_P99_TARGET_MS = 150;
export const RSS_GROWTH_TARGET = 0.1;

/** The issue's targets, each met, MISSED or not checked (met: null, with the reason). */
export function evaluateTargets(input: {
  requests: RequestSummary;
  jobs: JobOutcomes;
  invariants: { ok: boolean; ledger: { accountsChecked: number; violations: unknown[] }; storage: { objectsChecked: number; objectsWithoutRow: string[]; rowsWithoutObject: string[] }; workflows: { openForFinishedJobs: string[] }; jobs: { nonTerminalStale: string[] } } | null;
  memory: readonly ProcessMemory[];
  /** jobs waiting or running through the measured window (omitted: not judged) */
  backlog?: BacklogTrend | null;
}): TargetResult[] {
  const { requests, jobs, invariants, memory } = input;
  const results: TargetResult[] = [];
  const { serverErrors, unexpected4xx } = requests.totals;
  const faults = requests.atFaults;
  if (!faults) results.push({ name: 'zero 5xx', met: serverErrors === 0, detail: `${serverErrors} answers 5xx` });
  else {
    results.push({ name: 'zero 5xx outside faults', met: requests.serverErrorsOutsideFaults === 0, detail: `${requests.serverErrorsOutsideFaults} answers 5xx outside the faults' windows, ${faults.serverErrors} within them` });
    const unclear = faults.unansweredWrites + faults.uncodedServerErrors + faults.failedReads;
    results.push({
      name: 'faults met with clear answers',
      met: unclear === 0,
      detail: `${faults.requests} requests during faults: ${faults.failedReads} reads failed after retries, ${faults.unansweredWrites} writes unanswered, ${faults.uncodedServerErrors} 5xx without a code`,
    });
  }
  results.push({ name: 'zero unexpected 4xx', met: unexpected4xx === 0, detail: `${unexpected4xx} unexpected 4xx (${requests.totals.expectedRefusals} refusals of normal use)` });
  const jobProblems = jobs.notTerminal.length + jobs.missingRows.length + jobs.severalTerminalStates.length + (invariants ? invariants.workflows.openForFinishedJobs.length + invariants.jobs.nonTerminalStale.length : 0);
  const admitted = jobs.byKind.reduce((n, k) => n + k.started, 0);
  results.push({
    name: 'each admitted job ends once',
    met: jobProblems === 0,
    detail: `${admitted} jobs; ${jobs.notTerminal.length} not terminal, ${jobs.missingRows.length} without a row, ${jobs.severalTerminalStates.length} with two terminal states${invariants ? `, ${invariants.workflows.openForFinishedJobs.length} runs open for finished jobs` : ''}`,
  });
  if (invariants) {
    results.push({ name: 'ledger invariant per account', met: invariants.ledger.violations.length === 0, detail: `${invariants.ledger.accountsChecked} accounts, ${invariants.ledger.violations.length} violations` });
    const storageProblems = invariants.storage.objectsWithoutRow.length + invariants.storage.rowsWithoutObject.length;
    results.push({
      name: 'storage and database agree',
      met: storageProblems === 0,
      detail: `${invariants.storage.objectsChecked} objects; ${invariants.storage.objectsWithoutRow.length} without a row, ${invariants.storage.rowsWithoutObject.length} rows without an object`,
    });
  } else {
    results.push({ name: 'ledger invariant per account', met: null, detail: 'not checked (no invariant checker)' });
    results.push({ name: 'storage and database agree', met: null, detail: 'not checked (no invariant checker)' });
  }
  results.push({
    name: `read routes p99 < ${READ_P99_TARGET_MS} ms`,
    met: requests.reads.requests > 0 ? requests.reads.p99 < READ_P99_TARGET_MS : null,
    detail: `p99 ${requests.reads.p99.toFixed(0)} ms over ${requests.reads.requests} reads${faults ? ` outside the faults (p99 ${faults.reads.p99.toFixed(0)} ms over ${faults.reads.requests} reads during them)` : ''}`,
  });
  if (input.backlog !== undefined) {
    const b = input.backlog;
    results.push({
      name: 'backlog steady',
      met: b ? !b.growing : null,
      detail: b ? `jobs waiting or running: ${b.first.toFixed(1)} -> ${b.middle.toFixed(1)} -> ${b.last.toFixed(1)} (means of the thirds of the measured window, ${b.samples} samples)` : 'too few samples',
    });
  }
  const growths = memory.map((p) => ({ p, growth: rssGrowth(p) })).filter((g): g is { p: ProcessMemory; growth: number } => g.growth !== null);
  const worst = growths.sort((a, b) => b.growth - a.growth)[0];
  results.push({
    name: `RSS growth < ${RSS_GROWTH_TARGET * 100}%`,
    met: worst ? worst.growth < RSS_GROWTH_TARGET : null,
    detail: worst ? `largest ${(worst.growth * 100).toFixed(1)}% (${worst.p.name}; every process not restarted: APIs, workers, PostgreSQL, the Temporal dev server)` : 'no process measured at both ends',
  });
  return results;
}

export function formatTargets(results: readonly TargetResult[]): string {
  return results.map((r) => `  ${r.name.padEnd(32)} ${(r.met === null ? 'not checked' : r.met ? 'met' : 'MISSED').padEnd(12)} ${r.detail}`).join('\n');
}

export function formatGroups(groups: readonly GroupStats[]): string {
  const head = `  ${'group'.padEnd(12)} ${'requests'.padStart(8)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}  5xx  4xx! refused  net  failed`;
  const rows = groups.map(
    (g) =>
      `  ${g.group.padEnd(12)} ${String(g.requests).padStart(8)} ${g.p50.toFixed(0).padStart(7)} ${g.p95.toFixed(0).padStart(7)} ${g.p99.toFixed(0).padStart(7)} ${g.max.toFixed(0).padStart(7)} ${String(g.serverErrors).padStart(4)} ${String(g.unexpected4xx).padStart(4)} ${String(g.expectedRefusals).padStart(8)} ${String(g.networkErrors).padStart(4)} ${String(g.failedCalls).padStart(7)}`,
  );
  return [head, ...rows].join('\n');
}
