import { describe, expect, it } from '@jest/globals';
import { runInBatches } from './batching';

describe('runInBatches', () => {
  it('runs 3 at a time with a 500 ms pause between batches, keeping order', async () => {
    const events: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const results = await runInBatches(
      [1, 2, 3, 4, 5, 6, 7],
      async (n) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        events.push(`start ${n}`);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return n * 10;
      },
      { sleep: async (ms) => void events.push(`pause ${ms}`) },
    );
    expect(maxRunning).toBe(3);
    expect(events).toEqual(['start 1', 'start 2', 'start 3', 'pause 500', 'start 4', 'start 5', 'start 6', 'pause 500', 'start 7']);
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70].map((value) => ({ ok: true, value })));
  });

  it("keeps going when an item fails, reporting that item's error", async () => {
    const results = await runInBatches(
      ['a', 'b', 'c', 'd'],
      async (s) => {
        if (s === 'b') throw new Error('b broke');
        return s.toUpperCase();
      },
      { sleep: async () => undefined },
    );
    expect(results.map((r) => (r.ok ? r.value : (r.error as Error).message))).toEqual(['A', 'b broke', 'C', 'D']);
  });
});
