import { UPLOAD_BATCH_PAUSE_MS, UPLOAD_BATCH_SIZE } from '../../../domain/constants';

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface BatchOptions {
  batchSize?: number;
  pauseMs?: number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Runs `work` over `items` in batches (3 at a time by default), waiting 500 ms between batches; one item's
 * failure does not stop the others. Results keep the items' order.
 */
export async function runInBatches<I, T>(items: readonly I[], work: (item: I, index: number) => Promise<T>, options: BatchOptions): Promise<Array<Settled<T>>> {
  const size = options.batchSize ?? UPLOAD_BATCH_SIZE;
  const pause = options.pauseMs ?? UPLOAD_BATCH_PAUSE_MS;
  const results: Array<Settled<T>> = [];
  for (let start = 0; start < items.length; start += size) {
    if (start > 0) await options.sleep(pause);
    const batch = items.slice(start, start + size);
    const settled = await Promise.all(
      batch.map((item, i) =>
        work(item, start + i).then(
          (value): Settled<T> => ({ ok: true, value }),
          (error: unknown): Settled<T> => ({ ok: false, error }),
        ),
      ),
    );
    results.push(...settled);
  }
  return results;
}
