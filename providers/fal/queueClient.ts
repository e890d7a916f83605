/**
 * fal.ai's queue protocol over HTTP (no SDK: four calls and a download).
 *   POST {base}/{model}[?fal_webhook=<url>]      -> { request_id, status_url, response_url, cancel_url }
 *        (with `fal_webhook`, fal POSTs the outcome to that URL when the request ends: providers/fal/webhookSignature.ts)
 *   GET  {base}/{owner}/{app}/requests/{id}/status?logs=1 -> { status: IN_QUEUE | IN_PROGRESS | COMPLETED, queue_position, logs }
 *   GET  {base}/{owner}/{app}/requests/{id}      -> the model's output JSON (or its error, with X-Fal-Error-Type)
 *   PUT  {base}/{owner}/{app}/requests/{id}/cancel
 * Requests use only the app part of the model id ("fal-ai/kling-video" for
 * "fal-ai/kling-video/v2.1/standard/image-to-video"), as fal's own client does, so a request id and the
 * model id are enough to resume after a restart. Every call carries `Authorization: Key <key>`; result
 * downloads (fal's CDN) never do.
 */
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ProviderError, type ProviderErrorCode } from '../errors';

export type CallGuard = <T>(call: (signal: AbortSignal) => Promise<T>) => Promise<T>;

export interface FalQueueClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Timeout of one HTTP call (ms). */
  requestTimeoutMs?: number;
  /** Timeout of one result download (ms). */
  downloadTimeoutMs?: number;
  /** Wraps each API call (not downloads): the circuit breaker. */
  guard?: CallGuard;
  fetch?: typeof fetch;
}

export interface FalSubmission {
  requestId: string;
  statusUrl?: string;
  responseUrl?: string;
  cancelUrl?: string;
}

export interface FalLog {
  message: string;
  timestamp?: string;
  level?: string;
}

export interface FalStatus {
  status: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  queuePosition?: number;
  logs: FalLog[];
  /** Set by the queue when a completed request ended in an error. */
  error?: string;
  errorType?: string;
}

const NAMESPACES = ['workflows', 'comfy'];

/** "owner/app[/path]" -> "owner/app", keeping fal's namespaced ids ("workflows/owner/app"). */
export function falAppId(model: string): string {
  const parts = model.split('/').filter(Boolean);
  const take = NAMESPACES.includes(parts[0] ?? '') ? 3 : 2;
  if (parts.length < take) throw new ProviderError('INPUT', `"${model}" is not a fal model id (owner/app[/path])`);
  return parts.slice(0, take).join('/');
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** fal answers errors as { detail: string | [{ loc, msg }] } (FastAPI) or { message } / { error }. */
export function falErrorDetail(body: unknown, fallback: string): string {
  const record = asRecord(body);
  if (!record) return typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : fallback;
  const detail = record.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const parts = detail.map((d) => {
      const item = asRecord(d);
      if (!item) return String(d);
      const loc = Array.isArray(item.loc) ? item.loc.join('.') : '';
      return loc ? `${loc}: ${String(item.msg ?? '')}` : String(item.msg ?? '');
    });
    if (parts.length > 0) return parts.join('; ');
  }
  for (const key of ['message', 'error']) if (typeof record[key] === 'string') return record[key] as string;
  return fallback;
}

function codeForStatus(status: number): ProviderErrorCode {
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 429) return 'RATE_LIMITED';
  if (status === 408 || status === 504) return 'TIMEOUT';
  if (status >= 500) return 'UNAVAILABLE';
  return 'VALIDATION';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ProviderError('ABORTED', 'Stopped waiting for fal.ai'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(new ProviderError('ABORTED', 'Stopped waiting for fal.ai'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface FalPollOptions {
  pollIntervalMs: number;
  /** Give up when the request is not COMPLETED by this time (epoch ms). */
  deadline: number;
  onStatus?: (status: FalStatus) => void | Promise<void>;
  signal?: AbortSignal;
}

interface HttpAnswer {
  status: number;
  body: unknown;
  errorType: string | null;
}

export class FalQueueClient {
  private readonly baseUrl: string;
  private readonly options: Required<Omit<FalQueueClientOptions, 'guard'>> & { guard?: CallGuard };

  constructor(options: FalQueueClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.options = {
      ...options,
      requestTimeoutMs: options.requestTimeoutMs ?? 30000,
      downloadTimeoutMs: options.downloadTimeoutMs ?? 300000,
      fetch: options.fetch ?? globalThis.fetch,
    };
  }

  /** Queues a request; with `webhookUrl`, fal calls that URL back when it ends (its `fal_webhook` parameter). */
  async submit(model: string, input: Record<string, unknown>, signal?: AbortSignal, webhookUrl?: string): Promise<FalSubmission> {
    const what = `submit to ${model}`;
    const query = webhookUrl ? `?fal_webhook=${encodeURIComponent(webhookUrl)}` : '';
    return this.call('POST', `${this.baseUrl}/${model.replace(/^\/+/, '')}${query}`, what, input, signal, (answer) => {
      this.throwUnlessOk(answer, what);
      const body = asRecord(answer.body);
      const requestId = body?.request_id;
      if (typeof requestId !== 'string' || !requestId) throw new ProviderError('BAD_RESPONSE', `fal.ai accepted the request to ${model} but sent no request_id`);
      const text = (key: string) => (typeof body?.[key] === 'string' ? (body[key] as string) : undefined);
      return { requestId, statusUrl: text('status_url'), responseUrl: text('response_url'), cancelUrl: text('cancel_url') };
    });
  }

  async status(model: string, requestId: string, signal?: AbortSignal): Promise<FalStatus> {
    const what = `status of ${requestId}`;
    return this.call('GET', `${this.requestUrl(model, requestId)}/status?logs=1`, what, undefined, signal, (answer) => {
      if (answer.status === 404) throw new ProviderError('UNKNOWN_JOB', `fal.ai does not know request ${requestId} of ${falAppId(model)}`);
      this.throwUnlessOk(answer, what);
      const body = asRecord(answer.body);
      const status = body?.status;
      if (status !== 'IN_QUEUE' && status !== 'IN_PROGRESS' && status !== 'COMPLETED') {
        throw new ProviderError('BAD_RESPONSE', `fal.ai sent an unknown status for ${requestId}: ${JSON.stringify(status)}`);
      }
      const logs = Array.isArray(body?.logs)
        ? body.logs
            .map(asRecord)
            .filter((l): l is Record<string, unknown> => l !== null && typeof l.message === 'string')
            .map((l) => ({
              message: l.message as string,
              timestamp: typeof l.timestamp === 'string' ? l.timestamp : undefined,
              level: typeof l.level === 'string' ? l.level : undefined,
            }))
        : [];
      return {
        status,
        queuePosition: typeof body?.queue_position === 'number' ? body.queue_position : undefined,
        logs,
        error: typeof body?.error === 'string' ? body.error : undefined,
        errorType: typeof body?.error_type === 'string' ? body.error_type : undefined,
      };
    });
  }

  /** The output of a COMPLETED request. A request the model failed is a JOB_FAILED error. */
  async result(model: string, requestId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const what = `result of ${requestId}`;
    return this.call('GET', this.requestUrl(model, requestId), what, undefined, signal, (answer) => {
      if (answer.status < 200 || answer.status >= 300) {
        const bodyType = asRecord(answer.body)?.error_type;
        const type = answer.errorType ?? (typeof bodyType === 'string' ? bodyType : null);
        const detail = falErrorDetail(answer.body, `HTTP ${answer.status}`);
        // the model refused this input (a 4xx on the result): the caller's problem, not an outage
        if (answer.status >= 400 && answer.status < 500 && ![401, 403, 404, 429].includes(answer.status)) {
          throw new ProviderError('VALIDATION', `fal.ai rejected request ${requestId}${type ? ` (${type})` : ''}: ${detail}`, { httpStatus: answer.status });
        }
        // the model ran and broke (fal marks those with an error type)
        if (type !== null) throw new ProviderError('JOB_FAILED', `fal.ai request ${requestId} failed (${type}): ${detail}`, { httpStatus: answer.status });
        if (answer.status === 404) throw new ProviderError('UNKNOWN_JOB', `fal.ai does not know request ${requestId} of ${falAppId(model)}`);
        this.throwUnlessOk(answer, what);
      }
      const body = asRecord(answer.body);
      if (!body) throw new ProviderError('BAD_RESPONSE', `fal.ai sent a result for ${requestId} that is not a JSON object`);
      return body;
    });
  }

  /** Asks fal to cancel; a request that already completed is left as it is. */
  async cancel(model: string, requestId: string, signal?: AbortSignal): Promise<void> {
    const what = `cancel of ${requestId}`;
    return this.call('PUT', `${this.requestUrl(model, requestId)}/cancel`, what, undefined, signal, (answer) => {
      if (answer.status === 400 && asRecord(answer.body)?.status === 'ALREADY_COMPLETED') return;
      if (answer.status === 404) throw new ProviderError('UNKNOWN_JOB', `fal.ai does not know request ${requestId} of ${falAppId(model)}`);
      this.throwUnlessOk(answer, what);
    });
  }

  /** Polls the status until COMPLETED, the deadline, or an abort. */
  async waitUntilCompleted(model: string, requestId: string, options: FalPollOptions): Promise<FalStatus> {
    for (;;) {
      const status = await this.status(model, requestId, options.signal);
      await options.onStatus?.(status);
      if (status.status === 'COMPLETED') {
        if (status.error) throw new ProviderError('JOB_FAILED', `fal.ai request ${requestId} failed${status.errorType ? ` (${status.errorType})` : ''}: ${status.error}`);
        return status;
      }
      const left = options.deadline - Date.now();
      if (left <= 0) throw new ProviderError('TIMEOUT', `fal.ai request ${requestId} did not complete in time (last status ${status.status})`);
      await sleep(Math.min(options.pollIntervalMs, left), options.signal);
    }
  }

  async downloadBuffer(url: string, signal?: AbortSignal): Promise<{ data: Buffer; contentType: string | null }> {
    const response = await this.download(url, signal);
    return { data: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type') };
  }

  async downloadToFile(url: string, file: string, signal?: AbortSignal): Promise<number> {
    const response = await this.download(url, signal);
    if (!response.body) throw new ProviderError('BAD_RESPONSE', `fal.ai file ${url} has no body`);
    const partial = `${file}.partial`;
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(partial));
      await fs.rename(partial, file);
    } catch (cause) {
      await fs.rm(partial, { force: true });
      throw new ProviderError('UNAVAILABLE', `Downloading ${url} failed: ${(cause as Error).message}`, { cause });
    }
    return (await fs.stat(file)).size;
  }

  private async download(url: string, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.options.downloadTimeoutMs);
    let response: Response;
    try {
      response = await this.options.fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (cause) {
      if (timeout.aborted) throw new ProviderError('TIMEOUT', `Downloading ${url} timed out after ${this.options.downloadTimeoutMs}ms`, { cause });
      if (signal?.aborted) throw new ProviderError('ABORTED', `Download of ${url} aborted`, { cause });
      throw new ProviderError('UNAVAILABLE', `Downloading ${url} failed: ${(cause as Error).message}`, { cause });
    }
    if (!response.ok) throw new ProviderError(codeForStatus(response.status), `Downloading ${url} failed: HTTP ${response.status}`, { httpStatus: response.status });
    return response;
  }

  private requestUrl(model: string, requestId: string): string {
    return `${this.baseUrl}/${falAppId(model)}/requests/${encodeURIComponent(requestId)}`;
  }

  private throwUnlessOk(answer: HttpAnswer, what: string): void {
    if (answer.status >= 200 && answer.status < 300) return;
    const code = codeForStatus(answer.status);
    const detail = falErrorDetail(answer.body, `HTTP ${answer.status}`);
    const prefix = code === 'AUTH' ? `fal.ai refused the API key (HTTP ${answer.status})` : `fal.ai ${what} failed with HTTP ${answer.status}`;
    throw new ProviderError(code, `${prefix}: ${detail}`, { httpStatus: answer.status });
  }

  /** One API call; `interpret` runs inside the guard, so the breaker sees the errors it throws (a 500, a bad body). */
  private call<T>(method: string, url: string, what: string, body: unknown, signal: AbortSignal | undefined, interpret: (answer: HttpAnswer) => T): Promise<T> {
    if (!this.options.apiKey) return Promise.reject(new ProviderError('AUTH', 'FAL_KEY is not set: the fal provider needs an API key'));
    const run = async (guardSignal?: AbortSignal) => interpret(await this.send(method, url, what, body, [signal, guardSignal]));
    return this.options.guard ? this.options.guard(run) : run();
  }

  private async send(method: string, url: string, what: string, body: unknown, signals: Array<AbortSignal | undefined>): Promise<HttpAnswer> {
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs);
    const outer = signals.filter((s): s is AbortSignal => s !== undefined);
    let response: Response;
    try {
      response = await this.options.fetch(url, {
        method,
        headers: {
          Authorization: `Key ${this.options.apiKey}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any([timeout, ...outer]),
      });
    } catch (cause) {
      if (outer.some((s) => s.aborted)) throw new ProviderError('ABORTED', `fal.ai ${what} aborted`, { cause });
      if (timeout.aborted) throw new ProviderError('TIMEOUT', `fal.ai ${what} timed out after ${this.options.requestTimeoutMs}ms`, { cause });
      throw new ProviderError('UNAVAILABLE', `fal.ai is unreachable (${what}): ${(cause as Error).message}`, { cause });
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown = text;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (response.ok) throw new ProviderError('BAD_RESPONSE', `fal.ai ${what} answered with unreadable JSON`);
      }
    } else if (response.ok && method !== 'PUT') {
      throw new ProviderError('BAD_RESPONSE', `fal.ai ${what} answered ${response.headers.get('content-type') ?? 'without a content type'}, not JSON`);
    }
    return { status: response.status, body: parsed, errorType: response.headers.get('x-fal-error-type') };
  }
}
