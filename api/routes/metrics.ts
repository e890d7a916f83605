import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { AppDeps } from '../deps';
import { collectProcessMetrics, metricsRegistry } from '../../services/platform/metrics';
import { z } from 'zod';
import { describeRoute } from '../openapi/describe';

export const METRICS_PATH = '/metrics';

/** Headers a reverse proxy adds: a request carrying one came from elsewhere, whatever its socket says. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

export interface MetricsRequest {
  /** The TCP peer (`req.socket.remoteAddress`), never the X-Forwarded-For client. */
  remoteAddress: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Who may read /metrics: a request with `Authorization: Bearer <METRICS_TOKEN>` (when a token is configured), or a
 * direct connection from this host (loopback peer and no forwarding header: a reverse proxy on the same host
 * connects from loopback too, and its requests must not count as local).
 */
export function metricsAccessAllowed(request: MetricsRequest, token: string): boolean {
  const authorization = request.headers.authorization;
  if (token && typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match && sameSecret(match[1], token)) return true;
  }
  const forwarded = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
  return !forwarded && isLoopbackAddress(request.remoteAddress);
}

/**
 * `GET /metrics`: the process's Prometheus metrics (docs/operations.md "Metrics"). Anyone else gets a plain 404, as if the
 * route did not exist.
 */
export function metricsRouter(deps: Pick<AppDeps, 'config'>): Router {
  collectProcessMetrics();
  const router = new Router();
  describeRoute(router, {
    method: 'get',
    path: METRICS_PATH,
    tag: 'Health',
    summary: "The process's Prometheus metrics",
    description: 'Open to direct connections from this host, or with `Authorization: Bearer <METRICS_TOKEN>`; anyone else gets 404.',
    access: 'signature',
    noDatabase: true,
    responses: {
      200: { description: 'Prometheus text exposition format', contentType: 'text/plain', schema: z.string() },
      404: { description: 'Not from this host and no valid token', contentType: 'text/plain', schema: z.string() },
    },
  });
  router.get(METRICS_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (!metricsAccessAllowed({ remoteAddress: ctx.req.socket.remoteAddress, headers: ctx.headers }, deps.config.metricsToken)) {
      ctx.status = 404;
      ctx.body = 'Not Found';
      return;
    }
    ctx.type = metricsRegistry.contentType;
    ctx.body = await metricsRegistry.metrics();
  });
  return router;
}
