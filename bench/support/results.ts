/**
 * Machine-readable benchmark results. Each bench calls `recordResults` once with its figures; when the runner
 * (scripts/bench.js) was given `--json` or `--compare`, it sets BENCH_RESULTS_FILE and every record is appended there
 * as one JSON line, which the runner gathers into a single JSON document. Without it, nothing is written.
 *
 * A ratio is always "the product's path against its baseline measured in the same run" (for example HTTP req/s over
 * pg direct req/s); a figure is an absolute value (ms, MB) that only means something on the same machine.
 */
import fs from 'node:fs';

export type Better = 'higher' | 'lower';

export interface BenchMeasure {
  /** stable key, e.g. "http_vs_pg" */
  name: string;
  value: number;
  /** 'x' for ratios, else the unit of the figure (ms, MB, req/s, s) */
  unit: string;
  better: Better;
  /** the target, when there is one: value must be >= target (higher) or <= target (lower) */
  target?: number;
  /** a ratio against an in-run baseline (compared across runs), or an absolute figure */
  kind: 'ratio' | 'figure';
  description?: string;
}

export interface BenchRecord {
  bench: string;
  measures: BenchMeasure[];
}

export function ratio(name: string, value: number, better: Better, description: string, target?: number): BenchMeasure {
  return { name, value, unit: 'x', better, target, kind: 'ratio', description };
}

export function figure(name: string, value: number, unit: string, better: Better, description: string, target?: number): BenchMeasure {
  return { name, value, unit, better, target, kind: 'figure', description };
}

export function meetsTarget(m: Pick<BenchMeasure, 'value' | 'better' | 'target'>): boolean | null {
  if (m.target === undefined) return null;
  return m.better === 'higher' ? m.value >= m.target : m.value <= m.target;
}

/** Prints the measures that have a target (met or missed) and appends the record for the runner when asked. */
export function recordResults(bench: string, measures: BenchMeasure[]): void {
  const bad = measures.filter((m) => !Number.isFinite(m.value));
  if (bad.length) throw new Error(`bench ${bench}: non-finite result ${bad.map((m) => m.name).join(', ')}`);
  const targeted = measures.filter((m) => m.target !== undefined);
  if (targeted.length) {
    process.stdout.write('targets:\n');
    for (const m of targeted) {
      const sign = m.better === 'higher' ? '>=' : '<=';
      const value = m.unit === 'x' ? `${m.value.toFixed(2)}x` : `${m.value.toFixed(1)} ${m.unit}`;
      const target = m.unit === 'x' ? `${m.target}x` : `${m.target} ${m.unit}`;
      process.stdout.write(`  ${m.name.padEnd(28)} ${value.padStart(12)}  target ${sign} ${target.padEnd(10)} ${meetsTarget(m) ? 'met' : 'MISSED'}\n`);
    }
  }
  const file = process.env.BENCH_RESULTS_FILE;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ bench, measures } satisfies BenchRecord)}\n`);
}
