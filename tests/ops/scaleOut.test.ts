/**
 * `npm run start:scaled` (scripts/scaleOut.js): two API processes behind a real haproxy on the run's PostgreSQL, with
 * S3 storage on a SeaweedFS of its own. The in-process caches (session cache, credit summary cache, project owner
 * cache: noted caches over LISTEN/NOTIFY) are exact across the two processes: what one API changes, the other answers
 * at once. An event stream opened through haproxy hears a change made through the other API, a SIGKILLed API is
 * restarted while haproxy keeps answering through the other, and SIGTERM leaves nothing running.
 *
 * No worker process (--workers 0): nothing here runs a workflow, and a worker polling the run's shared Temporal
 * server would take other test files' tasks. Workers run under the same supervisor (restarts:
 * tests/ops/start.test.ts, tests/ops/supervisor.test.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestUser, makeAdmin } from '../support/accounts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { request } from '../support/http';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number>; portOpen(port: number): Promise<boolean> };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureHaproxy(): string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const scaleOut = require('../../scripts/lib/scaleOut') as {
  TEMPLATE: string;
  parseScaleArgs(argv: string[], env?: NodeJS.ProcessEnv): { apis: number; workers: number; port: number; apiPorts: number[]; storage: string };
  renderHaproxyConfig(options: { bind: string; apiPorts: number[] }): string;
};

const ROOT = path.resolve(__dirname, '..', '..');

/** Every live descendant of `pid` with its command line and SERVICE_NAME, from /proc. */
function descendants(pid: number): Array<{ pid: number; cmd: string; service: string | null }> {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: Array<{ pid: number; cmd: string; service: string | null }> = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid !== parent) continue;
      let cmd = '';
      let service: string | null = null;
      try {
        cmd = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim();
        service = /(?:^|\0)SERVICE_NAME=([^\0]*)/.exec(fs.readFileSync(`/proc/${child}/environ`, 'utf8'))?.[1] ?? null;
      } catch {
        // gone meanwhile
      }
      found.push({ pid: child, cmd, service });
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the haproxy configuration (ops/haproxy/haproxy.cfg.template)', () => {
  const haproxy = tools.ensureHaproxy();
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-haproxy-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const check = (text: string) => {
    const file = path.join(dir, `check-${Date.now()}.cfg`);
    fs.writeFileSync(file, text);
    return spawnSync(haproxy, ['-c', '-f', file], { encoding: 'utf8' });
  };

  it('renders for npm run start:scaled: one health-checked server per API port, the bind, no docker resolver; haproxy accepts it', () => {
    const text = scaleOut.renderHaproxyConfig({ bind: '127.0.0.1:3000', apiPorts: [3001, 3002, 3003] });
    expect(text).toContain('bind 127.0.0.1:3000');
    expect(text.match(/^\s+server api-\d 127\.0\.0\.1:\d+$/gm)).toEqual(['    server api-1 127.0.0.1:3001', '    server api-2 127.0.0.1:3002', '    server api-3 127.0.0.1:3003']);
    expect(text).toMatch(/http-check send meth GET uri \/health\/live/);
    // reads are retried on another API, other methods only when their connection failed (tests/ops/balancerRetries.test.ts)
    expect(text).toMatch(/^\s+retry-on conn-failure empty-response junk-response response-timeout/m);
    expect(text).toMatch(/^\s+option redispatch 1$/m);
    expect(text).toMatch(/^\s+http-request disable-l7-retry if !METH_GET !METH_HEAD$/m);
    expect(text).toMatch(/^\s+default-server check inter 1s .*observe layer4 error-limit 1 on-error mark-down$/m);
    expect(text).toMatch(/timeout tunnel 1h/);
    expect(text).not.toMatch(/resolvers|\{\{/);
    const r = check(text);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/ALERT/);
    expect(r.status).toBe(0);
  });

  it("renders for docker compose with the balancer service's own command: every replica of the api service through docker's DNS; haproxy accepts it", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { parse } = require('yaml') as { parse(text: string, options: { merge: boolean }): { services: Record<string, { command?: string[]; volumes?: string[]; ports?: string[] }> } };
    const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    const balancer = compose.services.balancer;
    expect(balancer.volumes).toEqual(['./ops/haproxy:/usr/local/etc/haproxy:ro']);
    expect(balancer.ports).toEqual(['${API_PORT:-3000}:8080']);
    expect(compose.services.api.ports ?? []).toEqual([]);
    // the script compose runs, with the mounted template and the output file moved here, and a check instead of exec
    const script = (balancer.command ?? []).join('\n');
    expect(script).toMatch(/exec haproxy -W -db -f \/tmp\/haproxy\.cfg/);
    const out = path.join(dir, 'compose.cfg');
    const render = script
      .replace(/\$\$/g, '$')
      .replace('/usr/local/etc/haproxy/haproxy.cfg.template', scaleOut.TEMPLATE)
      .replace(/\/tmp\/haproxy\.cfg/g, out)
      .replace(/^exec haproxy .*$/m, '');
    const r = spawnSync('/bin/sh', ['-ec', render], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('bind :8080');
    expect(text).toMatch(/server-template api 1-10 api:3000 resolvers docker init-addr none/);
    expect(text).toMatch(/^resolvers docker\n\s+nameserver dns 127\.0\.0\.11:53/m);
    const c = check(text);
    expect(`${c.stdout}${c.stderr}`).not.toMatch(/ALERT/);
    expect(c.status).toBe(0);
  });

  it('parses the options and refuses bad ones with the usage', () => {
    expect(scaleOut.parseScaleArgs(['--apis', '3', '--workers=1', '--port', '4000'], {})).toEqual({ apis: 3, workers: 1, port: 4000, apiPorts: [4001, 4002, 4003], storage: 's3' });
    expect(scaleOut.parseScaleArgs(['--api-ports', '5001,5002', '--storage', 'local'], { PORT: '5000' })).toMatchObject({ apis: 2, workers: 2, port: 5000, apiPorts: [5001, 5002], storage: 'local' });
    expect(() => scaleOut.parseScaleArgs(['--apis', '0'], {})).toThrow(/--apis must be a whole number from 1 to 32, got "0"\.\nUsage: npm run start:scaled/);
    expect(() => scaleOut.parseScaleArgs(['--apis', '2', '--api-ports', '5001'], {})).toThrow(/--api-ports names 1 port\(s\) for 2 API process\(es\)/);
    expect(() => scaleOut.parseScaleArgs(['--port', '3000', '--api-ports', '3000,3001'], {})).toThrow(/must all differ/);
    expect(() => scaleOut.parseScaleArgs(['--storage', 'nfs'], {})).toThrow(/--storage must be "s3" or "local"/);
    expect(() => scaleOut.parseScaleArgs(['--replicas', '2'], {})).toThrow(/Unknown option "--replicas"/);
  });
});

describe('npm run start:scaled -- --apis 2 --workers 0 (scripts/scaleOut.js)', () => {
  let dataDir: string;
  let child: ChildProcess | null = null;
  let output = '';
  let exited: Promise<number | null> = Promise.resolve(null);
  let seen: Array<{ pid: number; cmd: string; service: string | null }> = [];
  const streams: OpenedEventStream[] = [];
  let publicUrl = '';
  let api: [string, string] = ['', ''];
  let ports: number[] = [];

  const waitForOutput = (pattern: RegExp, timeoutMs: number) =>
    until(`${pattern} in the output:\n${output}`, timeoutMs, () => {
      if (child?.exitCode !== null && child?.exitCode !== undefined) throw new Error(`start:scaled exited (${child.exitCode}) before ${pattern}:\n${output}`);
      return pattern.test(output) ? true : undefined;
    });

  // a database of its own: its API processes LISTEN and cache like any other, and the cache tests of other files
  // (tests/api/*Cache.test.ts) end the connections of their cache by name in the run's shared database
  let db: ScratchDatabase;

  beforeAll(async () => {
    // already migrated (a copy of the run's template): the command's migrations find nothing to apply
    db = await createScratchDatabase('scaleout', { migrated: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-scaled-'));
    fs.chmodSync(dataDir, 0o755);
    const dist = path.join(dataDir, 'dist');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
    ports = [await services.freePort(), await services.freePort(), await services.freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, DATA_DIR: dataDir, FRONTEND_DIST: dist, HOST: '127.0.0.1', LOCAL_STRIPE: 'off', LOG_LEVEL: 'warn', NODE_ENV: 'development' };
    // storage: S3 on a SeaweedFS the command starts (as in production), not the run's local folder
    for (const name of ['STORAGE_DIR', 'STORAGE_BACKEND', 'S3_ENDPOINT', 'S3_PUBLIC_URL', 'PORT', 'TRUST_PROXY', 'PUBLIC_URL']) delete env[name];
    child = spawn(process.execPath, ['scripts/scaleOut.js', '--apis', '2', '--workers', '0', '--port', String(ports[0]), '--api-ports', `${ports[1]},${ports[2]}`], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited = new Promise((resolve) => child?.once('exit', (code) => resolve(code)));
    await waitForOutput(/Render studio: {2}http:\/\/127\.0\.0\.1:\d+ {2}\(haproxy, balancing 2 API processes\)/, 240_000);
    // the banner's last line: everything above it has arrived
    await waitForOutput(/Ctrl-C stops everything/, 10_000);
    publicUrl = `http://127.0.0.1:${ports[0]}`;
    api = [`http://127.0.0.1:${ports[1]}`, `http://127.0.0.1:${ports[2]}`];
  }, 300_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    if (child && child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid as number, 'SIGTERM');
      // a bound that is cleared once the stack is down: left pending, it kept the jest worker alive 30 s after the file
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
      clearTimeout(timer);
    }
    for (const { pid } of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('runs haproxy, two APIs and S3 on SeaweedFS, and haproxy spreads requests over both APIs', async () => {
    expect(output).toContain('Storage:        S3 on SeaweedFS http://127.0.0.1:');
    const running = descendants(child?.pid as number);
    // (node's own children, e.g. tsx's esbuild service, carry SERVICE_NAME too)
    expect(running.filter((p) => p.cmd.includes('api/server.ts')).map((p) => p.service).sort()).toEqual(['api-1', 'api-2']);
    expect(running.some((p) => /haproxy -db -f/.test(p.cmd))).toBe(true);
    expect(running.some((p) => /weed server/.test(p.cmd))).toBe(true);
    const served = new Set<string>();
    for (let i = 0; i < 10; i += 1) {
      const res = await fetch(`${publicUrl}/api/health`);
      expect(res.status).toBe(200);
      served.add(res.headers.get('x-served-by') ?? '');
    }
    expect([...served].sort()).toEqual(['api-1', 'api-2']);
    // storage is S3 for every API: ready means the buckets take a write
    // (each part must answer within a few seconds: on a machine this busy one may not, so ask again, a bounded while)
    for (const base of api) {
      let last: unknown = null;
      await until(`${base}/health/ready answering 200 (last: ${JSON.stringify(last)})`, 30_000, async () => {
        const ready = await fetch(`${base}/health/ready`);
        last = { status: ready.status, body: await ready.json() };
        return ready.status === 200 ? true : undefined;
      }).catch(() => expect(last).toMatchObject({ status: 200 }));
      expect(last).toMatchObject({ status: 200, body: { checks: { storage: { ok: true } } } });
    }
  });

  it('keeps the credit summary exact across APIs: a change through API 1 is read through API 2 at once', async () => {
    const user = await createTestUser(publicUrl, { knex: db.knex });
    const admin = await createTestUser(publicUrl, { knex: db.knex });
    await makeAdmin(db.knex, admin.id);
    const summary = async (base: string) => {
      const res = await request<{ data: { credits: number; available: number } }>(base, '/api/credits/summary', { token: user.token });
      expect(res.status).toBe(200);
      return res.body.data;
    };
    // read twice through API 2: the second answer comes from its cache
    expect((await summary(api[1])).credits).toBe(5);
    expect((await summary(api[1])).credits).toBe(5);
    for (const [amount, expected] of [
      [7, 12],
      [-3, 9],
    ]) {
      const adjusted = await request(api[0], '/api/admin/credits/adjust', { token: admin.token, json: { userId: user.id, amount, reason: `scale-out test ${amount}` } });
      expect(adjusted.status).toBe(201);
      expect((await summary(api[1])).credits).toBe(expected);
    }
  });

  it('refuses a session through API 2 at once after it signed out through API 1', async () => {
    // several rounds: the window this closes (API 2 answering from its cache before it has read the note) is short
    for (let round = 0; round < 8; round += 1) {
      const user = await createTestUser(publicUrl, { knex: db.knex });
      expect((await request(api[1], '/api/auth/me', { token: user.token })).status).toBe(200);
      expect((await request(api[1], '/api/auth/me', { token: user.token })).status).toBe(200);
      expect((await request(api[0], '/api/auth/signout', { token: user.token, json: {} })).status).toBe(200);
      expect({ round, status: (await request(api[1], '/api/auth/me', { token: user.token })).status }).toEqual({ round, status: 401 });
      expect((await request(publicUrl, '/api/auth/me', { token: user.token })).status).toBe(401);
    }
  });

  it('shows a project renamed through API 1 renamed through API 2, and deleted through API 1 gone through API 2', async () => {
    const user = await createTestUser(publicUrl, { knex: db.knex });
    const created = await request<{ project: { id: string; name: string } }>(publicUrl, '/api/projects', { token: user.token, json: { name: 'Harbour lofts' } });
    expect(created.status).toBe(201);
    const id = created.body.project.id;
    // API 2 reads the project and its library (the project owner cache holds it now)
    for (let i = 0; i < 2; i += 1) {
      expect((await request<{ project: { name: string } }>(api[1], `/api/projects/${id}`, { token: user.token })).body.project.name).toBe('Harbour lofts');
      expect((await request(api[1], `/api/projects/${id}/content?limit=10`, { token: user.token })).status).toBe(200);
    }
    expect((await request(api[0], `/api/projects/${id}`, { method: 'PATCH', token: user.token, json: { name: 'Harbour lofts, phase 2' } })).status).toBe(200);
    expect((await request<{ project: { name: string } }>(api[1], `/api/projects/${id}`, { token: user.token })).body.project.name).toBe('Harbour lofts, phase 2');
    expect((await request(api[0], `/api/projects/${id}`, { method: 'DELETE', token: user.token })).status).toBe(200);
    expect((await request(api[1], `/api/projects/${id}`, { token: user.token })).status).toBe(404);
    expect((await request(api[1], `/api/projects/${id}/content?limit=10`, { token: user.token })).status).toBe(404);
  });

  it('delivers through haproxy an event caused by a request through the other API', async () => {
    const user = await createTestUser(publicUrl, { knex: db.knex });
    const admin = await createTestUser(publicUrl, { knex: db.knex });
    await makeAdmin(db.knex, admin.id);
    const stream = await openEventStream(publicUrl, { token: user.token });
    streams.push(stream);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    await stream.next((m) => m.event === 'ready', 10_000);
    const servedBy = String(stream.headers['x-served-by']);
    expect(['api-1', 'api-2']).toContain(servedBy);
    const other = servedBy === 'api-1' ? api[1] : api[0];
    const adjusted = await request(other, '/api/admin/credits/adjust', { token: admin.token, json: { userId: user.id, amount: 4, reason: 'scale-out event test' } });
    expect(adjusted.status).toBe(201);
    const event = await stream.next((m) => m.event === 'credits', 10_000);
    expect(event.data).toMatchObject({ kind: 'credits' });
    stream.close();
  });

  it('restarts a SIGKILLed API while haproxy answers through the other one', async () => {
    const victim = descendants(child?.pid as number).find((p) => p.service === 'api-2' && p.cmd.includes('api/server.ts'));
    expect(victim).toBeDefined();
    process.kill(victim!.pid, 'SIGKILL');
    await waitForOutput(/\[scale\] api-2 was killed by SIGKILL after [\d.]+s; restarting it in 1s/, 10_000);
    // while api-2 is down and coming back, every request through haproxy is answered (a refused connection goes to api-1)
    for (let i = 0; i < 20; i += 1) {
      const res = await fetch(`${publicUrl}/api/health`);
      expect(res.status).toBe(200);
    }
    await waitForOutput(/\[scale\] api-2 restarted \(pid \d+, restart 1\)/, 10_000);
    await until('api-2 answering again', 120_000, async () => ((await fetch(`${api[1]}/health/live`).catch(() => null))?.status === 200 ? true : undefined));
    // haproxy's health check brings it back into rotation
    await until('haproxy sending to api-2 again', 30_000, async () => ((await fetch(`${publicUrl}/api/health`)).headers.get('x-served-by') === 'api-2' ? true : undefined));
  }, 180_000);

  it('stops everything on SIGTERM', async () => {
    seen = descendants(child?.pid as number);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    process.kill(child?.pid as number, 'SIGTERM');
    expect(await exited).toBe(0);
    await until('every child gone', 30_000, () => (seen.every((p) => !alive(p.pid)) ? true : undefined));
    for (const p of ports) expect(await services.portOpen(p)).toBe(false);
    expect(output).not.toMatch(/crash-looping|cleanup failed/);
  }, 60_000);
});
