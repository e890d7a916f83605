import { describe, expect, it } from '@jest/globals';
import { RECONNECT_BACKOFF_MS, eventStreamUrl, reconnectDelay } from './events';

describe('event stream reconnects', () => {
  it('backs off from about 1 s to about 30 s, with at most 20 % jitter either way', () => {
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const base = RECONNECT_BACKOFF_MS[Math.min(attempt, RECONNECT_BACKOFF_MS.length - 1)];
      for (let i = 0; i < 20; i += 1) {
        const delay = reconnectDelay(attempt);
        expect(delay).toBeGreaterThanOrEqual(base * 0.8);
        expect(delay).toBeLessThanOrEqual(base * 1.2);
      }
    }
    expect(RECONNECT_BACKOFF_MS[0]).toBe(1000);
    expect(RECONNECT_BACKOFF_MS[RECONNECT_BACKOFF_MS.length - 1]).toBe(30_000);
  });
});

describe('event stream address', () => {
  it("names the workspace (none for the personal one) and the last event seen", () => {
    expect(eventStreamUrl(null, null)).toBe('/api/events');
    expect(eventStreamUrl(null, '41')).toBe('/api/events?lastEventId=41');
    expect(eventStreamUrl('5b0f3c1e-2a44-4c1b-9d7e-0c6f7a1b2c3d', '41')).toBe('/api/events?workspaceId=5b0f3c1e-2a44-4c1b-9d7e-0c6f7a1b2c3d&lastEventId=41');
  });
});
