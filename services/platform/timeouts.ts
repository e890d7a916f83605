/** What withTimeout answers when the time ran out first. */
export const TIMED_OUT = Symbol('timed out');

/** The promise's answer, or TIMED_OUT after `ms` (the promise itself goes on; its answer is then ignored). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * withTimeout for work that takes an AbortSignal (a Temporal call through `client.withAbortSignal`): when the time runs
 * out first, the signal is aborted, so the call stops instead of going on unseen (a long poll for an update's outcome
 * would otherwise keep its RPC open, and the process alive, for a minute or more after its answer stopped mattering).
 */
export async function withTimeoutAborting<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  const controller = new AbortController();
  const answer = await withTimeout(work(controller.signal), ms);
  if (answer === TIMED_OUT) controller.abort();
  return answer;
}
