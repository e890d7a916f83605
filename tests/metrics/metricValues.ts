import type { Metric } from 'prom-client';

/**
 * The current value of one series of a metric of this process's registry (0 when the series does not exist yet).
 * For a histogram, `sample` picks `_count` or `_sum`.
 */
export async function seriesValue(metric: Metric, labels: Record<string, string> = {}, sample?: '_count' | '_sum'): Promise<number> {
  const { name, values } = await metric.get();
  const found = values.find(
    (v) =>
      (sample ? v.metricName === `${name}${sample}` : v.metricName === undefined || v.metricName === name) &&
      Object.entries(labels).every(([key, value]) => String((v.labels as Record<string, unknown>)[key]) === value),
  );
  return found?.value ?? 0;
}

/** Parses Prometheus text into series lines: `name{labels} value`, comments dropped. */
export function seriesLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}
