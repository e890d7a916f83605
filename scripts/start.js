#!/usr/bin/env node
'use strict';
/**
 * `npm start`: everything on one machine. Installs what is missing, starts an embedded PostgreSQL
 * when DATABASE_URL is unset and a file-backed Temporal dev server (with its Web UI) when
 * TEMPORAL_ADDRESS is unset, runs migrations, builds the front end when its sources changed,
 * then runs the API (serving the front end) and a worker under a supervisor (scripts/lib/supervisor.js), with the local
 * test-mode checkout (devStripe/, scripts/lib/localStripe.js) beside them when no Stripe key is set outside production:
 * a child that dies is restarted with backoff, one that crash-loops stops everything with a clear report.
 * Ctrl-C or SIGTERM stops the children, then Temporal, then PostgreSQL, and exits.
 * Data lives in DATA_DIR (.data/) and is reused by the next start, as are the secrets generated on the first
 * (DATA_DIR/secrets.json, scripts/lib/secrets.js) unless set in the environment.
 */
const { spawn } = require('node:child_process');
const path = require('node:path');
const tools = require('./lib/tools');
const secrets = require('./lib/secrets');
const { Supervisor } = require('./lib/supervisor');
const { onClosedOutput } = require('./lib/closedOutput');
const { serviceProcessEnv } = require('./lib/serviceProcess');
const { buildFrontendIfStale } = require('./lib/frontendBuild');

const ROOT = tools.ROOT;
const DATA = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
/** stop functions of the services started so far, stopped in reverse order */
const cleanups = [];
let supervisor = null;
let stopping = null;

/** A one-shot step that failed and has already printed why. */
class StepError extends Error {
  constructor(message) {
    super(message);
    this.name = 'StepError';
  }
}

/** A path as the user reads it best: relative inside the checkout, absolute elsewhere. */
function shown(p) {
  const rel = path.relative(ROOT, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

// the reader of this output killed (npm, a test runner): stop as if told to, without writing to it again
const output = onClosedOutput(() => shutdown(0));

function report(line) {
  if (!output.closed()) process.stderr.write(`[start] ${line}\n`);
}

/** Runs a one-shot step (migrations) as a child the shutdown can stop. */
function runStep(name, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: 'inherit' });
    cleanups.push(
      () =>
        new Promise((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
    );
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new StepError(`${name} failed (${signal ?? `exit ${code}`}); see the lines above`))));
  });
}

/**
 * Polls the API's /health/ready until it answers 200; past the deadline, stops with the parts still failing named
 * (PostgreSQL, Temporal or storage, from the answer itself).
 */
async function waitForReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (!stopping && Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
      const answer = await response.json().catch(() => null);
      const failing = answer?.failing ?? [];
      last = failing.length ? failing.map((part) => answer.checks?.[part]?.error ?? part).join('; ') : `HTTP ${response.status}`;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!stopping) throw new services.StartupError(`The API is up but not ready after ${timeoutMs / 1000}s: ${last}. Fix: see the API's lines above, then npm start again.`);
}

/** Stops the children, then the services in reverse order of start; exits with `code`. Safe to call more than once. */
function shutdown(code) {
  stopping ??= (async () => {
    process.stdout.write('\n[start] stopping...\n');
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

async function main() {
  // signals first: a Ctrl-C or SIGTERM during start-up must stop what has been started so far
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    if (signals > 1) report('stopping already; a moment please');
    shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // `npm start` runs this under `sh -c`; a SIGTERM to npm kills that shell but never reaches this process, which
  // would live on (with every child) under init: a changed parent means the same as a SIGTERM
  const parent = process.ppid;
  if (parent > 1) {
    const watch = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(watch);
        report('the parent process (npm) has gone away');
        shutdown(0);
      }
    }, 500).unref();
  }

  tools.ensureNodeModules();
  const services = require('./lib/services');
  const { planLocalStripe } = require('./lib/localStripe');
  const temporalCli = process.env.TEMPORAL_ADDRESS ? null : tools.ensureTemporalCli();
  tools.ensureFfmpeg();
  tools.ensureBrandFonts();
  tools.ensureJemalloc();

  const env = { ...process.env };
  // no secret has a built-in value: generated once into DATA_DIR/secrets.json (0600), reused on every later start
  const local = secrets.ensureLocalSecrets(DATA, env);
  if (local.generated.length) tools.log(`generated ${local.generated.join(', ')} into ${shown(local.file)} (kept across restarts; docs/security.md "Secrets")`);
  Object.assign(env, local.values);
  // Enhance Renders' access code: the one in the environment, else one kept beside the secrets (docs/configuration.md)
  const accessCode = secrets.ensureLocalAccessCode(DATA, env);
  if (accessCode.code) {
    env.ENHANCE_ACCESS_CODE = accessCode.code;
    tools.log(`Enhance Renders access code: ${accessCode.code} (${accessCode.generated ? 'generated into' : 'kept in'} ${shown(accessCode.file)}; set ENHANCE_ACCESS_CODE to choose it)`);
  }
  let relocatedPostgres = null;
  if (!env.DATABASE_URL) {
    const port = Number(env.EMBEDDED_PG_PORT ?? 54320);
    const dataDir = path.join(DATA, 'postgres');
    tools.log(`starting embedded PostgreSQL on 127.0.0.1:${port} (data in ${shown(dataDir)})`);
    const pg = await services.startEmbeddedPostgres({ dataDir, port, log: tools.log, onSpawn: (stop) => cleanups.push(stop) });
    if (stopping) return;
    await pg.ensureDatabase('render_studio');
    env.DATABASE_URL = `${pg.url}/render_studio`;
    if (pg.dataDir !== dataDir) relocatedPostgres = pg.dataDir;
  }
  let temporalUi = env.TEMPORAL_UI_URL ?? null;
  if (!env.TEMPORAL_ADDRESS) {
    const port = Number(env.TEMPORAL_PORT ?? 7233);
    const uiPort = Number(env.TEMPORAL_UI_PORT ?? 8233);
    if (await services.portOpen(port)) throw new services.StartupError(`Port ${port} is taken, so the Temporal dev server cannot listen there. Fix: stop the other Temporal server, set TEMPORAL_PORT to a free port, or set TEMPORAL_ADDRESS to use that server.`);
    tools.log(`starting Temporal dev server on 127.0.0.1:${port} (data in ${shown(path.join(DATA, 'temporal'))})`);
    const temporal = await services.startTemporalDevServer({
      cli: temporalCli,
      port,
      uiPort,
      dbFile: path.join(DATA, 'temporal', 'temporal.db'),
      logFile: path.join(DATA, 'temporal', 'server.log'),
      onSpawn: (stop) => cleanups.push(stop),
    });
    if (stopping) return;
    env.TEMPORAL_ADDRESS = temporal.address;
    temporalUi = temporal.uiUrl;
    // the Activity view links admins to each run in this UI
    if (temporalUi) env.TEMPORAL_UI_URL = temporalUi;
  }

  tools.log('running migrations');
  const tsx = ['--import', 'tsx'];
  await runStep('migrations', [...tsx, 'db/migrate.ts', 'latest'], env);
  if (stopping) return;
  // FRONTEND_DIST set: that folder is served as it is
  if (!env.FRONTEND_DIST) buildFrontendIfStale();

  env.STORAGE_DIR = env.STORAGE_DIR ?? path.join(DATA, 'storage');
  const port = Number(env.PORT ?? 3000);
  const host = env.HOST ?? '127.0.0.1';
  const localHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  // payments: Stripe when a key is set; else, outside production, the local test-mode checkout (no real payment)
  const localStripe = await planLocalStripe({ root: ROOT, env, dataDir: DATA, appHost: host, appLocalHost: localHost, appPort: port });
  if (stopping) return;
  supervisor = new Supervisor({ report });
  supervisor.on('crash-loop', ({ name }) => {
    report(`stopping everything: ${name} cannot stay up (fix the cause shown above, then npm start again)`);
    shutdown(1);
  });
  // node --import tsx: one process per child, so signals reach the code itself (the tsx CLI would sit in between)
  if (localStripe) {
    tools.log(`starting the local test-mode checkout on ${localStripe.apiBase} (no Stripe key set: purchases are test payments, nothing is charged)`);
    if (localStripe.exposed) report(`warning: HOST=${host} lets other machines reach the app, and anyone who does can add credits through the test-mode checkout without paying. Set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, or LOCAL_STRIPE=off (docs/configuration.md "Payments").`);
    supervisor.add('stripe', { command: process.execPath, args: [...tsx, ...localStripe.args], env: { ...env, SERVICE_NAME: 'stripe' }, cwd: ROOT });
  }
  supervisor.add('api', { command: process.execPath, args: [...tsx, 'api/server.ts'], env: serviceProcessEnv({ ...env, SERVICE_NAME: 'api' }), cwd: ROOT });
  supervisor.add('worker', { command: process.execPath, args: [...tsx, 'workers/main.ts'], env: serviceProcessEnv({ ...env, SERVICE_NAME: 'worker' }), cwd: ROOT });
  await services.waitFor(
    async () => {
      if (stopping) return true;
      try {
        return (await fetch(`http://${localHost}:${port}/health/live`)).ok;
      } catch {
        return false;
      }
    },
    'API',
    90000,
  );
  if (localStripe) await services.waitFor(async () => stopping || services.portOpen(localStripe.port, localHost), 'the local test-mode checkout', 60000);
  // the URL is printed once the app can serve it: its first readiness check opens the pools, which a busy machine slows
  await waitForReady(`http://${localHost}:${port}/health/ready`, 120000);
  if (stopping) return;
  process.stdout.write(`\n  Render studio:  http://${localHost}:${port}\n`);
  process.stdout.write(`  Payments:       ${paymentsLine(env, localStripe)}\n`);
  if (temporalUi) process.stdout.write(`  Temporal UI:    ${temporalUi}\n`);
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (traces && (env.OTEL_TRACES_EXPORTER ?? 'otlp') !== 'none') process.stdout.write(`  Traces:         sent to ${traces}${env.TRACE_VIEWER_URL ? ' (viewer links in Activity for admins)' : ''}\n`);
  process.stdout.write(`  Health:         http://${localHost}:${port}/health/ready\n`);
  process.stdout.write(`  Ctrl-C stops everything; data stays in ${shown(DATA)}/${relocatedPostgres ? ` and ${relocatedPostgres} (PostgreSQL)` : ''}\n\n`);
}

/** How credits are bought on this start, for the summary printed when everything is up. */
function paymentsLine(env, localStripe) {
  if (localStripe) return `test mode, no real payment (local checkout ${localStripe.apiBase}; docs/running.md "Payments")`;
  if (!env.STRIPE_SECRET_KEY || !env.STRIPE_WEBHOOK_SECRET) return 'not available: set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (docs/configuration.md "Payments")';
  return /^(sk|rk)_test_/.test(env.STRIPE_SECRET_KEY) ? 'Stripe, test mode (no real payment)' : 'Stripe';
}

function fail(err) {
  // expected start-up failures carry their own explanation and fix; anything else shows its stack
  const expected = err && (err.name === 'StartupError' || err.name === 'StepError');
  report(expected ? err.message : `failed: ${err && err.stack ? err.stack : err}`);
  shutdown(1);
}

process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);
// a start-up step ended by a Ctrl-C is no failure to report: the shutdown under way says what happens
main().catch((err) => (stopping ? undefined : fail(err)));
