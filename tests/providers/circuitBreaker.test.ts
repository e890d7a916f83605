import { CircuitBreaker, CircuitBreakerError } from '../../providers/circuitBreaker';
import { CIRCUIT_BREAKER_DEFAULTS } from '../../domain/constants';

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const ok = () => Promise.resolve('ok');
const boom = () => Promise.reject(new Error('boom'));

async function failTimes(breaker: CircuitBreaker, n: number) {
  for (let i = 0; i < n; i += 1) await expect(breaker.execute(boom)).rejects.toThrow('boom');
}

describe('CircuitBreaker', () => {
  it('uses the spec defaults: 5 failures, 30 s timeout, 60 s reset, 5 min window, 3 half-open calls', () => {
    expect(CIRCUIT_BREAKER_DEFAULTS).toEqual({ failureThreshold: 5, callTimeoutMs: 30000, resetTimeoutMs: 60000, windowMs: 300000, halfOpenMaxCalls: 3 });
  });

  it('stays CLOSED below the threshold and opens at the 5th failure within the window', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('fal:imageEdit', { now: clock.now });
    await failTimes(breaker, 4);
    expect(breaker.state).toBe('CLOSED');
    await expect(breaker.execute(ok)).resolves.toBe('ok');
    await failTimes(breaker, 1);
    expect(breaker.state).toBe('OPEN');
  });

  it('forgets failures older than the 5 minute window', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('b', { now: clock.now });
    await failTimes(breaker, 4);
    clock.advance(5 * 60 * 1000 + 1);
    expect(breaker.recentFailures).toBe(0);
    await failTimes(breaker, 4);
    expect(breaker.state).toBe('CLOSED');
    await failTimes(breaker, 1);
    expect(breaker.state).toBe('OPEN');
  });

  it('fails fast when OPEN with an error naming the breaker and saying "is OPEN", without calling', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('fal:imageToVideo', { now: clock.now });
    await failTimes(breaker, 5);
    const call = jest.fn(ok);
    const error = await breaker.execute(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CircuitBreakerError);
    expect((error as CircuitBreakerError).message).toContain('fal:imageToVideo');
    expect((error as CircuitBreakerError).message).toContain('is OPEN');
    expect((error as CircuitBreakerError).code).toBe('CIRCUIT_OPEN');
    expect(call).not.toHaveBeenCalled();
  });

  it('uses the fallback instead of failing when OPEN', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('b', { now: clock.now });
    await failTimes(breaker, 5);
    await expect(breaker.execute(ok, async (e) => `fallback after ${e.code}`)).resolves.toBe('fallback after CIRCUIT_OPEN');
  });

  it('goes HALF_OPEN after the 60 s reset time and closes after half of the 3 trial calls (2) succeed', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('b', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(59_999);
    expect(breaker.state).toBe('OPEN');
    clock.advance(1);
    expect(breaker.state).toBe('HALF_OPEN');
    await breaker.execute(ok);
    expect(breaker.state).toBe('HALF_OPEN');
    await breaker.execute(ok);
    expect(breaker.state).toBe('CLOSED');
    // closed again with a clean slate: 4 failures do not re-open it
    await failTimes(breaker, 4);
    expect(breaker.state).toBe('CLOSED');
  });

  it('re-opens on a failure in HALF_OPEN and waits a full reset time again', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('b', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(60_000);
    await breaker.execute(ok);
    await failTimes(breaker, 1);
    expect(breaker.state).toBe('OPEN');
    clock.advance(30_000);
    await expect(breaker.execute(ok)).rejects.toThrow('is OPEN');
    clock.advance(30_000);
    expect(breaker.state).toBe('HALF_OPEN');
  });

  it('admits at most 3 calls in HALF_OPEN and refuses the 4th with "half-open limit exceeded"', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('fal:upscale', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(60_000);
    const gates: Array<() => void> = [];
    const slow = () => new Promise<string>((resolve) => gates.push(() => resolve('slow')));
    const inFlight = [breaker.execute(slow), breaker.execute(slow), breaker.execute(slow)];
    const error = await breaker.execute(ok).catch((e: unknown) => e);
    expect((error as Error).message).toBe('Circuit breaker "fal:upscale" half-open limit exceeded');
    expect((error as CircuitBreakerError).code).toBe('CIRCUIT_HALF_OPEN_LIMIT');
    gates.forEach((open) => open());
    await expect(Promise.all(inFlight)).resolves.toEqual(['slow', 'slow', 'slow']);
    expect(breaker.state).toBe('CLOSED');
  });

  it('times a slow call out with "timeout after <ms>ms", aborts its signal and counts it as a failure', async () => {
    const breaker = new CircuitBreaker('b', { callTimeoutMs: 25, failureThreshold: 2 });
    let aborted = false;
    const hang = (signal: AbortSignal) =>
      new Promise<string>((_, reject) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        });
      });
    await expect(breaker.execute(hang)).rejects.toThrow('timeout after 25ms');
    expect(aborted).toBe(true);
    expect(breaker.recentFailures).toBe(1);
    await expect(breaker.execute(hang)).rejects.toThrow('timeout after 25ms');
    expect(breaker.state).toBe('OPEN');
  });

  it('does not count errors the filter calls healthy (a rejected input is not an outage)', async () => {
    const breaker = new CircuitBreaker('b', { isFailure: (e) => !(e instanceof TypeError) });
    for (let i = 0; i < 10; i += 1) await expect(breaker.execute(() => Promise.reject(new TypeError('bad input')))).rejects.toThrow('bad input');
    expect(breaker.state).toBe('CLOSED');
    expect(breaker.recentFailures).toBe(0);
  });

  it('ignores the late outcome of a call that started before the breaker changed state', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker('b', { now: clock.now });
    let release: () => void = () => undefined;
    const late = breaker.execute(() => new Promise<string>((_, reject) => (release = () => reject(new Error('late')))));
    await failTimes(breaker, 5);
    clock.advance(60_000);
    await breaker.execute(ok); // half-open, 1 success
    release();
    await expect(late).rejects.toThrow('late');
    expect(breaker.state).toBe('HALF_OPEN');
  });

  it('reports every state change', async () => {
    const clock = fakeClock();
    const changes: string[] = [];
    const breaker = new CircuitBreaker('b', { now: clock.now, onStateChange: ({ from, to }) => changes.push(`${from}->${to}`) });
    await failTimes(breaker, 5);
    clock.advance(60_000);
    await breaker.execute(ok);
    await breaker.execute(ok);
    expect(changes).toEqual(['CLOSED->OPEN', 'OPEN->HALF_OPEN', 'HALF_OPEN->CLOSED']);
  });
});
