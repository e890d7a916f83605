import { describe, expect, it } from '@jest/globals';
import { UploadAttemptError, isRetryable, retryDelayMs, withUploadRetry, type AttemptFailure } from './retryPolicy';

const http = (status: number): AttemptFailure => ({ kind: 'http', status, message: `status ${status}` });

describe('isRetryable', () => {
  it('retries network failures, timeouts, 5xx and 429', () => {
    expect(isRetryable({ kind: 'network', message: 'x' })).toBe(true);
    expect(isRetryable({ kind: 'timeout', message: 'x' })).toBe(true);
    for (const status of [500, 502, 503, 504, 429]) expect(isRetryable(http(status))).toBe(true);
  });

  it('never retries other 4xx, 401 and 403 included, nor a cancelled upload', () => {
    for (const status of [400, 401, 403, 404, 409, 413, 422]) expect(isRetryable(http(status))).toBe(false);
    expect(isRetryable({ kind: 'aborted', message: 'x' })).toBe(false);
  });
});

describe('retryDelayMs', () => {
  it('doubles from 2 s and stops at 10 s without jitter', () => {
    expect([2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 0))).toEqual([2000, 4000, 8000, 10000, 10000]);
  });

  it('adds up to 25% jitter on top', () => {
    expect(retryDelayMs(2, 0.5)).toBe(2250);
    expect(retryDelayMs(2, 0.999)).toBeLessThan(2500);
    expect(retryDelayMs(6, 0.999)).toBeLessThan(12500);
  });
});

describe('withUploadRetry', () => {
  function failing(failures: AttemptFailure[], answer = 'ok'): { attempt: () => Promise<string>; calls: () => number } {
    let n = 0;
    return {
      attempt: async () => {
        const failure = failures[n++];
        if (failure) throw new UploadAttemptError(failure);
        return answer;
      },
      calls: () => n,
    };
  }

  it('tries three times at most, sleeping 2 s then 4 s (plus jitter) between', async () => {
    const sleeps: number[] = [];
    const task = failing([http(503), { kind: 'network', message: 'offline' }, http(500)]);
    await expect(withUploadRetry(task.attempt, { sleep: async (ms) => void sleeps.push(ms), random: () => 0 })).rejects.toThrow('status 500');
    expect(task.calls()).toBe(3);
    expect(sleeps).toEqual([2000, 4000]);
  });

  it('succeeds on a later attempt', async () => {
    const task = failing([http(429)]);
    await expect(withUploadRetry(task.attempt, { sleep: async () => undefined, random: () => 0 })).resolves.toBe('ok');
    expect(task.calls()).toBe(2);
  });

  it.each([400, 401, 403, 413])('gives up at once on %i', async (status) => {
    const sleeps: number[] = [];
    const task = failing([http(status)]);
    await expect(withUploadRetry(task.attempt, { sleep: async (ms) => void sleeps.push(ms) })).rejects.toBeInstanceOf(UploadAttemptError);
    expect(task.calls()).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('treats an unexpected exception as a network failure (retried)', async () => {
    let n = 0;
    const result = await withUploadRetry(
      async () => {
        if (n++ === 0) throw new TypeError('Failed to fetch');
        return 'second time';
      },
      { sleep: async () => undefined },
    );
    expect(result).toBe('second time');
  });
});
