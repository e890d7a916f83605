/**
 * What every API and worker process is started with, by npm start (scripts/start.js) and start:scaled
 * (scripts/scaleOut.js); docker-compose.yml's app environment sets the same. glibc's malloc gives each thread that
 * allocates an arena of its own, and libvips' threads (sharp: the worker's image work, the API's thumbnails and
 * drafts) leave them fragmented: over a long run a worker's RSS grew by a fifth while its JS heap stayed flat (the
 * soak, docs/benchmarks.md). Two arenas keep it flat. An operator's own value wins.
 */
const SERVICE_PROCESS_DEFAULTS = { MALLOC_ARENA_MAX: '2' };

/** An API's or worker's environment: `env` over the defaults above. */
function serviceProcessEnv(env) {
  return { ...SERVICE_PROCESS_DEFAULTS, ...env };
}

module.exports = { serviceProcessEnv };
