/**
 * One webhook POST: to the address services/integrations/webhookTargets.ts resolved and checked (never a second DNS
 * look-up, so a name that changes its answer between the check and the connection cannot redirect the request),
 * with the URL's host in the Host header and TLS SNI, within a time limit, keeping at most `keepBodyBytes` of the
 * answer. Redirects are not followed (the answer is the answer). Connections are kept alive per target for the
 * next delivery of the same endpoint.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';

export interface WebhookRequest {
  url: URL;
  /** the resolved, checked address and its family */
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  keepBodyBytes: number;
  /** aborts the request (the activity was cancelled) */
  signal?: AbortSignal;
}

export interface WebhookAnswer {
  /** null when no answer came (timeout, refused connection, TLS failure ...) */
  status: number | null;
  /** the answer's first `keepBodyBytes` bytes as text, or '' */
  body: string;
  /** why there is no answer, for the log; null when there is one */
  error: string | null;
  latencyMs: number;
}

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 60_000 });
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 60_000 });

/** A lookup that answers the already checked address whatever name it is asked for. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

function describeError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `No answer within ${Math.round(timeoutMs / 1000)} s (timed out)`;
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
      return 'Connection reset by the receiver';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'Host unreachable';
    case 'ABORT_ERR':
      return 'Attempt stopped (the worker was shutting down)';
    default:
      return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
  }
}

/** Cuts `text` to at most `bytes` UTF-8 bytes (never in the middle of a character). */
export function truncateUtf8(text: string, bytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  return buf.subarray(0, bytes).toString('utf8').replace(/\uFFFD$/, '');
}

export function sendWebhookRequest(req: WebhookRequest): Promise<WebhookAnswer> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const isHttps = req.url.protocol === 'https:';
  const host = req.url.hostname.startsWith('[') ? req.url.hostname.slice(1, -1) : req.url.hostname;
  return new Promise<WebhookAnswer>((resolve) => {
    let settled = false;
    let timedOut = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    const finish = (answer: Omit<WebhookAnswer, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      resolve({ ...answer, latencyMs: elapsed() });
    };
    const options: https.RequestOptions = {
      method: 'POST',
      host,
      port: req.url.port ? Number(req.url.port) : isHttps ? 443 : 80,
      path: `${req.url.pathname}${req.url.search}`,
      headers: { ...req.headers, host: req.url.host, 'content-length': String(Buffer.byteLength(req.body)) },
      lookup: pinnedLookup(req.address, req.family),
      agent: isHttps ? httpsAgent : httpAgent,
      ...(isHttps ? { servername: net.isIP(host) ? undefined : host } : {}),
    };
    const request = (isHttps ? https : http).request(options, (res) => {
      const status = res.statusCode ?? null;
      res.on('data', (chunk: Buffer) => {
        if (kept < req.keepBodyBytes) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      res.on('end', () => finish({ status, body: truncateUtf8(Buffer.concat(chunks).toString('utf8'), req.keepBodyBytes), error: null }));
      res.on('error', () => finish({ status, body: truncateUtf8(Buffer.concat(chunks).toString('utf8'), req.keepBodyBytes), error: null }));
      res.on('aborted', () => finish({ status, body: truncateUtf8(Buffer.concat(chunks).toString('utf8'), req.keepBodyBytes), error: null }));
    });
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error('timeout'));
    }, req.timeoutMs);
    const onAbort = () => request.destroy(Object.assign(new Error('aborted'), { code: 'ABORT_ERR' }));
    if (req.signal) {
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener('abort', onAbort, { once: true });
    }
    request.on('error', (err) => finish({ status: null, body: '', error: describeError(err, timedOut, req.timeoutMs) }));
    request.end(req.body);
  });
}
