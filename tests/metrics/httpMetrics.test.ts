import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { isLoopbackAddress, metricsAccessAllowed } from '../../api/routes/metrics';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { seriesLines, seriesValue } from './metricValues';
import { sseClients, trackSseClient } from '../../services/platform/metrics';

const TOKEN = `metrics-${randomUUID()}`;

let knex: Knex;
let server: TestServer;

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: { ...loadConfig(), metricsToken: TOKEN }, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

async function scrape(headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${server.baseUrl}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('GET /metrics', () => {
  it('answers Prometheus text with request counts and latency histograms labelled by route pattern, never by raw path', async () => {
    const user = await createTestUser(server.baseUrl);
    const missingId = randomUUID();
    expect((await request(server.baseUrl, `/api/projects/${missingId}`, { token: user.token })).status).toBe(404);
    expect((await request(server.baseUrl, '/health/live')).status).toBe(200);
    const unknownPath = `/no-such-page-${randomUUID()}`;
    await fetch(`${server.baseUrl}${unknownPath}`);

    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const lines = seriesLines(text);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/projects\/:id",status="404"\} \d+$/),
        expect.stringMatching(/^http_request_duration_seconds_count\{method="GET",route="\/api\/projects\/:id",status="404"\} [1-9]\d*$/),
        expect.stringMatching(/^http_requests_total\{method="GET",route="\/api\/projects\/:id",status="404"\} [1-9]\d*$/),
        expect.stringMatching(/^http_requests_total\{method="GET",route="\/health\/live",status="200"\} [1-9]\d*$/),
        expect.stringMatching(/^http_requests_total\{method="POST",route="\/api\/auth\/signup",status="\d+"\} [1-9]\d*$/),
        expect.stringMatching(/^http_requests_total\{method="GET",route="unmatched",status="\d+"\} [1-9]\d*$/),
      ]),
    );
    expect(text).not.toContain(missingId);
    expect(text).not.toContain(unknownPath);
  });

  it('includes process metrics, the event-loop lag and the app gauges', async () => {
    const { text } = await scrape();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'sse_clients']) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('refuses a proxied request (X-Forwarded-For) with 404 unless it carries the token', async () => {
    const proxied = { 'x-forwarded-for': '203.0.113.7' };
    const refused = await scrape(proxied);
    expect(refused.status).toBe(404);
    expect(refused.text).not.toContain('http_requests_total');
    expect((await scrape({ ...proxied, authorization: 'Bearer wrong-token' })).status).toBe(404);
    expect((await scrape({ ...proxied, authorization: TOKEN })).status).toBe(404);
    const allowed = await scrape({ ...proxied, authorization: `Bearer ${TOKEN}` });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('http_requests_total');
  });

  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((net) => net && net.family === 'IPv4' && !net.internal)?.address;

  (external ? it : it.skip)('refuses a connection from a non-loopback address without the token and serves it with the token', async () => {
    const config = { ...loadConfig(), metricsToken: TOKEN };
    const outside = http.createServer(createApp({ config, knex, logger }).callback());
    await new Promise<void>((resolve) => outside.listen(0, external, resolve));
    const base = `http://${external}:${(outside.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      const withToken = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(withToken.status).toBe(200);
      expect(await withToken.text()).toContain('http_request_duration_seconds');
    } finally {
      outside.closeAllConnections();
      await new Promise<void>((resolve) => outside.close(() => resolve()));
    }
  });
});

describe('trackSseClient', () => {
  it('counts a stream in sse_clients until it closes, once however often the close is reported', async () => {
    const before = await seriesValue(sseClients);
    const first = trackSseClient();
    const second = trackSseClient();
    expect(await seriesValue(sseClients)).toBe(before + 2);
    first();
    first();
    expect(await seriesValue(sseClients)).toBe(before + 1);
    const { text } = await scrape();
    expect(seriesLines(text)).toContain(`sse_clients ${before + 1}`);
    second();
    expect(await seriesValue(sseClients)).toBe(before);
  });
});

describe('metricsAccessAllowed', () => {
  const local = (remoteAddress: string, headers: Record<string, string> = {}) => ({ remoteAddress, headers });

  it('lets in a direct connection from this host', () => {
    for (const address of ['127.0.0.1', '127.8.0.1', '::1', '::ffff:127.0.0.1']) {
      expect({ address, allowed: metricsAccessAllowed(local(address), '') }).toEqual({ address, allowed: true });
    }
  });

  it('refuses other addresses, and loopback connections that a proxy forwarded', () => {
    for (const address of ['203.0.113.9', '10.0.0.4', '::ffff:10.0.0.4', 'fe80::1', '']) {
      expect({ address, allowed: metricsAccessAllowed(local(address), TOKEN) }).toEqual({ address, allowed: false });
    }
    expect(metricsAccessAllowed(local('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' }), TOKEN)).toBe(false);
    expect(metricsAccessAllowed(local('127.0.0.1', { forwarded: 'for=127.0.0.1' }), TOKEN)).toBe(false);
    expect(metricsAccessAllowed(local('127.0.0.1', { 'x-real-ip': '127.0.0.1' }), TOKEN)).toBe(false);
  });

  it('lets in any address with the configured bearer token, and nobody by token when none is configured', () => {
    expect(metricsAccessAllowed(local('203.0.113.9', { authorization: `Bearer ${TOKEN}` }), TOKEN)).toBe(true);
    expect(metricsAccessAllowed(local('203.0.113.9', { authorization: `bearer ${TOKEN}` }), TOKEN)).toBe(true);
    expect(metricsAccessAllowed(local('203.0.113.9', { authorization: `Bearer ${TOKEN}x` }), TOKEN)).toBe(false);
    expect(metricsAccessAllowed(local('203.0.113.9', { authorization: 'Bearer ' }), '')).toBe(false);
    expect(metricsAccessAllowed(local('203.0.113.9', { authorization: 'Bearer anything' }), '')).toBe(false);
  });

  it('knows loopback addresses', () => {
    expect(isLoopbackAddress('127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('::1')).toBe(true);
    expect(isLoopbackAddress('128.0.0.1')).toBe(false);
    expect(isLoopbackAddress('::ffff:192.168.1.1')).toBe(false);
    expect(isLoopbackAddress(undefined)).toBe(false);
  });
});
