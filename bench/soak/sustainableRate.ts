/**
 * The soak's default rate, derived from measured capacity: what the whole stack costs per user action of the mix
 * (CPU seconds, `stack_cpu_s_per_action`) and how many cores the machine has. The stack may use a share of the cores
 * (SUSTAINED_SHARE); the rest is k6, the event watchers and headroom for the backlog to drain after a burst. At 82 %
 * of 2 cores for 20 minutes the workers fell behind (schedule-to-start climbed to 100 s), and 73 % held for 10 minutes
 * only: the share is a little over half, well below both.
 *
 * The cost comes from this machine's last soak without faults (.data/soak-capacity.json, written at the end of each)
 * or else from the soak rows of docs/benchmarks.md (a measured run, written by `npm run docs:bench`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** the share of the machine's cores the stack may use at the default rate */
export const SUSTAINED_SHARE = 0.55;

export interface MeasuredCapacity {
  /** CPU seconds of the whole stack per user action */
  stackCpuSPerAction: number;
  /** where the figure comes from (shown in the soak's first line) */
  source: string;
}

export function capacityFile(root: string): string {
  return path.join(root, '.data', 'soak-capacity.json');
}

/** The figure from the generated table of docs/benchmarks.md: `| \`soak\` | \`stack_cpu_s_per_action\` | figure | 0.49 s | ...`. */
export function capacityFromBenchmarksDoc(text: string): number | null {
  const m = /^\| `soak` \| `stack_cpu_s_per_action` \| figure \| ([0-9.]+) s \|/m.exec(text);
  const value = m ? Number(m[1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : null;
}

export function readMeasuredCapacity(root: string): MeasuredCapacity | null {
  try {
    const saved = JSON.parse(fs.readFileSync(capacityFile(root), 'utf8')) as { stackCpuSPerAction?: unknown; measuredAt?: unknown };
    if (typeof saved.stackCpuSPerAction === 'number' && saved.stackCpuSPerAction > 0) {
      return { stackCpuSPerAction: saved.stackCpuSPerAction, source: `this machine's last soak (${String(saved.measuredAt ?? 'unknown time')})` };
    }
  } catch {
    // no soak has run here yet
  }
  try {
    const fromDoc = capacityFromBenchmarksDoc(fs.readFileSync(path.join(root, 'docs', 'benchmarks.md'), 'utf8'));
    if (fromDoc !== null) return { stackCpuSPerAction: fromDoc, source: 'docs/benchmarks.md' };
  } catch {
    // a copy without docs
  }
  return null;
}

/** What a soak without faults measured, for the next run's default rate. */
export function saveMeasuredCapacity(root: string, stackCpuSPerAction: number, at: Date = new Date()): void {
  fs.mkdirSync(path.dirname(capacityFile(root)), { recursive: true });
  fs.writeFileSync(capacityFile(root), `${JSON.stringify({ stackCpuSPerAction, measuredAt: at.toISOString() })}\n`);
}

/** User actions a second this machine sustains: cores × SUSTAINED_SHARE / cost per action, down to a tenth; 1 when nothing was measured. */
export function sustainableRate(capacity: MeasuredCapacity | null, cores: number = os.cpus().length): number {
  if (!capacity) return 1;
  return Math.max(0.1, Math.floor(((cores * SUSTAINED_SHARE) / capacity.stackCpuSPerAction) * 10) / 10);
}
