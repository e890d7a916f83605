import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const SlowFirstSequencer = require('../setup/testSequencer');

const ROOT = path.resolve(__dirname, '..', '..');

type Test = { path: string; context: { config: { cacheDirectory: string } } };

/** A sequencer whose jest cache knows these files: seconds, and whether the file failed last time. */
function sequencerKnowing(known: Record<string, { seconds: number; failed?: boolean }>) {
  const sequencer = new SlowFirstSequencer({ contexts: [], globalConfig: {} });
  const cache: Record<string, [number, number]> = {};
  for (const [file, { seconds, failed }] of Object.entries(known)) cache[path.join(ROOT, file)] = [failed ? 0 : 1, seconds * 1000];
  sequencer._getCache = () => cache;
  const tests: Test[] = Object.keys(known).map((file) => ({ path: path.join(ROOT, file), context: { config: { cacheDirectory: '/nonexistent' } } }));
  return { order: () => (sequencer.sort(tests) as Test[]).map((t) => path.relative(ROOT, t.path)) };
}

describe('the test sequencer', () => {
  it('starts the longest files first', () => {
    const { order } = sequencerKnowing({ 'tests/a/short.test.ts': { seconds: 2 }, 'tests/a/long.test.ts': { seconds: 60 }, 'tests/a/mid.test.ts': { seconds: 20 } });
    expect(order()).toEqual(['tests/a/long.test.ts', 'tests/a/mid.test.ts', 'tests/a/short.test.ts']);
  });

  it('starts a file that failed last time first', () => {
    const { order } = sequencerKnowing({ 'tests/a/long.test.ts': { seconds: 60 }, 'tests/a/failed.test.ts': { seconds: 3, failed: true } });
    expect(order()[0]).toBe('tests/a/failed.test.ts');
  });

  it('spreads the browser files over the run instead of starting the long ones together', () => {
    const known: Record<string, { seconds: number }> = {};
    for (let i = 0; i < 4; i++) known[`tests/browser/page${i}.test.ts`] = { seconds: 50 };
    for (let i = 0; i < 12; i++) known[`tests/api/route${i}.test.ts`] = { seconds: 30 - i };
    const order = sequencerKnowing(known).order();
    // a third of the file time is in browser files: about every third file started is one, never two in a row
    const browserAt = order.flatMap((file, i) => (file.startsWith('tests/browser/') ? [i] : []));
    expect(browserAt).toHaveLength(4);
    for (let k = 1; k < browserAt.length; k++) expect(browserAt[k] - browserAt[k - 1]).toBeGreaterThan(1);
    expect(browserAt[browserAt.length - 1]).toBeGreaterThan(order.length / 2);
    // each group still longest first
    const api = order.filter((file) => file.startsWith('tests/api/'));
    expect(api).toEqual(Object.keys(known).filter((file) => file.startsWith('tests/api/')));
  });
});
