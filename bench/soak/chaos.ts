/**
 * The soak's chaos mode (issue 28, item 3; `npm run bench -- soak --chaos`): while k6 runs, faults are injected one
 * at a time into the scaled-out stack of bench/soak/topology.ts, and for each the time until the stack served again
 * is measured, so the report can set what the clients saw next to it.
 *
 * - every 30-60 s (SOAK_CHAOS_INTERVAL=min-max seconds, shorter for a dev run) a random API or worker process is
 *   killed with SIGKILL, as a crashed host or the OOM killer would; scaleOut.js's supervisor restarts it. An API
 *   counts as back once its own port answers /api/health; a worker once its new pid polls the task queues (its
 *   identity `<pid>@<host>` among the pollers Temporal reports);
 * - once per run PostgreSQL is restarted in place (fast shutdown: open transactions are rolled back, then the same
 *   data folder and port): back once every API answers /api/health through its own port, which needs a fresh
 *   connection from its pool;
 * - once per run the Temporal dev server is restarted in place (same history file and port, so every workflow goes
 *   on): back once every API's readiness check reaches the namespace again and every worker polls again.
 *
 * Faults never overlap: the next waits until the last one's stack has recovered (or the recovery bound passed), and
 * a process is not killed again within the supervisor's crash-loop window while another one can be chosen, so the
 * chaos never makes the supervisor give up on a child. With the run's length given, the PostgreSQL restart takes the
 * fault slot nearest to a third of the run and the Temporal restart the one nearest to two thirds; without it, the
 * second and the fourth fault.
 */
import os from 'node:os';
import { Connection } from '@temporalio/client';
import { TASK_QUEUES } from '../../domain/taskQueues';
import type { SoakProcess, SoakTopology } from './topology';

export type FaultKind = 'kill-api' | 'kill-worker' | 'restart-postgres' | 'restart-temporal';

/** One injected fault (contract with bench/soak.ts and bench/soak/report.ts). */
export interface FaultRecord {
  /** when the fault began (the kill, or the start of the stop of PostgreSQL / Temporal), ISO */
  at: string;
  kind: FaultKind;
  /** api-1, worker-2 ..., postgres, temporal */
  target: string;
  /** the killed process */
  pid?: number;
  /** from `at` until the stack served again; null when it had not within the recovery bound */
  recoveredAfterMs: number | null;
  /** when recovery was seen (or the wait for it ended), ISO */
  endedAt?: string;
  /** the restarted process's new pid */
  newPid?: number;
  /** how long the service itself was down (restarts), what was waited for, or why recovery was not seen */
  detail?: string;
}

export interface ChaosHandle {
  /** Ends the chaos: no new fault starts; a fault under way finishes its recovery wait. Resolves to every fault. */
  stop(): Promise<FaultRecord[]>;
}

export type ChaosTopology = Pick<SoakTopology, 'baseUrl' | 'processes' | 'restartPostgres' | 'restartTemporal' | 'temporalAddress'>;

export interface ChaosOptions {
  topology: ChaosTopology;
  log: (line: string) => void;
  /** [0, 1), like Math.random: picks the gaps and the processes (a seeded one makes a run repeatable) */
  random: () => number;
  /** the gap between faults, ms: [min, max] (default SOAK_CHAOS_INTERVAL, else 30-60 s) */
  intervalMs?: [number, number];
  /** the run's length, ms: places the PostgreSQL and Temporal restarts at about a third and two thirds of it */
  durationMs?: number;
  /** the longest a recovery is waited for (default 120 s) */
  recoveryTimeoutMs?: number;
  /** a process is not killed again within this long while another can be (the supervisor's crash-loop window, 60 s) */
  rekillAfterMs?: number;
  namespace?: string;
}

const DEFAULT_INTERVAL_MS: [number, number] = [30_000, 60_000];
const POLL_MS = 250;

/** SOAK_CHAOS_INTERVAL=min-max (seconds), e.g. `5-10` for a short dev run; undefined when unset. */
export function intervalFromEnv(value: string | undefined = process.env.SOAK_CHAOS_INTERVAL): [number, number] | undefined {
  if (!value) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (!m || Number(m[1]) <= 0 || Number(m[2]) < Number(m[1])) throw new Error(`SOAK_CHAOS_INTERVAL must be min-max in seconds (e.g. 30-60), got "${value}"`);
  return [Number(m[1]) * 1000, Number(m[2]) * 1000];
}

/**
 * The kinds of the faults in order, for a run of `durationMs` whose fault slots fall at `slotTimes` (ms from the
 * start): kills, with the PostgreSQL restart in the slot nearest to a third of the run and the Temporal restart in
 * the one nearest to two thirds (distinct slots; with fewer than two slots, the restarts come first).
 */
export function planFaults(slotTimes: readonly number[], durationMs: number): Array<'kill' | 'restart-postgres' | 'restart-temporal'> {
  const plan: Array<'kill' | 'restart-postgres' | 'restart-temporal'> = slotTimes.map(() => 'kill');
  const nearest = (target: number, taken: number) => {
    let best = -1;
    slotTimes.forEach((t, i) => {
      if (i !== taken && (best < 0 || Math.abs(t - target) < Math.abs(slotTimes[best] - target))) best = i;
    });
    return best;
  };
  const pg = nearest(durationMs / 3, -1);
  if (pg >= 0) plan[pg] = 'restart-postgres';
  const temporal = nearest((2 * durationMs) / 3, pg);
  if (temporal >= 0) plan[temporal] = 'restart-temporal';
  return plan;
}

/** The API's own base URL (its metrics are read at <base>/metrics). */
export function apiBaseOf(p: Pick<SoakProcess, 'metricsUrl'>): string {
  return p.metricsUrl.replace(/\/metrics$/, '');
}

async function answers(url: string, accept: (body: unknown) => boolean = () => true): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000), headers: { 'cache-control': 'no-store' } });
    if (!res.ok) return false;
    return accept(await res.json().catch(() => null));
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface FaultInjector {
  /** SIGKILLs the named API or worker (or one chosen with `random`), then waits for it to serve again. */
  kill(name?: string): Promise<FaultRecord | null>;
  /** Restarts PostgreSQL or the Temporal dev server in place, then waits for the stack to serve again. */
  restart(kind: 'restart-postgres' | 'restart-temporal'): Promise<FaultRecord>;
  /** Whether every worker process running now polls the task queues (its pid among Temporal's pollers). */
  workersPolling(): Promise<boolean>;
  /** every fault so far */
  faults(): FaultRecord[];
  close(): Promise<void>;
}

/**
 * Injects one fault at a time and measures the recovery (what startChaos schedules; tests call it directly).
 * `kill()` without a name picks a process with `random`, not one killed within `rekillAfterMs` while another can be.
 */
export function createFaultInjector(options: Omit<ChaosOptions, 'intervalMs' | 'durationMs'>): FaultInjector {
  const { topology, log, random } = options;
  const recoveryTimeoutMs = options.recoveryTimeoutMs ?? 120_000;
  const rekillAfterMs = options.rekillAfterMs ?? 60_000;
  const namespace = options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const host = os.hostname();
  const faults: FaultRecord[] = [];
  const lastKilled = new Map<string, number>();
  let temporal: Promise<Connection> | null = null;

  const connection = () => {
    temporal ??= Connection.connect({ address: topology.temporalAddress }).catch((err: unknown) => {
      temporal = null;
      throw err;
    });
    return temporal;
  };

  /** The identities polling the generation queue (workflow tasks) right now, e.g. 1234@host. */
  const pollers = async (): Promise<Set<string>> => {
    try {
      const conn = await connection();
      const answer = await conn.workflowService.describeTaskQueue({ namespace, taskQueue: { name: TASK_QUEUES.generation }, taskQueueType: 1 /* workflow */ });
      return new Set((answer.pollers ?? []).map((p) => p.identity ?? ''));
    } catch {
      return new Set();
    }
  };
  const polls = async (pid: number, since: number) => {
    const conn = await connection().catch(() => null);
    if (!conn) return false;
    try {
      const answer = await conn.workflowService.describeTaskQueue({ namespace, taskQueue: { name: TASK_QUEUES.generation }, taskQueueType: 1 });
      return (answer.pollers ?? []).some((p) => p.identity === `${pid}@${host}` && Number(p.lastAccessTime?.seconds ?? 0) * 1000 >= since - 1000);
    } catch {
      return false;
    }
  };

  const workersPolling = async () => {
    const seen = await pollers();
    const ws = topology.processes().filter((p) => p.kind === 'worker');
    return ws.length > 0 && ws.every((w) => seen.has(`${w.pid}@${host}`));
  };

  /** Polls `check` until it answers true or the recovery bound passes: the ms it took, or null. */
  const recovery = async (from: number, check: () => Promise<boolean>): Promise<number | null> => {
    while (Date.now() - from < recoveryTimeoutMs) {
      if (await check()) return Date.now() - from;
      await sleep(POLL_MS);
    }
    return null;
  };

  const record = (fault: FaultRecord): FaultRecord => {
    faults.push(fault);
    const back = fault.recoveredAfterMs === null ? `NOT serving again within ${recoveryTimeoutMs / 1000}s` : `serving again after ${(fault.recoveredAfterMs / 1000).toFixed(1)}s`;
    log(`chaos: ${fault.kind} ${fault.target}${fault.pid ? ` (pid ${fault.pid})` : ''}: ${back}${fault.detail ? ` (${fault.detail})` : ''}`);
    return fault;
  };

  const killOne = async (name?: string): Promise<FaultRecord | null> => {
    const now = Date.now();
    const running = topology.processes().filter((p) => name === undefined || p.name === name);
    if (running.length === 0) {
      log(`chaos: ${name ?? 'no API or worker process'} is not running right now; skipping this kill`);
      return null;
    }
    const rested = running.filter((p) => now - (lastKilled.get(p.name) ?? -Infinity) >= rekillAfterMs);
    const choice = rested.length > 0 ? rested : [...running].sort((a, b) => (lastKilled.get(a.name) ?? 0) - (lastKilled.get(b.name) ?? 0)).slice(0, 1);
    const victim = choice[Math.min(choice.length - 1, Math.floor(random() * choice.length))];
    const at = Date.now();
    try {
      process.kill(victim.pid, 'SIGKILL');
    } catch (err) {
      log(`chaos: could not kill ${victim.name} (pid ${victim.pid}): ${(err as Error).message}`);
      return null;
    }
    lastKilled.set(victim.name, at);
    let newPid: number | undefined;
    const restarted = () => {
      newPid = topology.processes().find((p) => p.name === victim.name && p.pid !== victim.pid)?.pid;
      return newPid;
    };
    const recoveredAfterMs =
      victim.kind === 'api'
        ? await recovery(at, async () => restarted() !== undefined && answers(`${apiBaseOf(victim)}/api/health`))
        : await recovery(at, async () => {
            const pid = restarted();
            return pid !== undefined && polls(pid, at);
          });
    return record({
      at: new Date(at).toISOString(),
      kind: victim.kind === 'api' ? 'kill-api' : 'kill-worker',
      target: victim.name,
      pid: victim.pid,
      recoveredAfterMs,
      endedAt: new Date(at + (recoveredAfterMs ?? recoveryTimeoutMs)).toISOString(),
      ...(newPid ? { newPid } : {}),
      detail: victim.kind === 'api' ? 'restarted by the supervisor; back once /api/health answers on its own port' : 'restarted by the supervisor; back once its new pid polls the generation queue',
    });
  };

  const restartService = async (kind: 'restart-postgres' | 'restart-temporal'): Promise<FaultRecord> => {
    const at = Date.now();
    let downMs: number;
    try {
      await (kind === 'restart-postgres' ? topology.restartPostgres() : topology.restartTemporal());
      downMs = Date.now() - at;
    } catch (err) {
      return record({ at: new Date(at).toISOString(), kind, target: kind === 'restart-postgres' ? 'postgres' : 'temporal', recoveredAfterMs: null, endedAt: new Date().toISOString(), detail: `the restart itself failed: ${(err as Error).message}` });
    }
    const apis = () => topology.processes().filter((p) => p.kind === 'api');
    const recoveredAfterMs =
      kind === 'restart-postgres'
        ? await recovery(at, async () => {
            const list = apis();
            return list.length > 0 && (await Promise.all(list.map((p) => answers(`${apiBaseOf(p)}/api/health`)))).every(Boolean);
          })
        : await recovery(at, async () => {
            const list = apis();
            const ready = (body: unknown) => (body as { checks?: { temporal?: { ok?: boolean } } } | null)?.checks?.temporal?.ok === true;
            // /health/ready answers 503 while any part fails: read its body either way
            const temporalOk = async (p: SoakProcess) => {
              try {
                const res = await fetch(`${apiBaseOf(p)}/health/ready`, { signal: AbortSignal.timeout(5000) });
                return ready(await res.json());
              } catch {
                return false;
              }
            };
            if (list.length === 0 || !(await Promise.all(list.map(temporalOk))).every(Boolean)) return false;
            return workersPolling();
          });
    return record({
      at: new Date(at).toISOString(),
      kind,
      target: kind === 'restart-postgres' ? 'postgres' : 'temporal',
      recoveredAfterMs,
      endedAt: new Date(at + (recoveredAfterMs ?? recoveryTimeoutMs)).toISOString(),
      detail:
        kind === 'restart-postgres'
          ? `fast shutdown and start on the same data folder and port took ${(downMs / 1000).toFixed(1)}s; back once every API answers /api/health`
          : `stop and start on the same history file and port took ${(downMs / 1000).toFixed(1)}s; back once every API reaches the namespace and every worker polls`,
    });
  };

  return {
    kill: killOne,
    restart: restartService,
    workersPolling,
    faults: () => [...faults],
    async close() {
      const conn = await temporal?.catch(() => null);
      temporal = null;
      await conn?.close().catch(() => undefined);
    },
  };
}

/** Starts the faults on their schedule (see the header); `stop()` ends them and hands back what was injected. */
export function startChaos(options: ChaosOptions): ChaosHandle {
  const { log, random } = options;
  const [minGap, maxGap] = options.intervalMs ?? intervalFromEnv() ?? DEFAULT_INTERVAL_MS;
  const injector = createFaultInjector(options);
  const started = Date.now();
  let stopped = false;
  let wake: (() => void) | null = null;
  const gap = () => minGap + random() * (maxGap - minGap);
  // the fault slots: planned for the run's length when it is known, else one after another
  const slots: number[] = [];
  if (options.durationMs) for (let t = gap(); t < options.durationMs; t += gap()) slots.push(t);
  const plan = options.durationMs ? planFaults(slots, options.durationMs) : [];
  const kindOf = (i: number) => (options.durationMs ? plan[i] : i === 1 ? 'restart-postgres' : i === 3 ? 'restart-temporal' : 'kill');

  const loop = (async () => {
    for (let i = 0; !stopped; i += 1) {
      // without a planned run, each gap is counted from the end of the last fault's recovery
      const next = options.durationMs ? started + (slots[i] ?? Infinity) : Date.now() + gap();
      if (!Number.isFinite(next)) break;
      const wait = next - Date.now();
      if (wait > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
      if (stopped) break;
      const kind = kindOf(i);
      try {
        if (kind === 'kill') await injector.kill();
        else await injector.restart(kind);
      } catch (err) {
        log(`chaos: fault ${i + 1} (${kind}) failed: ${(err as Error).stack ?? err}`);
      }
      // the next fault never starts before this one's recovery: its slot moves up when this took longer
      if (options.durationMs && started + (slots[i + 1] ?? Infinity) < Date.now()) slots[i + 1] = Date.now() - started + minGap / 2;
    }
  })();

  log(
    `chaos: a fault every ${minGap / 1000}-${maxGap / 1000}s${options.durationMs ? ` (${slots.length} planned: ${plan.filter((k) => k === 'kill').length} kills, PostgreSQL restart at ~${Math.round((slots[plan.indexOf('restart-postgres')] ?? 0) / 1000)}s, Temporal restart at ~${Math.round((slots[plan.indexOf('restart-temporal')] ?? 0) / 1000)}s)` : ''}`,
  );

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await injector.close();
      const faults = injector.faults();
      const planned = new Set(plan.filter((k) => k !== 'kill'));
      for (const kind of ['restart-postgres', 'restart-temporal'] as const) {
        if ((planned.has(kind) || !options.durationMs) && !faults.some((f) => f.kind === kind)) log(`chaos: the run ended before the ${kind} fault; it was not injected`);
      }
      return faults;
    },
  };
}
