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
