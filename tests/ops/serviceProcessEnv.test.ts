/**
 * The environment every API and worker starts with (scripts/lib/serviceProcess.js): jemalloc preloaded where Debian's
 * libjemalloc2 is installed, two glibc arenas otherwise, and an operator's own values kept.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { serviceProcessEnv, jemallocPath, JEMALLOC_PATHS } = require('../../scripts/lib/serviceProcess') as {
  serviceProcessEnv: (env: Record<string, string>, options?: { jemalloc?: string | null }) => Record<string, string>;
  jemallocPath: (exists?: (candidate: string) => boolean) => string | null;
  JEMALLOC_PATHS: string[];
};

it('preloads jemalloc when it is installed and keeps two arenas for glibc', () => {
  expect(serviceProcessEnv({ SERVICE_NAME: 'worker' }, { jemalloc: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' })).toEqual({
    SERVICE_NAME: 'worker',
    MALLOC_ARENA_MAX: '2',
    LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  });
  expect(serviceProcessEnv({ SERVICE_NAME: 'api' }, { jemalloc: null })).toEqual({ SERVICE_NAME: 'api', MALLOC_ARENA_MAX: '2' });
});

it("keeps an operator's own allocator settings", () => {
  const env = serviceProcessEnv({ LD_PRELOAD: '/opt/tcmalloc.so', MALLOC_ARENA_MAX: '4' }, { jemalloc: JEMALLOC_PATHS[0] });
  expect(env).toMatchObject({ LD_PRELOAD: '/opt/tcmalloc.so', MALLOC_ARENA_MAX: '4' });
});

it('finds the library on the paths Debian installs it to', () => {
  expect(jemallocPath((candidate: string) => candidate === '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2')).toBe('/usr/lib/aarch64-linux-gnu/libjemalloc.so.2');
  expect(jemallocPath(() => false)).toBeNull();
});
