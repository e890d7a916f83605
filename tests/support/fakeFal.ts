/**
 * A local HTTP server speaking fal.ai's queue protocol, for the hosted providers' tests.
 *   POST /{model...}                         submit  -> { request_id, status_url, response_url, cancel_url }
 *   GET  /{owner}/{app}/requests/{id}/status  IN_QUEUE (queue_position) -> IN_PROGRESS (logs) -> COMPLETED, one step per poll
 *   GET  /{owner}/{app}/requests/{id}         the model's output, or its error (422 detail list, or 500 with X-Fal-Error-Type)
 *   PUT  /{owner}/{app}/requests/{id}/cancel  202 CANCELLATION_REQUESTED, 400 ALREADY_COMPLETED
 *   GET  /files/{name}                        outputs, without auth (fal's CDN needs none)
 *   GET  /.well-known/jwks.json               the fake's own webhook signing key (ED25519, as fal publishes its keys)
 * A submit with `?fal_webhook=<url>` (fal's webhook) is run by the fake on its own, nobody needs to poll it: it completes
 * at once (after `callbackDelayMs`; in latency mode when its time is up), and the fake POSTs fal's webhook body
 * ({ request_id, gateway_request_id, status: OK | ERROR, payload, error }) to the URL, signed the way fal signs
 * (X-Fal-Webhook-Request-Id, -User-Id, -Timestamp, -Signature: ED25519 over request id, user id, timestamp and the
 * body's sha256 in hex, one per line) with the fake's own key; an answer other than 2xx is retried (fal: 10 times).
 * Every queue call needs `Authorization: Key <apiKey>`. The "models" really work on their input: the
 * image edit inverts the image, the upscale resizes it, the video model serves an MP4 made with ffmpeg, and the
 * vision language model (any-llm/vision: { model, system_prompt, prompt, image_urls } -> { output }) names the size of
 * every image it was given before the prompt.
 *
 * Latency mode (`latency`, the capacity benchmark's provider): instead of one status step per poll, each job takes a
 * time drawn from its kind's range (clips `clipMs`, every other kind `imageMs`) by a seeded generator, one draw per
 * submission in order, so a seed gives the same durations every run. Meanwhile the status polls answer as fal's do:
 * IN_QUEUE (with a falling queue position) for the first `queuedShare` of it, then IN_PROGRESS with a log line naming
 * the percentage done, then COMPLETED. `now` replaces the clock (tests).
 */
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';

export type FakeFalKind = 'image-edit' | 'upscale' | 'video' | 'vision-llm';
export type FakeFalBehaviour = 'succeed' | 'fail-runtime' | 'fail-validation' | 'never-complete' | 'submit-500' | 'status-hangs';

export interface FakeFalModel {
  kind: FakeFalKind;
  behaviour: FakeFalBehaviour;
  /** Status polls answered IN_QUEUE, then IN_PROGRESS, before COMPLETED. */
  queuedPolls?: number;
  runningPolls?: number;
}

export interface FakeFalJob {
  requestId: string;
  model: string;
  app: string;
  input: Record<string, unknown>;
  statusPolls: number;
  cancelled: boolean;
  completed: boolean;
  /** Latency mode: when it was submitted (the fake's clock, ms) and how long it takes. */
  submittedAt: number;
  durationMs: number | null;
  /** fal_webhook of the submit. */
  webhookUrl: string | null;
}

/** One webhook the fake sent (or tried to): its last answer and how many tries it took. */
export interface FakeFalCallback {
  requestId: string;
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  attempts: number;
  /** HTTP status of the last try; 0: it could not connect. */
  status: number;
}

export const FAKE_FAL_USER_ID = 'fake-fal-user';

/** fal's webhook headers for `body`, signed with `key` (ED25519 over `${requestId}\n${userId}\n${timestamp}\n${sha256hex(body)}`). */
export function signedFalWebhookHeaders(key: KeyObject, requestId: string, body: Buffer, options: { userId?: string; timestampSeconds?: number } = {}): Record<string, string> {
  const userId = options.userId ?? FAKE_FAL_USER_ID;
  const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
  const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${createHash('sha256').update(body).digest('hex')}`, 'utf8');
  return {
    'Content-Type': 'application/json',
    'X-Fal-Webhook-Request-Id': requestId,
    'X-Fal-Webhook-User-Id': userId,
    'X-Fal-Webhook-Timestamp': timestamp,
    'X-Fal-Webhook-Signature': sign(null, message, key).toString('hex'),
  };
}

/** A JWKS document of ED25519 public keys, as fal serves its own. */
export function jwksOf(keys: Array<{ kid: string; publicKey: KeyObject }>): { keys: Array<Record<string, string>> } {
  return { keys: keys.map(({ kid, publicKey }) => ({ ...(publicKey.export({ format: 'jwk' }) as Record<string, string>), kid, use: 'sig', alg: 'EdDSA' })) };
}

/** Ranges are [least, most] in ms; a job's time is drawn uniformly in its kind's range. */
export interface FakeFalLatency {
  clipMs: readonly [number, number];
  imageMs: readonly [number, number];
  seed: number;
  /** Share of a job's time it reads IN_QUEUE before IN_PROGRESS (0.1). */
  queuedShare?: number;
}

/** The clip the video model serves (ffmpeg's testsrc2): 320 x 180, 5 s unless set. */
export interface FakeFalVideo {
  width: number;
  height: number;
  seconds: number;
}

/** mulberry32: a small seeded generator of uniform numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number of ms in [least, most], from one draw of `random`. */
export function drawLatency(random: () => number, [least, most]: readonly [number, number]): number {
  if (!(least >= 0) || !(most >= least)) throw new Error(`latency range [${least}, ${most}] is not a range of ms`);
  return Math.round(least + random() * (most - least));
}

export type FakeFalPhase = { status: 'IN_QUEUE'; queuePosition: number } | { status: 'IN_PROGRESS'; percent: number } | { status: 'COMPLETED' };

/** Where a job of `durationMs` stands `elapsedMs` after its submission, in latency mode. */
export function latencyPhase(elapsedMs: number, durationMs: number, queuedShare = 0.1): FakeFalPhase {
  if (elapsedMs >= durationMs) return { status: 'COMPLETED' };
  const queuedMs = durationMs * queuedShare;
  // one position per tenth of the queued time left
  if (elapsedMs < queuedMs) return { status: 'IN_QUEUE', queuePosition: Math.ceil(((queuedMs - elapsedMs) / Math.max(1, queuedMs)) * 10) };
  return { status: 'IN_PROGRESS', percent: Math.min(99, Math.floor(((elapsedMs - queuedMs) / Math.max(1, durationMs - queuedMs)) * 100)) };
}

export interface FakeFalRequestLog {
  method: string;
  path: string;
  authorization: string | undefined;
  status: number;
}

export interface FakeFal {
  baseUrl: string;
  apiKey: string;
  jobs: FakeFalJob[];
  /** Status polls answered so far (all jobs). */
  statusPolls(): number;
  log: FakeFalRequestLog[];
  /** Where the fake serves its webhook key set (give it as FAL_WEBHOOK_JWKS_URL). */
  jwksUrl: string;
  /** The fake's webhook signing key (tests sign their own callbacks with it, or with another to forge one). */
  signingKey: KeyObject;
  /** Webhooks sent, one entry per callback (its last try). */
  callbacks: FakeFalCallback[];
  /** Resolves once every webhook due so far has been answered with 2xx or given up. */
  callbacksSettled(): Promise<void>;
  close(): Promise<void>;
}

const execFileAsync = promisify(execFile);

function decodeDataUri(value: unknown): Buffer | null {
  if (typeof value !== 'string') return null;
  const match = /^data:image\/[a-z+]+;base64,(.+)$/.exec(value);
  return match ? Buffer.from(match[1], 'base64') : null;
}

export interface FakeFalOptions {
  apiKey: string;
  models: Record<string, FakeFalModel>;
  latency?: FakeFalLatency;
  video?: FakeFalVideo;
  /** false: a video job's input keeps its keys but not its (data URI) values, for runs of thousands of jobs. */
  keepVideoInputs?: boolean;
  /** No request log (runs of thousands of jobs). */
  quiet?: boolean;
  now?: () => number;
  /** A webhook job completes this long after its submission (ms, 0) outside latency mode. */
  callbackDelayMs?: number;
  /** Tries of a webhook answered with other than 2xx, and the wait before the n-th retry (n x retryMs). */
  callbackAttempts?: number;
  callbackRetryMs?: number;
}

export async function startFakeFal(options: FakeFalOptions): Promise<FakeFal> {
  const now = options.now ?? Date.now;
  const random = options.latency ? seededRandom(options.latency.seed) : null;
  const videoSpec = options.video ?? { width: 320, height: 180, seconds: 5 };
  const files = new Map<string, { data: Buffer; type: string }>();
  const jobs: FakeFalJob[] = [];
  const byId = new Map<string, FakeFalJob>();
  let polls = 0;
  const log: FakeFalRequestLog[] = [];
  const hanging = new Set<http.ServerResponse>();
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'fake-fal-'));
  let video: Promise<Buffer> | null = null;
  let baseUrl = '';
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const callbacks: FakeFalCallback[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  let closed = false;

  const makeVideo = () => {
    video ??= (async () => {
      const file = path.join(scratch, 'clip.mp4');
      const size = `${videoSpec.width}x${videoSpec.height}`;
      await execFileAsync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=30`, '-t', String(videoSpec.seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file]);
      return fs.readFile(file);
    })();
    return video;
  };

  const serveFile = (data: Buffer, type: string) => {
    const name = `${randomUUID()}`;
    files.set(name, { data, type });
    return `${baseUrl}/files/${name}`;
  };

  const output = async (job: FakeFalJob, kind: FakeFalKind): Promise<Record<string, unknown>> => {
    if (kind === 'video') {
      const url = serveFile(await makeVideo(), 'video/mp4');
      return { video: { url, content_type: 'video/mp4', file_name: 'output.mp4' } };
    }
    const images = job.input.image_urls;
    if (kind === 'vision-llm') {
      const sizes = await Promise.all(
        (Array.isArray(images) ? images : []).map(async (uri) => {
          const meta = await sharp(decodeDataUri(uri) ?? Buffer.alloc(0)).metadata();
          return `${meta.width}x${meta.height}`;
        }),
      );
      return { output: `[${String(job.input.model)} saw ${sizes.join(', ') || 'no images'}] ${String(job.input.prompt)}`, partial: false, error: null };
    }
    const source = decodeDataUri(Array.isArray(images) ? images[0] : job.input.image_url);
    if (!source) throw new Error('no image');
    if (kind === 'upscale') {
      const meta = await sharp(source).metadata();
      const scale = typeof job.input.scale === 'number' ? job.input.scale : 2;
      const { data, info } = await sharp(source).resize((meta.width ?? 1) * scale, (meta.height ?? 1) * scale).png().toBuffer({ resolveWithObject: true });
      return { image: { url: serveFile(data, 'image/png'), width: info.width, height: info.height, content_type: 'image/png' } };
    }
    const { data, info } = await sharp(source).negate({ alpha: false }).jpeg().toBuffer({ resolveWithObject: true });
    return { images: [{ url: serveFile(data, 'image/jpeg'), width: info.width, height: info.height, content_type: 'image/jpeg' }], description: `edited: ${String(job.input.prompt)}` };
  };

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) run();
    }, ms);
    timers.add(timer);
  };

  /** POSTs the signed webhook, retrying an answer other than 2xx. */
  const deliver = async (job: FakeFalJob, body: Buffer): Promise<void> => {
    const entry: FakeFalCallback = { requestId: job.requestId, url: job.webhookUrl ?? '', body, headers: {}, attempts: 0, status: 0 };
    callbacks.push(entry);
    const attempts = options.callbackAttempts ?? 10;
    for (let attempt = 1; attempt <= attempts && !closed; attempt += 1) {
      entry.attempts = attempt;
      entry.headers = signedFalWebhookHeaders(privateKey, job.requestId, body);
      try {
        const response = await fetch(entry.url, { method: 'POST', headers: entry.headers, body, signal: AbortSignal.timeout(30_000) });
        entry.status = response.status;
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) return;
      } catch {
        entry.status = 0;
      }
      if (attempt < attempts) await new Promise<void>((resolve) => later(attempt * (options.callbackRetryMs ?? 200), resolve));
    }
  };

  /** A webhook job's end: it reads COMPLETED from now on, and its outcome goes to the webhook. */
  const completeWithCallback = (job: FakeFalJob, spec: FakeFalModel) => {
    if (job.completed || job.cancelled || spec.behaviour === 'never-complete') return;
    job.completed = true;
    const run = (async () => {
      let message: Record<string, unknown>;
      if (spec.behaviour === 'fail-runtime') {
        message = { request_id: job.requestId, gateway_request_id: job.requestId, status: 'ERROR', error: 'Invalid status code: 500', payload: { detail: 'Model runner crashed' } };
      } else if (spec.behaviour === 'fail-validation') {
        message = { request_id: job.requestId, gateway_request_id: job.requestId, status: 'ERROR', error: 'Invalid status code: 422', payload: { detail: [{ loc: ['body', 'image_url'], msg: 'Image could not be processed', type: 'image_load_error' }] } };
      } else {
        message = { request_id: job.requestId, gateway_request_id: job.requestId, status: 'OK', payload: await output(job, spec.kind) };
      }
      await deliver(job, Buffer.from(JSON.stringify(message)));
    })().catch(() => undefined);
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (!options.quiet) log.push({ method: req.method ?? '', path: url.pathname, authorization: req.headers.authorization, status });
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && url.pathname.startsWith('/files/')) {
          const file = files.get(url.pathname.slice('/files/'.length));
          if (!file) return send(404, { detail: 'Not found' });
          if (!options.quiet) log.push({ method: 'GET', path: url.pathname, authorization: req.headers.authorization, status: 200 });
          res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': String(file.data.length) });
          res.end(file.data);
          return;
        }
        if (req.method === 'GET' && url.pathname === '/.well-known/jwks.json') return send(200, jwksOf([{ kid: 'fake-fal-webhook-key', publicKey }]));
        if (req.headers.authorization !== `Key ${options.apiKey}`) return send(401, { detail: 'Invalid API key' });

        const parts = url.pathname.split('/').filter(Boolean);
        const at = parts.indexOf('requests');
        if (at === -1) {
          if (req.method !== 'POST') return send(405, { detail: 'Method not allowed' });
          const model = parts.join('/');
          const spec = options.models[model];
          if (!spec) return send(404, { detail: `Application '${model}' not found` });
          if (spec.behaviour === 'submit-500') return send(500, { detail: 'Internal server error' });
          let input: Record<string, unknown>;
          try {
            input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          } catch {
            return send(422, { detail: [{ loc: ['body'], msg: 'Invalid JSON', type: 'value_error' }] });
          }
          if (spec.kind === 'video' && options.keepVideoInputs === false) input = Object.fromEntries(Object.keys(input).map((key) => [key, typeof input[key] === 'string' ? `(${(input[key] as string).length} characters)` : input[key]]));
          const range = spec.kind === 'video' ? options.latency?.clipMs : options.latency?.imageMs;
          const durationMs = random && range ? drawLatency(random, range) : null;
          const webhookUrl = url.searchParams.get('fal_webhook');
          const job: FakeFalJob = { requestId: randomUUID(), model, app: parts.slice(0, 2).join('/'), input, statusPolls: 0, cancelled: false, completed: false, submittedAt: now(), durationMs, webhookUrl };
          jobs.push(job);
          byId.set(job.requestId, job);
          // a webhook job runs on its own: nobody has to poll it to its end
          if (webhookUrl) later(durationMs ?? options.callbackDelayMs ?? 0, () => completeWithCallback(job, spec));
          const base = `${baseUrl}/${job.app}/requests/${job.requestId}`;
          return send(200, { status: 'IN_QUEUE', request_id: job.requestId, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel`, queue_position: spec.queuedPolls ?? 1 });
        }

        const app = parts.slice(0, at).join('/');
        const found = byId.get(parts[at + 1] ?? '');
        const job = found && found.app === app ? found : undefined;
        if (!job) return send(404, { detail: 'Request not found' });
        const spec = options.models[job.model];
        const action = parts[at + 2];
        const queued = spec.queuedPolls ?? 1;
        const running = spec.runningPolls ?? 2;

        if (action === 'status' && req.method === 'GET') {
          if (spec.behaviour === 'status-hangs') {
            hanging.add(res);
            res.on('close', () => hanging.delete(res));
            return;
          }
          job.statusPolls += 1;
          polls += 1;
          const n = job.statusPolls;
          const base = { request_id: job.requestId, response_url: `${baseUrl}/${app}/requests/${job.requestId}`, status_url: `${baseUrl}/${app}/requests/${job.requestId}/status`, cancel_url: `${baseUrl}/${app}/requests/${job.requestId}/cancel` };
          if (job.webhookUrl && job.completed && !job.cancelled) return send(200, { ...base, status: 'COMPLETED', logs: [], metrics: { inference_time: (job.durationMs ?? 1500) / 1000 } });
          if (job.cancelled) {
            job.completed = true;
            return send(200, { ...base, status: 'COMPLETED', logs: [], error: 'Request was cancelled', error_type: 'request_cancelled' });
          }
          if (job.durationMs !== null) {
            const phase = latencyPhase(now() - job.submittedAt, job.durationMs, options.latency?.queuedShare);
            if (phase.status === 'IN_QUEUE') return send(202, { ...base, status: 'IN_QUEUE', queue_position: phase.queuePosition });
            if (phase.status === 'IN_PROGRESS' || spec.behaviour === 'never-complete') {
              const pct = phase.status === 'IN_PROGRESS' ? phase.percent : 99;
              const logs = url.searchParams.get('logs') === '1' ? [{ message: `${pct}% done`, level: 'INFO', timestamp: new Date(now()).toISOString() }] : [];
              return send(202, { ...base, status: 'IN_PROGRESS', logs });
            }
            job.completed = true;
            return send(200, { ...base, status: 'COMPLETED', logs: [], metrics: { inference_time: job.durationMs / 1000 } });
          }
          if (n <= queued) return send(202, { ...base, status: 'IN_QUEUE', queue_position: queued - n });
          if (n <= queued + running || spec.behaviour === 'never-complete') {
            const step = n - queued;
            const pct = Math.min(99, Math.round((step / (running + 1)) * 100));
            const logs = url.searchParams.get('logs') === '1' ? [{ message: `step ${step}: ${pct}% done`, level: 'INFO', timestamp: new Date().toISOString() }] : [];
            return send(202, { ...base, status: 'IN_PROGRESS', logs });
          }
          job.completed = true;
          return send(200, { ...base, status: 'COMPLETED', logs: [], metrics: { inference_time: 1.5 } });
        }
        if (action === undefined && req.method === 'GET') {
          if (!job.completed) return send(400, { detail: 'Request is still in progress' });
          if (spec.behaviour === 'fail-runtime') return send(500, { detail: 'Model runner crashed', error_type: 'runner_disconnected' }, { 'X-Fal-Error-Type': 'runner_disconnected' });
          if (spec.behaviour === 'fail-validation') return send(422, { detail: [{ loc: ['body', 'image_url'], msg: 'Image could not be processed', type: 'image_load_error' }] });
          return send(200, await output(job, spec.kind));
        }
        if (action === 'cancel' && req.method === 'PUT') {
          if (job.completed) return send(400, { status: 'ALREADY_COMPLETED' });
          job.cancelled = true;
          return send(202, { status: 'CANCELLATION_REQUESTED' });
        }
        return send(405, { detail: 'Method not allowed' });
      })().catch((error: unknown) => send(500, { detail: `fake fal failed: ${(error as Error).message}` }));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    apiKey: options.apiKey,
    jobs,
    log,
    jwksUrl: `${baseUrl}/.well-known/jwks.json`,
    signingKey: privateKey,
    callbacks,
    callbacksSettled: async () => {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    statusPolls: () => polls,
    close: async () => {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(scratch, { recursive: true, force: true });
    },
  };
}
