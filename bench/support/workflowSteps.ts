/**
 * Where a workflow's time goes, from its recorded history: for runs of the same workflow (same event sequence),
 * the p50 time from each event to the next, labelled with the event type and, for activities, the activity type.
 * Scheduled -> started of a task is queue time (the worker's poll), started -> completed of an activity is its work,
 * a workflow task's scheduled -> completed is one round trip through the server and the worker's workflow code.
 */
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { percentile } from './stats';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

function label(event: HistoryEvent, activityTypes: Map<string, string>): string {
  const type = (EventType[event.eventType ?? 0] ?? String(event.eventType)).replace(/^EVENT_TYPE_/, '');
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (scheduled) {
    activityTypes.set(String(event.eventId), scheduled.activityType?.name ?? '?');
    return `${type} ${scheduled.activityType?.name ?? ''}`;
  }
  const ref =
    event.activityTaskStartedEventAttributes?.scheduledEventId ??
    event.activityTaskCompletedEventAttributes?.scheduledEventId ??
    event.activityTaskFailedEventAttributes?.scheduledEventId;
  if (ref != null) return `${type} ${activityTypes.get(String(ref)) ?? ''}`;
  const marker = event.markerRecordedEventAttributes?.markerName;
  if (marker) return `${type} ${marker}`;
  return type;
}

export interface StepTimes {
  /** one row per event position: its label and the p50 ms since the previous event */
  rows: Array<{ label: string; p50: number }>;
  /** p50 of execution started -> execution completed */
  totalP50: number;
}

export async function workflowStepTimes(address: string, workflowIds: string[]): Promise<StepTimes | null> {
  if (workflowIds.length === 0) return null;
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const runs: Array<{ labels: string[]; deltas: number[]; total: number }> = [];
    for (const id of workflowIds) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const events = history.events ?? [];
      const activityTypes = new Map<string, string>();
      const labels = events.map((e) => label(e, activityTypes));
      const times = events.map((e) => tsToMs(e.eventTime));
      runs.push({ labels, deltas: times.map((t, i) => (i === 0 ? 0 : t - times[i - 1])), total: times[times.length - 1] - times[0] });
    }
    // only runs with the most common event sequence (a retried activity would shift the positions)
    const key = (r: { labels: string[] }) => r.labels.join('|');
    const counts = new Map<string, number>();
    for (const r of runs) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
    const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const same = runs.filter((r) => key(r) === common);
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    return {
      rows: same[0].labels.map((l, i) => ({ label: l, p50: percentile(sorted(same.map((r) => r.deltas[i])), 50) })),
      totalP50: percentile(sorted(same.map((r) => r.total)), 50),
    };
  } finally {
    await connection.close();
  }
}

export function printStepTimes(title: string, steps: StepTimes): void {
  process.stdout.write(`\n${title}: workflow history, p50 ms since the previous event\n`);
  for (const row of steps.rows) process.stdout.write(`${row.p50.toFixed(1).padStart(8)}  ${row.label}\n`);
  process.stdout.write(`${steps.totalP50.toFixed(1).padStart(8)}  total, execution started -> completed\n`);
}
