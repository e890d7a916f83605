import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface TestServer {
  baseUrl: string;
  close: () => Promise<void>;
}

/** Serves a Koa app on 127.0.0.1 for the duration of a test file: on `port`, or an ephemeral one by default. */
export async function serve(app: Koa, port = 0): Promise<TestServer> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
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
