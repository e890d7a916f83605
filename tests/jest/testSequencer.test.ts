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
});
