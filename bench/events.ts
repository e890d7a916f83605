/**
 * The realtime channel under load (issue 13, item 8): BENCH_SSE_CLIENTS users (1000), each with an open
 * GET /api/events stream on one API process, and one event per user per second published through
 * services/platform/events.ts publishEvent (a user_events row + NOTIFY) for BENCH_DURATION_SECONDS (20), spread evenly
 * over each second. Measured: delivery latency (receive - publish; every event carries its publish time in its
 * jobId, publisher and clients share this process's clock), events delivered against published (any loss,
 * duplicate or event on another user's stream is a failure), and the API process's CPU and RSS from /proc.
 *
 * Baseline in the same run, on a fresh API process and with the same events published: the same users without
 * the stream, polling what the browser polls at the spec's intervals (GET /api/approvals/stats every 60 s, a clip's
 * GET /api/video-generation/status/:id every 60 s portrait / 90 s landscape; half the users each), each client's
 * first poll spread evenly over its interval. Measured: requests/s, their latency, the API's CPU and RSS; the
 * staleness of a change seen by polling is computed (on average half the interval).
 *
 * The polled clip is a finished job row, so a status poll is auth + one row read; a running clip's poll also
 * queries its workflow through Temporal, so the polling side's cost here is a lower bound.
 *
 * Users, sessions, projects and clip rows are inserted directly (no password hashing for 1000 users) and deleted,
 * with their events, when the bench ends. Everything is on 127.0.0.1.
 * PostgreSQL serializes the commits of notifying transactions (each waits for the previous one's WAL flush), so
 * the events/s one database commits is bounded by its disk's flush time: when the offered rate is above it,
 * events queue in the publisher and the end-to-end latency is mostly that queue. The bench therefore also reports
 * the rate actually committed and each event's delivery after its commit (the API's share: NOTIFY, fan-out, write).
 *
 * Env: BENCH_SSE_CLIENTS (1000), BENCH_DURATION_SECONDS (20), BENCH_EVENTS_PER_SECOND (one per user: the
 * client count), to measure below the database's ceiling.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import type { RealtimeEvent } from '../domain/events';
import { publishEvent } from '../services/platform/events';
import { sessionIdForToken } from '../services/accounts/sessions';
import { startBenchApi, withBenchDatabase, type BenchApi } from './support/benchEnv';
import { sampleProcess, rssKb, serverPid, type ProcFigures } from './support/procStats';
import { percentile } from './support/stats';
import { figure, ratio as ratioMeasure, recordResults } from './support/results';

const CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 1000);
const DURATION_S = Number(process.env.BENCH_DURATION_SECONDS ?? 20);
const RATE = Number(process.env.BENCH_EVENTS_PER_SECOND ?? CLIENTS);
/** API CPU and RSS measured with nothing to do (after the streams are open, on the SSE side), for this long. */
const IDLE_SAMPLE_MS = 3000;
/** Spec 001 section 4: the approvals count/list refreshed at most every 60 s without a realtime change. */
const APPROVALS_POLL_MS = 60_000;
/** Spec 000 section 4/API table: clip status fallback polling every 60 s (portrait) or 90 s (landscape). */
const CLIP_POLL_PORTRAIT_MS = 60_000;
const CLIP_POLL_LANDSCAPE_MS = 90_000;
/** How long to wait for stragglers after the last event is published, or for all streams to open. */
const DRAIN_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 120_000;
/** Streams opened at once while connecting (each open is a session lookup on the API). */
const CONNECT_CONCURRENCY = 50;
/** The bench's own pool: publishing 1000 events/s needs commits in flight at once. */
const PUBLISH_POOL = 16;

interface SseUser {
  index: number;
  userId: string;
  token: string;
  clipJobId: string;
  clipPollMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const wallMs = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- set-up

function checkFileLimit(): void {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  const soft = m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : Infinity;
  // each stream is one socket in this process and one in the API (which inherits this limit), plus some slack
  const needed = CLIENTS + 200;
  process.stdout.write(`open-file limit (ulimit -n): ${soft}; ${CLIENTS} streams need about ${needed} in this process and in the API\n`);
  if (soft < needed) {
    throw new Error(`ulimit -n is ${soft}, too low for ${CLIENTS} streams: raise it (ulimit -n ${Math.max(4096, needed * 2)}) or lower BENCH_SSE_CLIENTS`);
  }
}

/** N users with a session, a project and one finished clip each (half portrait, half landscape), inserted in bulk. */
async function createUsers(knex: Knex, n: number): Promise<SseUser[]> {
  const run = randomUUID().slice(0, 8);
  const users: SseUser[] = Array.from({ length: n }, (_, index) => ({
    index,
    userId: randomUUID(),
    token: randomBytes(32).toString('base64url'),
    clipJobId: randomUUID(),
    clipPollMs: index % 2 === 0 ? CLIP_POLL_PORTRAIT_MS : CLIP_POLL_LANDSCAPE_MS,
  }));
  const expiresAt = new Date(Date.now() + 24 * 60 * 60 * 1000);
  for (let i = 0; i < n; i += 500) {
    const chunk = users.slice(i, i + 500);
    const projectIds = chunk.map(() => randomUUID());
    await knex.transaction(async (trx) => {
      await trx('users').insert(chunk.map((u) => ({ id: u.userId, email: `bench-sse-${run}-${u.index}@example.test`, password_hash: 'bench: no sign-in' })));
      await trx('workspaces').insert(chunk.map((u) => ({ id: u.userId, name: 'Personal', personal_user_id: u.userId, created_by: u.userId })));
      await trx('workspace_members').insert(chunk.map((u) => ({ workspace_id: u.userId, user_id: u.userId, role: 'owner' })));
      await trx('profiles').insert(chunk.map((u) => ({ id: u.userId, email: `bench-sse-${run}-${u.index}@example.test`, name: `Bench SSE ${u.index}` })));
      await trx('sessions').insert(chunk.map((u) => ({ id: sessionIdForToken(u.token), user_id: u.userId, expires_at: expiresAt })));
      await trx('projects').insert(chunk.map((u, k) => ({ id: projectIds[k], workspace_id: u.userId, name: `Bench SSE ${u.index}` })));
      await trx('video_generation_jobs').insert(
        chunk.map((u, k) => ({
          id: u.clipJobId,
          workspace_id: u.userId,
          project_id: projectIds[k],
          status: 'completed',
          progress: 100,
          options: { aspectRatio: u.clipPollMs === CLIP_POLL_PORTRAIT_MS ? '9:16' : '16:9' },
          workflow_id: `bench-events-${u.clipJobId}`,
        })),
      );
    });
  }
  return users;
}

async function deleteUsers(knex: Knex, users: readonly SseUser[]): Promise<void> {
  // cascades to profiles, sessions, projects, clip rows and user_events
  for (let i = 0; i < users.length; i += 500) {
    await knex('users')
      .whereIn(
        'id',
        users.slice(i, i + 500).map((u) => u.userId),
      )
      .delete();
  }
}

// ---------------------------------------------------------------- publishing

interface PublishFigures {
  published: number;
  failed: number;
  /** published / (last commit - first publish call), events/s */
  committedPerSecond: number;
  /** publishEvent's round trip (insert + NOTIFY committed, queueing for a pooled connection included), ms. */
  commitP50Ms: number;
  commitP99Ms: number;
  /** How late the publisher fired an event against its schedule (a saturated bench process shows here). */
  maxScheduleLagMs: number;
}

/**
 * `count` events at `RATE` per second spread evenly: event k of the run is seq `firstSeq + k`, for user
 * `seq % N`; its jobId carries seq and the wall-clock time of the publish call. `commitAt[seq]`, when given,
 * gets the wall-clock time publishEvent resolved.
 */
async function publishEvents(knex: Knex, users: readonly SseUser[], count: number, firstSeq: number, commitAt?: Float64Array): Promise<PublishFigures> {
  const n = users.length;
  const stepMs = 1000 / RATE;
  const commits = new Float64Array(count);
  let failed = 0;
  let maxLag = 0;
  let lastCommit = 0;
  const inFlight = new Set<Promise<void>>();
  const fire = (k: number) => {
    const seq = firstSeq + k;
    const user = users[seq % n];
    const t0 = performance.now();
    const event: RealtimeEvent = { kind: 'job', job: 'clip', jobId: `bench-${seq}-${wallMs().toFixed(3)}`, status: 'processing', progress: Math.floor(seq / n) % 100 };
    const p = publishEvent(knex, user.userId, event).then(
      () => {
        lastCommit = performance.now();
        commits[k] = lastCommit - t0;
        if (commitAt) commitAt[seq] = wallMs();
      },
      () => {
        commits[k] = NaN;
        failed += 1;
      },
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  const started = performance.now();
  let next = 0;
  while (next < count) {
    const now = performance.now();
    while (next < count && started + next * stepMs <= now) {
      maxLag = Math.max(maxLag, now - (started + next * stepMs));
      fire(next++);
    }
    if (next < count) await sleep(Math.max(1, started + next * stepMs - performance.now()));
  }
  await Promise.all([...inFlight]);
  const ok = Float64Array.from(commits.filter((c) => !Number.isNaN(c))).sort();
  const published = count - failed;
  return {
    published,
    failed,
    committedPerSecond: published / Math.max(1e-3, (lastCommit - started) / 1000),
    commitP50Ms: percentile(ok, 50),
    commitP99Ms: percentile(ok, 99),
    maxScheduleLagMs: maxLag,
  };
}

// ---------------------------------------------------------------- SSE side

interface Delivery {
  /** per seq: times received (must end as exactly 1 for every published seq) */
  received: Uint8Array;
  /** per seq: receive - publish call, ms */
  latencyMs: Float64Array;
  /** per seq: wall-clock receive time */
  receivedAt: Float64Array;
  misrouted: number;
  duplicates: number;
  ready: number;
  /** streams that ended or failed before the bench closed them */
  dropped: number;
}

interface Stream {
  req: http.ClientRequest;
  closedByBench: boolean;
}

/** Opens user `u`'s stream; resolves on its `ready` message, rejects on a non-200 answer or an error before it. */
function openStream(baseUrl: string, agent: http.Agent, u: SseUser, delivery: Delivery): Promise<Stream> {
  return new Promise((resolve, reject) => {
    let isReady = false;
    let buffer = '';
    const req = http.get(`${baseUrl}/api/events`, { agent, headers: { authorization: `Bearer ${u.token}`, accept: 'text/event-stream' } });
    const stream: Stream = { req, closedByBench: false };
    const lost = (err: Error) => {
      if (!isReady) reject(err);
      else if (!stream.closedByBench) delivery.dropped += 1;
    };
    const dispatch = (block: string) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        // id: and retry: are not needed here
      }
      if (data.length === 0) return;
      if (event === 'ready') {
        isReady = true;
        delivery.ready += 1;
        resolve(stream);
        return;
      }
      if (event !== 'job') return;
      const receivedAt = wallMs();
      const { jobId } = JSON.parse(data.join('\n')) as { jobId: string };
      const m = /^bench-(\d+)-([\d.]+)$/.exec(jobId);
      if (!m) return;
      const seq = Number(m[1]);
      if (seq % CLIENTS !== u.index) {
        delivery.misrouted += 1;
        return;
      }
      if (delivery.received[seq] > 0) delivery.duplicates += 1;
      else {
        delivery.latencyMs[seq] = receivedAt - Number(m[2]);
        delivery.receivedAt[seq] = receivedAt;
      }
      delivery.received[seq] = Math.min(255, delivery.received[seq] + 1);
    };
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET /api/events answered ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk.replace(/\r\n?/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          dispatch(block);
        }
      });
      res.on('end', () => lost(new Error('stream ended before ready')));
      res.on('error', lost);
    });
    req.on('error', lost);
  });
}

/** Opens every user's stream, CONNECT_CONCURRENCY at a time; rejects with the first failure. */
async function openStreams(baseUrl: string, agent: http.Agent, users: readonly SseUser[], delivery: Delivery): Promise<Stream[]> {
  const streams: Stream[] = new Array(users.length);
  let next = 0;
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  await Promise.all(
    Array.from({ length: Math.min(CONNECT_CONCURRENCY, users.length) }, async () => {
      while (next < users.length) {
        if (Date.now() > deadline) throw new Error(`only ${delivery.ready} of ${users.length} streams open after ${CONNECT_TIMEOUT_MS / 1000} s`);
        const i = next++;
        streams[i] = await openStream(baseUrl, agent, users[i], delivery);
      }
    }),
  );
  return streams;
}

/** Waits until seqs [from, to) have all been received, at most `timeoutMs`. */
async function waitDelivered(delivery: Delivery, from: number, to: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let i = from;
  while (Date.now() < deadline) {
    while (i < to && delivery.received[i] > 0) i += 1;
    if (i >= to) return;
    await sleep(20);
  }
}

interface SseFigures {
  connected: number;
  connectSeconds: number;
  idleRssMb: number;
  /** the API with every stream open and no events */
  idle: ProcFigures;
  publish: PublishFigures;
  delivered: number;
  lost: number;
  misrouted: number;
  duplicates: number;
  dropped: number;
  /** publish call to receive */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** commit acknowledged to receive (NOTIFY goes out at commit, so this may be below zero) */
  afterCommitP50Ms: number;
  afterCommitP99Ms: number;
  proc: ProcFigures;
  benchLoopDelayP99Ms: number;
}

async function sseSide(databaseUrl: string, knex: Knex, users: readonly SseUser[], measured: number): Promise<SseFigures> {
  const n = users.length;
  // one event per user to warm up (seqs [0, n)), then `measured` events
  const totalSeqs = n + measured;
  const delivery: Delivery = {
    received: new Uint8Array(totalSeqs),
    latencyMs: new Float64Array(totalSeqs),
    receivedAt: new Float64Array(totalSeqs),
    misrouted: 0,
    duplicates: 0,
    ready: 0,
    dropped: 0,
  };
  const commitAt = new Float64Array(totalSeqs);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity, maxTotalSockets: Infinity });
  const api: BenchApi = await startBenchApi(databaseUrl);
  let streams: Stream[] = [];
  try {
    const pid = serverPid(api.child.pid as number);
    await sleep(1000);
    const idleRssMb = rssKb(pid) / 1024;

    const t0 = performance.now();
    try {
      streams = await openStreams(api.baseUrl, agent, users, delivery);
    } catch (err) {
      throw new Error(`${delivery.ready} of ${n} streams opened, then: ${(err as Error).message}`);
    }
    const connectSeconds = (performance.now() - t0) / 1000;
    process.stdout.write(`SSE: ${delivery.ready} streams open in ${connectSeconds.toFixed(1)} s; warming up with one event per user\n`);

    await publishEvents(knex, users, n, 0);
    await waitDelivered(delivery, 0, n, DRAIN_TIMEOUT_MS);
    const idleSampler = sampleProcess(pid);
    await sleep(IDLE_SAMPLE_MS);
    const idle = idleSampler.stop();

    process.stdout.write(`SSE: publishing ${RATE} events/s for ${DURATION_S} s\n`);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const sampler = sampleProcess(pid);
    const publish = await publishEvents(knex, users, measured, n, commitAt);
    await waitDelivered(delivery, n, totalSeqs, DRAIN_TIMEOUT_MS);
    const proc = sampler.stop();
    loop.disable();

    let delivered = 0;
    const latencies: number[] = [];
    const afterCommit: number[] = [];
    for (let seq = n; seq < totalSeqs; seq++) {
      if (delivery.received[seq] === 0) continue;
      delivered += 1;
      latencies.push(delivery.latencyMs[seq]);
      if (commitAt[seq] > 0) afterCommit.push(delivery.receivedAt[seq] - commitAt[seq]);
    }
    const sorted = Float64Array.from(latencies).sort();
    const sortedAfter = Float64Array.from(afterCommit).sort();
    return {
      connected: delivery.ready,
      connectSeconds,
      idleRssMb,
      idle,
      publish,
      delivered,
      lost: publish.published - delivered,
      misrouted: delivery.misrouted,
      duplicates: delivery.duplicates,
      dropped: delivery.dropped,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.length ? sorted[sorted.length - 1] : 0,
      afterCommitP50Ms: percentile(sortedAfter, 50),
      afterCommitP99Ms: percentile(sortedAfter, 99),
      proc,
      benchLoopDelayP99Ms: loop.percentile(99) / 1e6,
    };
  } finally {
    for (const s of streams) {
      if (!s) continue;
      s.closedByBench = true;
      s.req.destroy();
    }
    agent.destroy();
    await api.stop();
  }
}

// ---------------------------------------------------------------- polling side

interface PollFigures {
  requests: number;
  failed: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  idleRssMb: number;
  /** the API with nothing to do */
  idle: ProcFigures;
  proc: ProcFigures;
  publish: PublishFigures;
}

function getOnce(agent: http.Agent, url: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(res.statusCode === 200 && (JSON.parse(body) as { success?: boolean }).success === true);
        } catch {
          resolve(false);
        }
      });
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
  });
}

/**
 * Every user polls the approvals stats every 60 s and their clip every 60 s (portrait) or 90 s (landscape), the
 * first poll of user i at (i + 0.5)/N of the interval, for DURATION_S; the same events are published meanwhile.
 */
async function pollingSide(databaseUrl: string, knex: Knex, users: readonly SseUser[], events: number, firstSeq: number): Promise<PollFigures> {
  const n = users.length;
  // a browser 60 s after its last request has no kept-alive connection left (the server drops idle ones at 5 s)
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity, maxTotalSockets: Infinity });
  const api: BenchApi = await startBenchApi(databaseUrl);
  try {
    const pid = serverPid(api.child.pid as number);
    const statsUrl = `${api.baseUrl}/api/approvals/stats`;
    const clip = (u: SseUser) => `${api.baseUrl}/api/video-generation/status/${u.clipJobId}`;
    // warm-up: both routes answer (a 401 or 404 would make the figures meaningless), code paths loaded
    for (const u of users.slice(0, 20)) {
      if (!(await getOnce(agent, statsUrl, u.token)) || !(await getOnce(agent, clip(u), u.token))) throw new Error(`warm-up poll failed for user ${u.index}`);
    }
    await sleep(1000);
    const idleRssMb = rssKb(pid) / 1024;
    const idleSampler = sampleProcess(pid);
    await sleep(IDLE_SAMPLE_MS);
    const idle = idleSampler.stop();

    const windowMs = DURATION_S * 1000;
    const plan: { at: number; url: string; token: string }[] = [];
    for (const u of users) {
      for (let at = ((u.index + 0.5) / n) * APPROVALS_POLL_MS; at < windowMs; at += APPROVALS_POLL_MS) plan.push({ at, url: statsUrl, token: u.token });
      for (let at = ((u.index + 0.5) / n) * u.clipPollMs; at < windowMs; at += u.clipPollMs) plan.push({ at, url: clip(u), token: u.token });
    }
    plan.sort((a, b) => a.at - b.at);

    process.stdout.write(`polling: ${plan.length} polls over ${DURATION_S} s while publishing ${RATE} events/s\n`);
    const sampler = sampleProcess(pid);
    const publishing = publishEvents(knex, users, events, firstSeq);
    const latencies: number[] = [];
    let failed = 0;
    const inFlight: Promise<void>[] = [];
    const started = performance.now();
    let next = 0;
    while (next < plan.length) {
      const now = performance.now() - started;
      while (next < plan.length && plan[next].at <= now) {
        const { url, token } = plan[next++];
        const t0 = performance.now();
        inFlight.push(
          getOnce(agent, url, token).then((ok) => {
            if (ok) latencies.push(performance.now() - t0);
            else failed += 1;
          }),
        );
      }
      if (next < plan.length) await sleep(Math.max(1, plan[next].at - (performance.now() - started)));
    }
    await Promise.all(inFlight);
    const rest = windowMs - (performance.now() - started);
    if (rest > 0) await sleep(rest);
    // the window is the polling's; the publisher may still be draining its queue into the database
    const proc = sampler.stop();
    const publish = await publishing;
    const sorted = Float64Array.from(latencies).sort();
    return { requests: latencies.length, failed, seconds: proc.wallSeconds, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), idleRssMb, idle, proc, publish };
  } finally {
    agent.destroy();
    await api.stop();
  }
}

// ---------------------------------------------------------------- report

function report(sse: SseFigures, poll: PollFigures): void {
  const n = CLIENTS;
  const approvalsStalenessS = APPROVALS_POLL_MS / 2 / 1000;
  const clipStalenessS = (CLIP_POLL_PORTRAIT_MS + CLIP_POLL_LANDSCAPE_MS) / 2 / 2 / 1000;
  const ratio = (a: number, b: number) => (b > 0 ? `x${(a / b).toFixed(a / b >= 10 ? 0 : 2)}` : '-');
  const ms = (v: number) => v.toFixed(v < 100 ? 1 : 0);
  const rows: [string, string, string, string][] = [
    ['clients', `${sse.connected} streams`, `${n} pollers`, ''],
    [
      'what the API carries',
      `${(sse.delivered / sse.proc.wallSeconds).toFixed(0)} events/s (${RATE}/s offered)`,
      `${(poll.requests / DURATION_S).toFixed(1)} requests/s`,
      '',
    ],
    [
      'a change seen after',
      `p50 ${ms(sse.p50Ms)} ms, p99 ${ms(sse.p99Ms)} ms, max ${ms(sse.maxMs)} ms`,
      `mean ${approvalsStalenessS} s (approvals), ${clipStalenessS} s (clip)`,
      `p99 ${ratio(clipStalenessS * 1000, sse.p99Ms)} sooner`,
    ],
    ['  of which after the commit', `p50 ${ms(sse.afterCommitP50Ms)} ms, p99 ${ms(sse.afterCommitP99Ms)} ms`, '(interval/2, computed)', ''],
    ['API CPU, % of one core', sse.proc.cpuPercent.toFixed(1), poll.proc.cpuPercent.toFixed(1), ratio(sse.proc.cpuPercent, poll.proc.cpuPercent)],
    ['API CPU idle, % of one core', `${sse.idle.cpuPercent.toFixed(1)} (streams open)`, poll.idle.cpuPercent.toFixed(1), ''],
    [
      'API CPU per update carried, ms',
      `${((1000 * sse.proc.cpuSeconds) / Math.max(1, sse.delivered)).toFixed(3)} an event`,
      `${((1000 * poll.proc.cpuSeconds) / Math.max(1, poll.requests)).toFixed(2)} a poll`,
      '',
    ],
    ['API CPU seconds / window', `${sse.proc.cpuSeconds.toFixed(2)} / ${sse.proc.wallSeconds.toFixed(1)} s`, `${poll.proc.cpuSeconds.toFixed(2)} / ${poll.proc.wallSeconds.toFixed(1)} s`, ''],
    ['API RSS idle before, MB', sse.idleRssMb.toFixed(0), poll.idleRssMb.toFixed(0), ''],
    ['API RSS mean / peak, MB', `${sse.proc.meanRssMb.toFixed(0)} / ${sse.proc.peakRssMb.toFixed(0)}`, `${poll.proc.meanRssMb.toFixed(0)} / ${poll.proc.peakRssMb.toFixed(0)}`, ratio(sse.proc.meanRssMb, poll.proc.meanRssMb)],
    ['poll latency p50 / p99, ms', '-', `${ms(poll.p50Ms)} / ${ms(poll.p99Ms)}`, ''],
    ['losses / failures', `${sse.lost} lost, ${sse.duplicates} dup, ${sse.misrouted} misrouted, ${sse.dropped} dropped`, `${poll.failed} failed polls`, ''],
    [
      'events committed/s; commit p50/p99',
      `${sse.publish.committedPerSecond.toFixed(0)}/s; ${ms(sse.publish.commitP50Ms)} / ${ms(sse.publish.commitP99Ms)} ms`,
      `${poll.publish.committedPerSecond.toFixed(0)}/s; ${ms(poll.publish.commitP50Ms)} / ${ms(poll.publish.commitP99Ms)} ms`,
      '',
    ],
  ];
  const w = [36, 50, 44];
  process.stdout.write(`\nevents: ${n} users, ${DURATION_S} s, ${RATE} events/s offered (${(RATE / n).toFixed(2)} per user per second), API in its own process\n`);
  process.stdout.write(`${'measure'.padEnd(w[0])}${'SSE /api/events'.padEnd(w[1])}${'polling at the spec intervals'.padEnd(w[2])}SSE/polling\n`);
  for (const r of rows) process.stdout.write(`${r[0].padEnd(w[0])}${r[1].padEnd(w[1])}${r[2].padEnd(w[2])}${r[3]}\n`);
  const lines = [
    `SSE: ${sse.delivered} of ${sse.publish.published} events delivered (${((100 * sse.delivered) / Math.max(1, sse.publish.published)).toFixed(3)}%), ` +
      `${sse.publish.failed} failed to publish; ${sse.connected} streams opened in ${sse.connectSeconds.toFixed(1)} s; ` +
      `API RSS ${sse.idleRssMb.toFixed(0)} MB before the streams, ${sse.idle.meanRssMb.toFixed(0)} MB with them open and idle ` +
      `(${(((sse.idle.meanRssMb - sse.idleRssMb) * 1024) / Math.max(1, sse.connected)).toFixed(1)} kB a stream).`,
    `bench process (publisher and all ${n} clients): event-loop delay p99 ${sse.benchLoopDelayP99Ms.toFixed(1)} ms, publisher late on its schedule by at most ` +
      `${sse.publish.maxScheduleLagMs.toFixed(0)} ms; both count in the latency above.`,
  ];
  if (sse.publish.committedPerSecond < RATE * 0.95) {
    lines.push(
      `the database committed ${sse.publish.committedPerSecond.toFixed(0)} of the ${RATE} events/s offered: NOTIFY commits are serialized through the ` +
        `WAL flush, so events queued in the publisher and the end-to-end latency is mostly that queue; the API's own share is the "after the commit" row.`,
    );
  }
  lines.push(
    `polling: ${poll.requests} polls in ${DURATION_S} s; a status poll reads a finished clip's row (a running clip's also queries Temporal), ` +
      'so the polling cost is a lower bound. The machine is shared with other work: figures are noisy.',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  recordResults('events', [
    ratioMeasure('delivered_share', sse.delivered / Math.max(1, sse.publish.published), 'higher', 'events delivered over events published', 1),
    ratioMeasure('sse_vs_poll_cpu', sse.proc.cpuPercent / Math.max(0.001, poll.proc.cpuPercent), 'lower', 'API CPU with SSE over API CPU polling at the spec intervals'),
    ratioMeasure('sse_vs_poll_rss', sse.proc.meanRssMb / poll.proc.meanRssMb, 'lower', 'API mean RSS with SSE over polling'),
    figure('committed_per_s', sse.publish.committedPerSecond, 'events/s', 'higher', 'events committed per second'),
  ]);
}

async function main(): Promise<void> {
  if (!Number.isInteger(CLIENTS) || CLIENTS < 1) throw new Error('BENCH_SSE_CLIENTS must be a positive integer');
  if (!Number.isInteger(DURATION_S) || DURATION_S < 1) throw new Error('BENCH_DURATION_SECONDS must be a positive integer');
  if (!(RATE > 0)) throw new Error('BENCH_EVENTS_PER_SECOND must be positive');
  checkFileLimit();
  await withBenchDatabase({ max: PUBLISH_POOL }, async (db) => {
    const users = await createUsers(db.knex, CLIENTS);
    try {
      const measured = Math.round(RATE * DURATION_S);
      const sse = await sseSide(db.url, db.knex, users, measured);
      const poll = await pollingSide(db.url, db.knex, users, measured, CLIENTS + measured);
      report(sse, poll);
      const problems = [
        sse.connected < CLIENTS && `${CLIENTS - sse.connected} streams never opened`,
        sse.lost !== 0 && `${sse.lost} events lost`,
        sse.publish.failed + poll.publish.failed > 0 && `${sse.publish.failed + poll.publish.failed} events failed to publish`,
        sse.duplicates && `${sse.duplicates} duplicate deliveries`,
        sse.misrouted && `${sse.misrouted} events on another user's stream`,
        sse.dropped && `${sse.dropped} streams dropped by the API`,
        poll.failed && `${poll.failed} failed polls`,
      ].filter(Boolean);
      if (problems.length) throw new Error(problems.join('; '));
    } finally {
      await deleteUsers(db.knex, users);
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
