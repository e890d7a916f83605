/**
 * A Date that stands still unless the test moves it (jest.advanceTimersByTime or jest.setSystemTime), with timers and
 * I/O left real: for code that measures a period with Date.now() (a reuse window, a limiter's slot), so a busy
 * machine cannot let the period lapse between two steps of a test. Undo with jest.useRealTimers().
 */
const REAL = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] as const;

export function standStillDate(now: number = Date.now()): void {
  jest.useFakeTimers({ doNotFake: [...REAL], now });
}
