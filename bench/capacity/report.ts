/**
 * The worker-capacity benchmark's arithmetic (bench/capacity.ts), kept pure so tests/bench/capacity.test.ts checks it:
 * memory per in-flight job, throughput and the scaling ratio, schedule-to-start latencies out of a workflow history,
 * the peak of a Prometheus gauge, and the met / MISSED lines.
 */
import { percentile } from '../support/stats';

/** "60-120" (seconds) -> [60000, 120000] ms; a single number is a range of one value. */
export function parseSecondsRange(text: string, what: string): [number, number] {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?))?\s*$/.exec(text);
  if (!match) throw new Error(`${what} must be seconds or a range of seconds like 60-120, got "${text}"`);
  const least = Number(match[1]) * 1000;
  const most = Number(match[2] ?? match[1]) * 1000;
  if (most < least) throw new Error(`${what}: ${text} runs backwards`);
  return [Math.round(least), Math.round(most)];
}

/**
 * What each in-flight job costs in worker memory: the workers' RSS at their peak minus at idle (summed over the
 * run's worker processes), over the jobs in flight, in KB.
 */
export function rssPerJobKb(idleKb: readonly number[], peakKb: readonly number[], jobs: number): number {
  if (idleKb.length !== peakKb.length) throw new Error('one idle and one peak figure per worker');
  if (jobs <= 0) return 0;
  const grown = peakKb.reduce((a, b) => a + b, 0) - idleKb.reduce((a, b) => a + b, 0);
  return Math.max(0, grown) / jobs;
}

/** Completed jobs per minute, from the first start to the last completion. */
export function throughputPerMinute(completed: number, firstStartMs: number, lastDoneMs: number): number {
  const minutes = (lastDoneMs - firstStartMs) / 60_000;
  return minutes > 0 ? completed / minutes : 0;
}

/** The time a job takes at least (the provider's wait) against the time the run took: 1 is no queueing anywhere. */
export function waitShare(meanProviderMs: number, meanJobMs: number): number {
  return meanJobMs > 0 ? meanProviderMs / meanJobMs : 0;
}

/** A history event as far as the latencies need it (fetchHistory's protobuf events, flattened by `flattenEvent`). */
export interface HistoryEventLite {
  eventId: number;
  timeMs: number;
  kind: 'activityScheduled' | 'activityStarted' | 'activityCompleted' | 'workflowTaskScheduled' | 'workflowTaskStarted' | 'other';
  /** For a started event: the id of the scheduled event it started. */
  scheduledEventId?: number;
  /** For a started event: the worker that took the task. */
  identity?: string;
  activityType?: string;
}

interface LongLike {
  toString(): string;
}
interface RawEvent {
  eventId?: LongLike | number | null;
  eventTime?: { seconds?: LongLike | number | null; nanos?: number | null } | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: LongLike | number | null; identity?: string | null } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: LongLike | number | null } | null;
  workflowTaskScheduledEventAttributes?: object | null;
  workflowTaskStartedEventAttributes?: { scheduledEventId?: LongLike | number | null; identity?: string | null } | null;
}

const num = (v: LongLike | number | null | undefined): number => (v === null || v === undefined ? 0 : Number(v.toString()));

export function flattenEvent(event: RawEvent): HistoryEventLite {
  const timeMs = num(event.eventTime?.seconds) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
  const base = { eventId: num(event.eventId), timeMs };
  if (event.activityTaskScheduledEventAttributes) return { ...base, kind: 'activityScheduled', activityType: event.activityTaskScheduledEventAttributes.activityType?.name ?? undefined };
  if (event.activityTaskStartedEventAttributes) {
    const a = event.activityTaskStartedEventAttributes;
    return { ...base, kind: 'activityStarted', scheduledEventId: num(a.scheduledEventId), identity: a.identity ?? undefined };
  }
  if (event.activityTaskCompletedEventAttributes) return { ...base, kind: 'activityCompleted', scheduledEventId: num(event.activityTaskCompletedEventAttributes.scheduledEventId) };
  if (event.workflowTaskScheduledEventAttributes) return { ...base, kind: 'workflowTaskScheduled' };
  if (event.workflowTaskStartedEventAttributes) {
    const a = event.workflowTaskStartedEventAttributes;
    return { ...base, kind: 'workflowTaskStarted', scheduledEventId: num(a.scheduledEventId), identity: a.identity ?? undefined };
  }
  return { ...base, kind: 'other' };
}

export interface ScheduleToStart {
  /** ms from an activity's scheduling to its start, one per started activity */
  activityMs: number[];
  /** ms from a workflow task's scheduling to its start */
  workflowTaskMs: number[];
  /** started tasks (activities and workflow tasks) per worker identity */
  tasksByWorker: Record<string, number>;
}

/** Schedule-to-start of every started task in one history. */
export function scheduleToStart(events: readonly HistoryEventLite[]): ScheduleToStart {
  const scheduledAt = new Map<number, number>();
  const out: ScheduleToStart = { activityMs: [], workflowTaskMs: [], tasksByWorker: {} };
  for (const e of events) {
    if (e.kind === 'activityScheduled' || e.kind === 'workflowTaskScheduled') scheduledAt.set(e.eventId, e.timeMs);
    if (e.kind !== 'activityStarted' && e.kind !== 'workflowTaskStarted') continue;
    const from = scheduledAt.get(e.scheduledEventId ?? -1);
    if (from !== undefined) (e.kind === 'activityStarted' ? out.activityMs : out.workflowTaskMs).push(Math.max(0, e.timeMs - from));
    if (e.identity) out.tasksByWorker[e.identity] = (out.tasksByWorker[e.identity] ?? 0) + 1;
  }
  return out;
}

/** ms from scheduling to completion of each completed activity, by activity type: where a run's time went. */
export function activityDurations(events: readonly HistoryEventLite[]): Record<string, number[]> {
  const scheduled = new Map<number, HistoryEventLite>();
  const out: Record<string, number[]> = {};
  for (const e of events) {
    if (e.kind === 'activityScheduled') scheduled.set(e.eventId, e);
    if (e.kind !== 'activityCompleted') continue;
    const from = scheduled.get(e.scheduledEventId ?? -1);
    if (!from?.activityType) continue;
    (out[from.activityType] ??= []).push(Math.max(0, e.timeMs - from.timeMs));
  }
  return out;
}

export interface Spread {
  count: number;
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
  return { count: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) ?? 0, mean };
}

/** One sample of a Prometheus text exposition: name, labels, value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `where`. */
export function metricSum(samples: readonly MetricSample[], name: string, where: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

/** Keeps the highest value seen per key (slots used per queue and worker type, over a run's scrapes). */
export class PeakTracker {
  private readonly peaks = new Map<string, number>();

  see(key: string, value: number): void {
    if (!Number.isFinite(value)) return;
    this.peaks.set(key, Math.max(this.peaks.get(key) ?? Number.NEGATIVE_INFINITY, value));
  }

  get(key: string): number {
    return this.peaks.get(key) ?? 0;
  }

  entries(): Array<[string, number]> {
    return [...this.peaks.entries()].sort(([a], [b]) => a.localeCompare(b));
  }
}

export interface ChargeCheck {
  /** accounts with exactly one consume row of -cost and a ledger that adds up */
  chargedOnce: number;
  problems: string[];
}

/**
 * Every account ran one clip: exactly one consume row of `-cost`, and the ledger invariant holds (balance = ledger sum,
 * reserved = active reservations).
 */
export function checkCharges(
  accounts: readonly string[],
  consumes: ReadonlyMap<string, readonly number[]>,
  invariants: ReadonlyMap<string, { ok: boolean; balance: number; ledgerSum: number; reserved: number }>,
  cost: number,
): ChargeCheck {
  const problems: string[] = [];
  let chargedOnce = 0;
  for (const id of accounts) {
    const rows = consumes.get(id) ?? [];
    const invariant = invariants.get(id);
    const once = rows.length === 1 && rows[0] === -cost;
    if (!once) problems.push(`${id}: ${rows.length} consume row(s) ${JSON.stringify(rows)}`);
    if (!invariant?.ok) problems.push(`${id}: ledger ${invariant ? JSON.stringify(invariant) : 'not checked'}`);
    if (once && invariant?.ok) chargedOnce += 1;
  }
  return { chargedOnce, problems };
}

export interface Target {
  name: string;
  value: string;
  target: string;
  met: boolean;
}

export function targetLine(t: Target): string {
  return `  ${t.name.padEnd(44)} ${t.value.padStart(14)}  target ${t.target.padEnd(12)} ${t.met ? 'met' : 'MISSED'}`;
}
