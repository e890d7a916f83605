import type { Middleware } from 'koa';
import { httpRequestDuration, httpRequestsTotal } from '../../services/platform/metrics';

/** The route label of a request no router matched (static files, unknown paths): raw paths would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts every request and times it, labelled by the matched route pattern (`/api/projects/:id`, set by
 * @koa/router), never the raw path. First in the chain, so errors are already mapped to their status here.
 */
export const httpMetrics: Middleware = async function httpMetrics(ctx, next) {
  const stop = httpRequestDuration.startTimer();
  try {
    await next();
  } finally {
    const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    const labels = { method: ctx.method, route: matched === undefined ? UNMATCHED_ROUTE : String(matched), status: String(ctx.status) };
    stop(labels);
    httpRequestsTotal.inc(labels);
  }
};
