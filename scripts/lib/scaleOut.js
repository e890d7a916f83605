'use strict';
/**
 * The parts of the scaled-out start (scripts/scaleOut.js, `npm run start:scaled`) that need no process: its options,
 * the ports of the API processes, and the haproxy configuration rendered from ops/haproxy/haproxy.cfg.template.
 */
const fs = require('node:fs');
const path = require('node:path');

const TEMPLATE = path.join(__dirname, '..', '..', 'ops', 'haproxy', 'haproxy.cfg.template');
/** More than this many processes of one kind on one machine is a typo, not a plan. */
const MAX_PROCESSES = 32;

const USAGE = `Usage: npm run start:scaled -- [--apis N] [--workers M] [--port P] [--api-ports p1,p2,...] [--storage s3|local]
  --apis N        API processes behind haproxy (default 2, SCALE_APIS)
  --workers M     worker processes (default 2, SCALE_WORKERS)
  --port P        haproxy's public port (default PORT, else 3000)
  --api-ports     the API processes' own ports on 127.0.0.1 (default P+1 ... P+N)
  --storage       s3: SeaweedFS as in production (default; S3_ENDPOINT set: that one), local: files under STORAGE_DIR`;

class UsageError extends Error {
  constructor(message) {
    super(`${message}\n${USAGE}`);
    this.name = 'StartupError';
  }
}

function count(name, value, min) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > MAX_PROCESSES) throw new UsageError(`${name} must be a whole number from ${min} to ${MAX_PROCESSES}, got "${value}".`);
  return n;
}

function port(name, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`${name} must be a port number (1-65535), got "${value}".`);
  return n;
}

/**
 * The options of `npm run start:scaled -- ...` (argv after the script name), with the environment's defaults:
 * { apis, workers, port, apiPorts, storage }. Throws a StartupError-named error with the usage on anything wrong.
 */
function parseScaleArgs(argv, env = process.env) {
  const given = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') throw new UsageError('The scaled-out stack on one machine: N APIs behind haproxy, M workers.');
    const m = /^--(apis|workers|port|api-ports|storage)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`Unknown option "${arg}".`);
    const value = m[2] ?? argv[(i += 1)];
    if (value === undefined || value === '') throw new UsageError(`--${m[1]} needs a value.`);
    given[m[1]] = value;
  }
  const apis = count('--apis', given.apis ?? env.SCALE_APIS ?? 2, 1);
  const workers = count('--workers', given.workers ?? env.SCALE_WORKERS ?? 2, 0);
  const publicPort = port('--port', given.port ?? env.PORT ?? 3000);
  const apiPorts = given['api-ports'] ? given['api-ports'].split(',').map((p) => port('--api-ports', p.trim())) : Array.from({ length: apis }, (_, i) => publicPort + 1 + i);
  if (apiPorts.length !== apis) throw new UsageError(`--api-ports names ${apiPorts.length} port(s) for ${apis} API process(es).`);
  const all = [publicPort, ...apiPorts];
  if (new Set(all).size !== all.length) throw new UsageError(`The public port and the API ports must all differ, got ${all.join(', ')}.`);
  if (apiPorts.some((p) => p > 65535)) throw new UsageError(`The API ports ${apiPorts.join(', ')} do not all fit under 65536: choose --port or --api-ports.`);
  const storage = given.storage ?? (env.STORAGE_BACKEND === 'local' ? 'local' : 's3');
  if (storage !== 's3' && storage !== 'local') throw new UsageError(`--storage must be "s3" or "local", got "${storage}".`);
  return { apis, workers, port: publicPort, apiPorts, storage };
}

/** The supervised children's names: api-1 ... api-N, worker-1 ... worker-M. */
function apiName(i) {
  return `api-${i + 1}`;
}

function workerName(i) {
  return `worker-${i + 1}`;
}

/**
 * The configuration for the local balancer: `bind` (host:port) and one server line per API process (127.0.0.1 and its
 * port, named api-1 ... so X-Served-By names the supervised child). The `#compose ` lines are docker compose's only.
 */
function renderHaproxyConfig({ bind, apiPorts, template = fs.readFileSync(TEMPLATE, 'utf8') }) {
  const servers = apiPorts.map((p, i) => `server ${apiName(i)} 127.0.0.1:${p}`).join('\n    ');
  const out = template
    .split('\n')
    .filter((line) => !line.startsWith('#compose '))
    .join('\n')
    .replaceAll('{{BIND}}', bind)
    .replaceAll('{{SERVERS}}', servers);
  if (/\{\{[A-Z]+\}\}/.test(out)) throw new Error(`the haproxy template ${TEMPLATE} has a placeholder left: ${/\{\{[A-Z]+\}\}/.exec(out)[0]}`);
  return out;
}

module.exports = { TEMPLATE, USAGE, parseScaleArgs, renderHaproxyConfig, apiName, workerName };
