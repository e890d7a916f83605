#!/usr/bin/env node
'use strict';
/**
 * `npm run start:scaled -- --apis N --workers M`: the production topology on one machine. Like `npm start`
 * (scripts/start.js, whose pieces it uses: scripts/lib/services.js, secrets.js, supervisor.js, localStripe.js) it
 * starts an embedded PostgreSQL unless DATABASE_URL is set and a file-backed Temporal dev server unless
 * TEMPORAL_ADDRESS is set, then runs the migrations; storage is S3 on SeaweedFS as in production (unless S3_ENDPOINT
 * names one, or --storage local). Then, under one supervisor, N API processes on 127.0.0.1 at ports of their own,
 * M worker processes, and haproxy (Debian's package, installed on first use) on the public port balancing the APIs
 * (health checks on /health/live, event streams passed through; ops/haproxy/haproxy.cfg.template). A child that dies
 * is restarted with backoff; one that crash-loops stops everything. Ctrl-C or SIGTERM stops the children, then
 * SeaweedFS, Temporal and PostgreSQL. Data lives in DATA_DIR (default .data/scaled: its own database, Temporal
 * history, objects and secrets, apart from `npm start`'s local files). docs/operations.md "Scaled out on one machine".
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const tools = require('./lib/tools');
const secrets = require('./lib/secrets');
const { Supervisor } = require('./lib/supervisor');
const { onClosedOutput } = require('./lib/closedOutput');
const { serviceProcessEnv } = require('./lib/serviceProcess');
const { buildFrontendIfStale } = require('./lib/frontendBuild');
const { parseScaleArgs, renderHaproxyConfig, apiName, workerName } = require('./lib/scaleOut');

const ROOT = tools.ROOT;
// the AWS SDK's notice about Node versions to come (SeaweedFS's start-up probe here, the APIs and workers) says
// nothing about this stack
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const DATA = path.resolve(ROOT, process.env.DATA_DIR ?? path.join('.data', 'scaled'));
const cleanups = [];
let supervisor = null;
let stopping = null;

// the reader of this output killed (npm, a test runner): stop as if told to, without writing to it again
const output = onClosedOutput(() => shutdown(0));

function report(line) {
  if (!output.closed()) process.stderr.write(`[scale] ${line}\n`);
}

function shown(p) {
  const rel = path.relative(ROOT, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

/** Stops the children, then the services in reverse order of start; exits with `code`. Safe to call more than once. */
function shutdown(code) {
  stopping ??= (async () => {
    process.stdout.write('\n[scale] stopping...\n');
    if (supervisor) await supervisor.stop();
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        report(`cleanup failed: ${err.message}`);
      }
    }
    process.exit(code);
  })();
  return stopping;
}

/** The migrations, as a child the shutdown can stop. */
function migrate(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'db/migrate.ts', 'latest'], { cwd: ROOT, env, stdio: 'inherit' });
    cleanups.push(() => new Promise((done) => (child.exitCode !== null || child.signalCode !== null ? done() : (child.once('exit', () => done()), child.kill('SIGTERM')))));
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(Object.assign(new Error(`migrations failed (${signal ?? `exit ${code}`}); see the lines above`), { name: 'StartupError' }))));
  });
}

async function answers(url) {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

async function main() {
  const opts = parseScaleArgs(process.argv.slice(2));
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    if (signals > 1) report('stopping already; a moment please');
    shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // under `npm run`, a SIGTERM to npm kills its shell and never reaches this process: a changed parent means the same
  const parent = process.ppid;
  if (parent > 1) {
    setInterval(() => {
      if (process.ppid !== parent) {
        report('the parent process (npm) has gone away');
        shutdown(0);
      }
    }, 500).unref();
  }

  tools.ensureNodeModules();
  const services = require('./lib/services');
  const { planLocalStripe } = require('./lib/localStripe');
  const haproxy = tools.ensureHaproxy();
  const temporalCli = process.env.TEMPORAL_ADDRESS ? null : tools.ensureTemporalCli();
  const useSeaweedfs = opts.storage === 's3' && !process.env.S3_ENDPOINT;
  const weed = useSeaweedfs ? tools.ensureSeaweedfs() : null;
  if (opts.workers > 0) {
    tools.ensureFfmpeg();
    tools.ensureBrandFonts();
    tools.ensureJemalloc();
  }

  const host = process.env.HOST ?? '127.0.0.1';
  const localHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  for (const p of [opts.port, ...opts.apiPorts]) {
    if (await services.portOpen(p, p === opts.port ? localHost : '127.0.0.1')) throw new services.StartupError(`Port ${p} is taken. Fix: stop what listens there, or choose other ports with --port and --api-ports.`);
  }

  const env = { ...process.env };
  fs.mkdirSync(DATA, { recursive: true });
  const local = secrets.ensureLocalSecrets(DATA, env);
  if (local.generated.length) tools.log(`generated ${local.generated.join(', ')} into ${shown(local.file)} (kept across restarts)`);
  Object.assign(env, local.values);
  const accessCode = secrets.ensureLocalAccessCode(DATA, env);
  if (accessCode.code) env.ENHANCE_ACCESS_CODE = accessCode.code;

  if (!env.DATABASE_URL) {
    const pgPort = Number(env.EMBEDDED_PG_PORT ?? 54320);
    const dataDir = path.join(DATA, 'postgres');
    tools.log(`starting embedded PostgreSQL on 127.0.0.1:${pgPort} (data in ${shown(dataDir)})`);
    const pg = await services.startEmbeddedPostgres({ dataDir, port: pgPort, log: tools.log, onSpawn: (stop) => cleanups.push(stop) });
    if (stopping) return;
    await pg.ensureDatabase('render_studio');
    env.DATABASE_URL = `${pg.url}/render_studio`;
  }
  let temporalUi = env.TEMPORAL_UI_URL ?? null;
  if (!env.TEMPORAL_ADDRESS) {
    const temporalPort = Number(env.TEMPORAL_PORT ?? 7233);
    // TEMPORAL_UI_PORT=0: no Web UI
    const uiPort = Number(env.TEMPORAL_UI_PORT ?? 8233);
    if (await services.portOpen(temporalPort)) throw new services.StartupError(`Port ${temporalPort} is taken, so the Temporal dev server cannot listen there. Fix: stop the other Temporal server, set TEMPORAL_PORT to a free port, or set TEMPORAL_ADDRESS to use that server.`);
    tools.log(`starting Temporal dev server on 127.0.0.1:${temporalPort} (data in ${shown(path.join(DATA, 'temporal'))})`);
    const temporal = await services.startTemporalDevServer({
      cli: temporalCli,
      port: temporalPort,
      uiPort,
      dbFile: path.join(DATA, 'temporal', 'temporal.db'),
      logFile: path.join(DATA, 'temporal', 'server.log'),
      onSpawn: (stop) => cleanups.push(stop),
    });
    if (stopping) return;
    env.TEMPORAL_ADDRESS = temporal.address;
    temporalUi = temporal.uiUrl;
    if (temporalUi) env.TEMPORAL_UI_URL = temporalUi;
  }
  let storageLine;
  if (opts.storage === 'local') {
    env.STORAGE_BACKEND = 'local';
    env.STORAGE_DIR = env.STORAGE_DIR ?? path.join(DATA, 'storage');
    storageLine = `local files in ${shown(env.STORAGE_DIR)}`;
  } else if (useSeaweedfs) {
    const dataDir = path.join(DATA, 'seaweedfs');
    tools.log(`starting SeaweedFS (S3) with its data in ${shown(dataDir)}`);
    // its ports are chosen free just before it binds them: another program may take one meanwhile, so a start that
    // fails is tried again (with other ports) twice
    let s3;
    for (let attempt = 1; !s3; attempt += 1) {
      try {
        s3 = await services.startSeaweedfs({ weed, dataDir, logFile: path.join(DATA, 'seaweedfs.log'), onSpawn: (stop) => cleanups.push(stop) });
      } catch (err) {
        if (stopping || attempt >= 3) throw err;
        report(`${err.message.split('\n')[0]} Trying again (attempt ${attempt + 1} of 3).`);
      }
    }
    if (stopping) return;
    Object.assign(env, { STORAGE_BACKEND: 's3', S3_ENDPOINT: s3.endpoint, S3_REGION: s3.region, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey, S3_FORCE_PATH_STYLE: 'true' });
    delete env.S3_PUBLIC_URL;
    storageLine = `S3 on SeaweedFS ${s3.endpoint}`;
  } else {
    env.STORAGE_BACKEND = 's3';
    storageLine = `S3 ${env.S3_ENDPOINT}`;
  }

  tools.log('running migrations');
  await migrate(env);
  if (stopping) return;
  if (!env.FRONTEND_DIST) buildFrontendIfStale();

  const publicUrl = env.PUBLIC_URL ?? `http://${localHost}:${opts.port}`;
  // every API believes the one X-Forwarded-For entry haproxy appends (sign-in limits count each client's address)
  Object.assign(env, { PUBLIC_URL: publicUrl, TRUST_PROXY: env.TRUST_PROXY ?? '1' });
  const localStripe = await planLocalStripe({ root: ROOT, env, dataDir: DATA, appHost: host, appLocalHost: localHost, appPort: opts.port });
  if (stopping) return;

  const configFile = path.join(DATA, 'haproxy.cfg');
  fs.writeFileSync(configFile, renderHaproxyConfig({ bind: `${host}:${opts.port}`, apiPorts: opts.apiPorts }));
  const check = spawnSyncQuiet(haproxy, ['-c', '-q', '-f', configFile]);
  if (check.status !== 0) throw new services.StartupError(`haproxy refuses ${shown(configFile)}:\n${check.output}`);

  supervisor = new Supervisor({ report });
  supervisor.on('crash-loop', ({ name }) => {
    report(`stopping everything: ${name} cannot stay up (fix the cause shown above, then start again)`);
    shutdown(1);
  });
  const tsx = ['--import', 'tsx'];
  if (localStripe) supervisor.add('stripe', { command: process.execPath, args: [...tsx, ...localStripe.args], env: { ...env, SERVICE_NAME: 'stripe' }, cwd: ROOT });
  opts.apiPorts.forEach((p, i) => {
    supervisor.add(apiName(i), { command: process.execPath, args: [...tsx, 'api/server.ts'], env: serviceProcessEnv({ ...env, HOST: '127.0.0.1', PORT: String(p), SERVICE_NAME: apiName(i) }), cwd: ROOT });
  });
  for (let i = 0; i < opts.workers; i += 1) {
    // metrics ports, when set, are the first worker's; each further worker takes the next one
    const ports = Object.fromEntries(['WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT'].filter((name) => env[name]).map((name) => [name, String(Number(env[name]) + i)]));
    supervisor.add(workerName(i), { command: process.execPath, args: [...tsx, 'workers/main.ts'], env: serviceProcessEnv({ ...env, ...ports, SERVICE_NAME: workerName(i) }), cwd: ROOT });
  }
  for (const [i, p] of opts.apiPorts.entries()) await services.waitFor(async () => stopping || answers(`http://127.0.0.1:${p}/health/live`), apiName(i), 120000);
  if (stopping) return;
  // once the APIs answer, so its first health checks pass; -db: in the foreground, so the supervisor sees it die
  // and restarts it like the others
  supervisor.add('balancer', { command: haproxy, args: ['-db', '-f', configFile], env, cwd: ROOT });
  // haproxy's health checks have brought every API into rotation once its answers name each of them (X-Served-By)
  const inRotation = new Set();
  await services.waitFor(
    async () => {
      for (let i = 0; i < 2 * opts.apis && !stopping; i += 1) {
        const res = await fetch(`http://${localHost}:${opts.port}/api/health`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
        if (res?.ok) inRotation.add(res.headers.get('x-served-by'));
      }
      return stopping || inRotation.size >= opts.apis;
    },
    `haproxy with all ${opts.apis} APIs in rotation`,
    60000,
  );
  if (stopping) return;
  // one write: a reader of the output sees the whole banner at once
  const banner = [
    `\n  Render studio:  ${publicUrl}  (haproxy, balancing ${opts.apis} API process${opts.apis === 1 ? '' : 'es'})`,
    `  APIs:           ${opts.apiPorts.map((p, i) => `${apiName(i)} http://127.0.0.1:${p}`).join(', ')}`,
    `  Workers:        ${opts.workers}`,
    `  Storage:        ${storageLine}`,
    ...(temporalUi ? [`  Temporal UI:    ${temporalUi}`] : []),
    `  Ctrl-C stops everything; data stays in ${shown(DATA)}/\n\n`,
  ];
  process.stdout.write(banner.join('\n'));
}

function spawnSyncQuiet(command, args) {
  const r = require('node:child_process').spawnSync(command, args, { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function fail(err) {
  const expected = err && err.name === 'StartupError';
  report(expected ? err.message : `failed: ${err && err.stack ? err.stack : err}`);
  shutdown(err && err.message && err.message.includes('Usage: npm run start:scaled') ? 2 : 1);
}

process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);
main().catch((err) => (stopping ? undefined : fail(err)));
