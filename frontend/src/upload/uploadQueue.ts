import { runInBatches } from './batching';
import { withUploadRetry, type AttemptFailure, UploadAttemptError } from './retryPolicy';

export interface UploadProgress {
  /** 0-100 over all files, counting the bytes of files still in flight */
  percent: number;
  completed: number;
  total: number;
  currentFile: string | null;
  /** what the file in flight is doing besides sending, e.g. 'Resuming…' after a dropped connection */
  note?: string | null;
}

export interface UploadFailure {
  name: string;
  message: string;
}

export interface UploadSummary<R> {
  succeeded: Array<{ name: string; result: R }>;
  failed: UploadFailure[];
}

export interface UploadQueueDeps<F extends { name: string }, P, R> {
  /** Makes the file ready to send (compression); runs once per file, not per attempt. */
  prepare: (file: F) => Promise<P>;
  /** One attempt; reports its own upload progress as a 0-1 fraction (and notes such as resuming); fails with UploadAttemptError. */
  send: (prepared: P, onFraction: (fraction: number) => void, onNote: (note: string | null) => void) => Promise<R>;
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
  onProgress?: (progress: UploadProgress) => void;
}

function messageOf(error: unknown): string {
  if (error instanceof UploadAttemptError) return error.failure.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Uploads files in batches of 3 (500 ms apart), each with up to 3 attempts, reporting overall progress.
 * Never throws: the summary says which files went up and which did not, and why.
 */
export async function uploadInBatches<F extends { name: string }, P, R>(files: readonly F[], deps: UploadQueueDeps<F, P, R>): Promise<UploadSummary<R>> {
  const fractions = files.map(() => 0);
  let completed = 0;
  const inFlight: string[] = [];
  const notes = files.map((): string | null => null);
  const report = (): void => {
    const total = files.length;
    const percent = total === 0 ? 100 : Math.round((fractions.reduce((a, b) => a + b, 0) / total) * 100);
    const note = notes.find((n) => n !== null) ?? null;
    deps.onProgress?.({ percent: Math.min(100, percent), completed, total, currentFile: inFlight[inFlight.length - 1] ?? null, note });
  };
  report();

  const results = await runInBatches(
    files,
    async (file, index) => {
      inFlight.push(file.name);
      report();
      try {
        const prepared = await deps.prepare(file);
        return await withUploadRetry(
          () => {
            fractions[index] = 0;
            return deps.send(
              prepared,
              (fraction) => {
                fractions[index] = Math.max(0, Math.min(1, fraction)) * 0.99;
                report();
              },
              (note) => {
                notes[index] = note;
                report();
              },
            );
          },
          { sleep: deps.sleep, random: deps.random },
        );
      } finally {
        fractions[index] = 1;
        notes[index] = null;
        completed++;
        inFlight.splice(inFlight.indexOf(file.name), 1);
        report();
      }
    },
    { sleep: deps.sleep },
  );

  const summary: UploadSummary<R> = { succeeded: [], failed: [] };
  results.forEach((r, i) => {
    if (r.ok) summary.succeeded.push({ name: files[i].name, result: r.value });
    else summary.failed.push({ name: files[i].name, message: messageOf(r.error) });
  });
  return summary;
}

export type { AttemptFailure };
