/**
 * The balancer's configuration (ops/haproxy/haproxy.cfg.template, as `npm run start:scaled` renders it) in a real
 * haproxy in front of two small HTTP servers standing in for the APIs: a GET that an API drops mid-answer (a process
 * killed while serving it) is answered by the other API, a POST is not sent twice (it may have changed something)
 * and is answered in the API's JSON error shape (502, a code, Retry-After) even on a kept-alive connection, a killed
 * API's refused connections go to the other for every method, and the killed API is out of rotation at once. The soak with chaos met the first as 502s from haproxy while a killed API was still in its pool.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number> };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureHaproxy(): string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const scaleOut = require('../../scripts/lib/scaleOut') as { renderHaproxyConfig(options: { bind: string; apiPorts: number[] }): string };

jest.setTimeout(60_000);

interface StandIn {
  server: http.Server;
  port: number;
  /** method and path of every request that reached it (health checks left out) */
  seen: string[];
  /** resolves at the next health check haproxy sends it */
  nextHealthCheck(): Promise<void>;
}

/** An API stand-in: /health/live answers 200; any other request is answered, or dropped unanswered when `drops`. */
async function standIn(port: number, drops: boolean): Promise<StandIn> {
  const seen: string[] = [];
  let healthWaiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/health/live') {
      res.end('{"status":"live"}');
      const waiters = healthWaiters;
      healthWaiters = [];
      waiters.forEach((resolve) => resolve());
      return;
    }
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (drops) req.socket.destroy();
      else res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return { server, port, seen, nextHealthCheck: () => new Promise<void>((resolve) => healthWaiters.push(resolve)) };
}

/** A server's line of the runtime API's `show stat`, by its CSV header's names (numbers as numbers). */
async function serverStats(socket: string, server: string): Promise<Record<string, string | number>> {
  const text = await new Promise<string>((resolve, reject) => {
    const conn = net.createConnection(socket);
    let out = '';
    conn.on('data', (d) => (out += d.toString()));
    conn.on('end', () => resolve(out));
    conn.on('error', reject);
    conn.write('show stat\n');
  });
  const lines = text.split('\n');
  const names = lines[0].replace(/^# /, '').split(',');
  const fields = (lines.find((l) => l.startsWith(`api,${server},`)) ?? '').split(',');
  return Object.fromEntries(names.map((name, i) => [name, /^\d+$/.test(fields[i] ?? '') ? Number(fields[i]) : (fields[i] ?? '')]));
}

/** What haproxy's runtime API says of each server of the api backend: name -> operational state (2 running, 0 stopped). */
async function serverStates(socket: string): Promise<Map<string, number>> {
  const text = await new Promise<string>((resolve, reject) => {
    const conn = net.createConnection(socket);
    let out = '';
    conn.on('data', (d) => (out += d.toString()));
    conn.on('end', () => resolve(out));
    conn.on('error', reject);
    conn.write('show servers state api\n');
  });
  const states = new Map<string, number>();
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    // be_id be_name srv_id srv_name srv_addr srv_op_state ...
    if (f.length > 6 && f[1] === 'api') states.set(f[3], Number(f[5]));
  }
  return states;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the balancer in front of two APIs (haproxy, ops/haproxy/haproxy.cfg.template)', () => {
  let dir: string;
  let haproxy: ChildProcess | undefined;
  let dropping: StandIn;
  let healthy: StandIn;
  let base: string;
  let socket: string;

  beforeAll(async () => {
    const binary = tools.ensureHaproxy();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-balancer-'));
    socket = path.join(dir, 'admin.sock');
    dropping = await standIn(await services.freePort(), true);
    healthy = await standIn(await services.freePort(), false);
    const port = await services.freePort();
    base = `http://127.0.0.1:${port}`;
    // the configuration as start:scaled renders it, plus a runtime socket to read the servers' states
    const config = scaleOut
      .renderHaproxyConfig({ bind: `127.0.0.1:${port}`, apiPorts: [dropping.port, healthy.port] })
      .replace(/^global\n/m, `global\n    stats socket ${socket} level admin\n`);
    const file = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(file, config);
    haproxy = spawn(binary, ['-db', '-f', file], { stdio: 'ignore' });
    // both servers in rotation
    await until('both stand-ins up', 15_000, async () => {
      const states = await serverStates(socket);
      return states.get('api-1') === 2 && states.get('api-2') === 2 ? true : undefined;
    });
  });

  afterAll(async () => {
    haproxy?.kill('SIGKILL');
    for (const s of [dropping, healthy]) s?.server.closeAllConnections();
    await Promise.all([dropping, healthy].map((s) => new Promise((r) => (s ? s.server.close(r) : r(undefined)))));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers every GET through the other API when one drops it unanswered', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await fetch(`${base}/api/read-${i}`)).status);
    expect(statuses).toEqual(Array(12).fill(200));
    // the dropping API was asked (leastconn spreads the requests) and each such GET was retried on the other
    expect(dropping.seen.filter((s) => s.startsWith('GET')).length).toBeGreaterThan(0);
    expect(healthy.seen.filter((s) => s.startsWith('GET')).length).toBe(12);
  });

  it('never sends a POST twice: one that an API dropped gets a clear, retryable 502 and reached no other API', async () => {
    const before = { dropping: dropping.seen.length, healthy: healthy.seen.length };
    const answers: Array<{ status: number; code?: string; retryAfter: string | null }> = [];
    // one client connection kept alive across the POSTs (undici's pool), as a browser's: a dropped POST that is not
    // the first request on its connection must still be answered, not closed unanswered
    for (let i = 0; i < 12; i += 1) {
      const res = await fetch(`${base}/api/write-${i}`, { method: 'POST', body: '{}' });
      const body = (await res.json()) as { code?: string };
      answers.push({ status: res.status, code: body.code, retryAfter: res.headers.get('retry-after') });
    }
    const droppedPosts = dropping.seen.slice(before.dropping).filter((s) => s.startsWith('POST'));
    const answeredPosts = healthy.seen.slice(before.healthy).filter((s) => s.startsWith('POST'));
    expect(droppedPosts.length).toBeGreaterThan(1);
    // each POST reached exactly one API: the dropped ones failed, the others were answered
    expect(droppedPosts.length + answeredPosts.length).toBe(12);
    const failed = answers.filter((a) => a.status !== 200);
    expect(failed).toEqual(Array(droppedPosts.length).fill({ status: 502, code: 'REQUEST_INTERRUPTED', retryAfter: '2' }));
    expect(answers.filter((a) => a.status === 200).length).toBe(answeredPosts.length);
    expect(new Set([...droppedPosts, ...answeredPosts]).size).toBe(12);
  });

  it('sends a killed API\'s requests to the other for every method and takes it out of rotation at once', async () => {
    // the dropping stand-in "is killed" right after a health check passed: its port refuses connections from now on,
    // and the next check comes a whole `inter` (1 s) later, so the traffic below meets the refusal first wherever the
    // health checks' own clock stood (killed at any moment, two failed checks could come before the first request)
    await dropping.nextHealthCheck();
    dropping.server.closeAllConnections();
    await new Promise((r) => dropping.server.close(r));
    const killedAt = Date.now();
    // the runtime API asked every 20 ms meanwhile: whether haproxy took the server out, and its counters then
    let outAfterMs = null as number | null;
    let outStats = null as Record<string, string | number> | null;
    const watching = (async () => {
      while (outAfterMs === null && Date.now() - killedAt < 10_000) {
        if ((await serverStates(socket)).get('api-1') === 0) {
          outAfterMs = Date.now() - killedAt;
          outStats = await serverStats(socket, 'api-1');
        } else await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const statuses: number[] = [];
    // at least ten requests, and on until haproxy has taken the server out (or the watch gave up)
    while (statuses.length < 10 || (outAfterMs === null && Date.now() - killedAt < 10_000)) {
      const method = statuses.length % 2 ? 'POST' : 'GET';
      statuses.push(await fetch(`${base}/api/after-kill`, { method, body: method === 'POST' ? '{}' : undefined }).then((r) => r.status, () => 0));
    }
    await watching;
    expect(statuses.every((s) => s === 200)).toBe(true);
    // out at the first connection it refused (observe layer4), not after two failed health checks
    expect(outAfterMs).not.toBeNull();
    // by the traffic's error (hanafail), before the health checks could fail `fall` times: checks failed while it was
    // up are counted in chkfail, which stops when it is out
    expect(outStats).toMatchObject({ status: 'DOWN', hanafail: expect.any(Number), chkfail: expect.any(Number) });
    expect(outStats!.hanafail).toBeGreaterThanOrEqual(1);
    expect(outStats!.chkfail).toBeLessThan(Number(outStats!.check_fall));
  });
});
