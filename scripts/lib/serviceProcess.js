/**
 * What every API and worker process is started with, by npm start (scripts/start.js) and start:scaled
 * (scripts/scaleOut.js); docker-compose.yml's app environment and the Dockerfile set the same.
 *
 * glibc's malloc leaves memory that libvips' threads (sharp: the worker's image work, the API's thumbnails and
 * drafts) freed fragmented over its arenas: over a long soak a worker's RSS grew by a fifth, later (two arenas,
 * `MALLOC_ARENA_MAX=2`) by a tenth, while its JS heap stayed flat (docs/benchmarks.md). sharp's documentation names
 * jemalloc as the allocator for long-running Linux processes; Debian's libjemalloc2 is preloaded when it is
 * installed (scripts/lib/tools.js installs it beside ffmpeg). An operator's own LD_PRELOAD or MALLOC_ARENA_MAX wins.
 */
const fs = require('node:fs');

const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2', '/usr/lib/libjemalloc.so.2'];

/** Debian's jemalloc (libjemalloc2) where it is installed, else null. */
function jemallocPath(exists = fs.existsSync) {
  return JEMALLOC_PATHS.find((candidate) => exists(candidate)) ?? null;
}

/** An API's or worker's environment: `env` over the defaults above. */
function serviceProcessEnv(env, { jemalloc = jemallocPath() } = {}) {
  const defaults = { MALLOC_ARENA_MAX: '2' };
  if (jemalloc) defaults.LD_PRELOAD = jemalloc;
  return { ...defaults, ...env };
}

module.exports = { serviceProcessEnv, jemallocPath, JEMALLOC_PATHS };
