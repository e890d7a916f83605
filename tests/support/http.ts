import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface TestServer {
  baseUrl: string;
  close: () => Promise<void>;
}

/** Apps this file serves that are not closed yet. */
let serving = 0;

/**
 * Serves a Koa app on 127.0.0.1 for the duration of a test file: on `port`, or an ephemeral one by default. Closing
 * the last one the file serves also closes the app's Temporal client (services/platform/temporalClient.ts, connected
 * on the app's first workflow call): its channel would otherwise keep the jest worker alive past the run's end.
 */
export async function serve(app: Koa, port = 0): Promise<TestServer> {
  const server = http.createServer(app.callback());
  // Node closes an idle kept-alive socket after 5 s and undici (fetch) stops reusing one after 4 s: on a busy machine
  // that second's margin slipped, fetch sent on a socket the server was closing and got ECONNRESET or "other side
  // closed". The test client now always lets go of an idle socket first.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  serving += 1;
  const { port: bound } = server.address() as AddressInfo;
  let closed: Promise<void> | null = null;
  return {
    baseUrl: `http://127.0.0.1:${bound}`,
    close: () =>
      (closed ??= (async () => {
        try {
          await new Promise<void>((resolve, reject) => {
            server.closeAllConnections();
            server.close((err) => (err ? reject(err) : resolve()));
          });
        } finally {
          serving -= 1;
          if (serving === 0) {
            // already loaded with the app (api/middleware/errors.ts imports it)
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            const { closeTemporalClient } = require('../../services/platform/temporalClient') as typeof import('../../services/platform/temporalClient');
            await closeTemporalClient();
          }
        }
      })()),
  };
}

/** A 127.0.0.1 port that was free a moment ago and that nothing listens on: a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface JsonResponse<T = Record<string, any>> {
  status: number;
  body: T;
  headers: Headers;
}

/** fetch + JSON with an optional bearer token; never throws on 4xx/5xx so tests assert on status. */
export async function request<T = Record<string, any>>(
  baseUrl: string,
  path: string,
  init: { method?: string; token?: string; json?: unknown; body?: RequestInit["body"]; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`${baseUrl}${path}`, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // non-JSON answers (files, HTML) stay as text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}
