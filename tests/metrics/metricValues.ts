import type { Metric } from 'prom-client';

/**
 * The current value of a metric of this process's registry: the sum of its series that carry `labels` (0 when there
 * is none yet). For a histogram, `sample` picks `_count` or `_sum`.
 */
export async function seriesValue(metric: Metric, labels: Record<string, string> = {}, sample?: '_count' | '_sum'): Promise<number> {
  const { name, values } = await metric.get();
  return (values as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>)
    .filter(
      (v) =>
        (sample ? v.metricName === `${name}${sample}` : v.metricName === undefined || v.metricName === name) &&
        Object.entries(labels).every(([key, value]) => String(v.labels[key]) === value),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

/** Parses Prometheus text into series lines: `name{labels} value`, comments dropped. */
export function seriesLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}
