import type { Middleware } from 'koa';

/**
 * One span per request, named by the matched route (`POST /api/ai-image-simple`, `GET /api/projects/:id`), with the
 * request's work (StartWorkflow, queries, storage, PostgreSQL) under it. @opentelemetry/instrumentation-koa stops at
 * Koa 2, so this takes its place; it runs under the HTTP server span of the http instrumentation when that is on,
 * else continues the caller's `traceparent`. createApp installs it only while tracing is on.
 */
export function requestTracing(): Middleware {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const tracer = otel.trace.getTracer('render-studio-api');
  return async function requestTracing(ctx, next) {
    const active = otel.context.active();
    const parent = otel.trace.getSpan(active) ? active : otel.propagation.extract(active, ctx.headers);
    const span = tracer.startSpan(`${ctx.method} ${ctx.path}`, { kind: otel.SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } }, parent);
    try {
      await otel.context.with(otel.trace.setSpan(parent, span), next);
    } catch (err) {
      span.recordException(err as Error);
      throw err;
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (matched !== undefined) {
        span.updateName(`${ctx.method} ${String(matched)}`);
        span.setAttribute('http.route', String(matched));
      }
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: otel.SpanStatusCode.ERROR });
      if (typeof ctx.state.requestId === 'string') span.setAttribute('request.id', ctx.state.requestId);
      span.end();
    }
  };
}
