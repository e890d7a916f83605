/**
 * What every worker process is started with, by npm start (scripts/start.js) and start:scaled (scripts/scaleOut.js);
 * docker-compose.yml's worker sets the same. glibc's malloc gives each thread that allocates an arena of its own, and
 * libvips' threads (sharp) leave them fragmented: over a long run a worker's RSS grew by a fifth while its JS heap
 * stayed flat (the soak, docs/benchmarks.md). Two arenas keep it flat. An operator's own value wins.
 */
const WORKER_PROCESS_ENV = { MALLOC_ARENA_MAX: '2' };

/** The worker's environment: `env` over the defaults above. */
function workerProcessEnv(env) {
  return { ...WORKER_PROCESS_ENV, ...env };
}

module.exports = { WORKER_PROCESS_ENV, workerProcessEnv };
