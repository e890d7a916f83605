import { UPLOAD_MAX_ATTEMPTS, UPLOAD_RETRY_BASE_MS, UPLOAD_RETRY_MAX_MS } from '../../../domain/constants';

/** How one upload attempt ended, as far as retrying cares. */
export type AttemptFailure =
  | { kind: 'http'; status: number; message: string }
  | { kind: 'network'; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'aborted'; message: string };

export class UploadAttemptError extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.message);
    this.name = 'UploadAttemptError';
  }
}

/**
 * The spec's rule (000 section 7): network failures, timeouts, 5xx and 429 are retried; any other 4xx is not,
 * and 401 and 403 never are. A cancelled upload is not retried either.
 */
export function isRetryable(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case 'network':
    case 'timeout':
      return true;
    case 'aborted':
      return false;
    case 'http':
      if (failure.status === 401 || failure.status === 403) return false;
      if (failure.status === 429) return true;
      return failure.status >= 500;
  }
}

/** Jitter added on top of the exponential delay: up to this share of it. */
export const RETRY_JITTER_RATIO = 0.25;

/**
 * The wait before attempt `nextAttempt` (2, 3, ...): 2 s, 4 s, 8 s ... capped at 10 s, plus up to 25% jitter
 * so many clients failing together do not come back together. `random` is in [0, 1).
 */
export function retryDelayMs(nextAttempt: number, random: number): number {
  const exponential = Math.min(UPLOAD_RETRY_MAX_MS, UPLOAD_RETRY_BASE_MS * 2 ** Math.max(0, nextAttempt - 2));
  return Math.floor(exponential + exponential * RETRY_JITTER_RATIO * random);
}

export interface RetryOptions {
  maxAttempts?: number;
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
  /** told before each retry, e.g. to show "retrying" */
  onRetry?: (nextAttempt: number, failure: AttemptFailure, delayMs: number) => void;
}

function failureOf(err: unknown): AttemptFailure {
  if (err instanceof UploadAttemptError) return err.failure;
  return { kind: 'network', message: err instanceof Error ? err.message : String(err) };
}

/** Runs `attempt` up to 3 times (by default), waiting between tries, until it succeeds or fails for good. */
export async function withUploadRetry<T>(attempt: (attemptNumber: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const maxAttempts = options.maxAttempts ?? UPLOAD_MAX_ATTEMPTS;
  const random = options.random ?? Math.random;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const failure = failureOf(err);
      if (n >= maxAttempts || !isRetryable(failure)) throw err instanceof UploadAttemptError ? err : new UploadAttemptError(failure);
      const delay = retryDelayMs(n + 1, random());
      options.onRetry?.(n + 1, failure, delay);
      await options.sleep(delay);
    }
  }
}
