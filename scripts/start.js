#!/usr/bin/env node
'use strict';
/**
 * `npm start`: everything on one machine. Installs what is missing, starts an embedded PostgreSQL
 * when DATABASE_URL is unset and a file-backed Temporal dev server (with its Web UI) when
 * TEMPORAL_ADDRESS is unset, runs migrations, builds the front end when its sources changed,
 * then runs the API (serving the front end) and a worker. Ctrl-C stops every child.
 * Data lives in .data/ and is reused by the next start.
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const tools = require('./lib/tools');

const ROOT = tools.ROOT;
const DATA = path.join(ROOT, '.data');
const children = [];
const cleanups = [];
let stopping = false;

function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function buildFrontendIfStale() {
  const index = path.join(ROOT, 'frontend', 'dist', 'index.html');
  const sources = Math.max(newestMtime(path.join(ROOT, 'frontend', 'src')), newestMtime(path.join(ROOT, 'domain')));
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  tools.log('building the front end');
  tools.run(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', '--config', 'frontend/vite.config.ts', '--logLevel', 'warn']);
}

function startChild(name, script, env) {
  const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream, out) => {
    let buffered = '';
    stream.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop();
      for (const line of lines) out.write(`[${name}] ${line}\n`);
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.once('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`[start] ${name} exited (${signal ?? code}); stopping everything\n`);
      shutdown(1);
    }
  });
  children.push(child);
  return child;
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\n[start] stopping...\n');
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', resolve);
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 8000).unref();
        }),
    ),
  );
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (err) {
      process.stderr.write(`[start] cleanup failed: ${err.message}\n`);
    }
  }
  process.exit(code);
}

async function main() {
  tools.ensureNodeModules();
  const services = require('./lib/services');
  const temporalCli = process.env.TEMPORAL_ADDRESS ? null : tools.ensureTemporalCli();
  tools.ensureFfmpeg();
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));

  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    const port = Number(env.EMBEDDED_PG_PORT ?? 54320);
    tools.log(`starting embedded PostgreSQL on 127.0.0.1:${port} (data in .data/postgres)`);
    const pg = await services.startEmbeddedPostgres({ dataDir: path.join(DATA, 'postgres'), port });
    cleanups.push(pg.stop);
    await pg.ensureDatabase('render_studio');
    env.DATABASE_URL = `${pg.url}/render_studio`;
  }
  let temporalUi = env.TEMPORAL_UI_URL ?? null;
  if (!env.TEMPORAL_ADDRESS) {
    const port = Number(env.TEMPORAL_PORT ?? 7233);
    const uiPort = Number(env.TEMPORAL_UI_PORT ?? 8233);
    if (await services.portOpen(port)) throw new Error(`port ${port} is taken: stop the other Temporal server or set TEMPORAL_ADDRESS`);
    tools.log(`starting Temporal dev server on 127.0.0.1:${port} (data in .data/temporal)`);
    const temporal = await services.startTemporalDevServer({
      cli: temporalCli,
      port,
      uiPort,
      dbFile: path.join(DATA, 'temporal', 'temporal.db'),
      logFile: path.join(DATA, 'temporal', 'server.log'),
    });
    cleanups.push(temporal.stop);
    env.TEMPORAL_ADDRESS = temporal.address;
    temporalUi = temporal.uiUrl;
  }

  tools.log('running migrations');
  const migrate = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['db/migrate.ts', 'latest'], { cwd: ROOT, env, stdio: 'inherit' });
  if (migrate.status !== 0) throw new Error('migrations failed');
  buildFrontendIfStale();

  env.STORAGE_DIR = env.STORAGE_DIR ?? path.join(DATA, 'storage');
  const port = Number(env.PORT ?? 3000);
  const host = env.HOST ?? '127.0.0.1';
  startChild('api', 'api/server.ts', { ...env, SERVICE_NAME: 'api' });
  startChild('worker', 'workers/main.ts', { ...env, SERVICE_NAME: 'worker' });
  await services.waitFor(() => services.portOpen(port, host === '0.0.0.0' ? '127.0.0.1' : host), 'API', 60000);
  process.stdout.write(`\n  Render studio:  http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}\n`);
  if (temporalUi) process.stdout.write(`  Temporal UI:    ${temporalUi}\n`);
  process.stdout.write('  Ctrl-C stops everything; data stays in .data/\n\n');
}

main().catch((err) => {
  process.stderr.write(`[start] ${err.stack ?? err}\n`);
  shutdown(1);
});
