import {
  webhookAnswerVerdict,
  webhookRetryDelayMs,
  WEBHOOK_RETRY_BASE_MS,
  WEBHOOK_RETRY_MAX_MS,
  WEBHOOK_RETRY_WINDOW_MS,
} from './webhookDelivery';

describe('webhook retry schedule', () => {
  it('doubles the ceiling from 30 s after each failed attempt up to 6 h, with full jitter below it', () => {
    expect(webhookRetryDelayMs(1, 0.999999)).toBe(Math.floor(0.999999 * WEBHOOK_RETRY_BASE_MS));
    expect(webhookRetryDelayMs(2, 0.5)).toBe(WEBHOOK_RETRY_BASE_MS);
    expect(webhookRetryDelayMs(5, 0.5)).toBe(8 * WEBHOOK_RETRY_BASE_MS);
    expect(webhookRetryDelayMs(11, 0.5)).toBe(WEBHOOK_RETRY_MAX_MS / 2);
    expect(webhookRetryDelayMs(500, 0.5)).toBe(WEBHOOK_RETRY_MAX_MS / 2);
    expect(webhookRetryDelayMs(3, 0)).toBe(0);
    for (let n = 1; n < 60; n++) {
      const d = webhookRetryDelayMs(n, Math.random());
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(WEBHOOK_RETRY_MAX_MS);
    }
    expect(webhookRetryDelayMs(3, 0.5, { baseMs: 10, maxMs: 25 })).toBe(12);
  });

  it('keeps trying for 3 days: at least one attempt every 6 hours until the window ends', () => {
    expect(WEBHOOK_RETRY_WINDOW_MS).toBe(3 * 24 * 3600 * 1000);
    expect(WEBHOOK_RETRY_MAX_MS).toBe(6 * 3600 * 1000);
  });

  it('retries 5xx, 408, 429, no answer and redirects; fails other 4xx; 410 is gone; 2xx succeeded', () => {
    expect([200, 201, 204, 299].map(webhookAnswerVerdict)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect([500, 502, 503, 504, 429, 408, null, 301, 302, 101].map(webhookAnswerVerdict)).toEqual(Array(10).fill('retry'));
    expect([400, 401, 403, 404, 405, 413, 422].map(webhookAnswerVerdict)).toEqual(Array(7).fill('failed'));
    expect(webhookAnswerVerdict(410)).toBe('gone');
  });
});
