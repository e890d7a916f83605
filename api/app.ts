import Koa from 'koa';
import { tracingActive } from '../config/tracing';
import { requestTracing } from './middleware/tracing';
import { koaBody } from 'koa-body';
import type { AppDeps } from './deps';
import { apiSessionGuard, isApiPath } from './middleware/auth';
import { csrfGuard } from './middleware/csrf';
import { errorHandler, logAppError } from './middleware/errors';
import { httpMetrics } from './middleware/httpMetrics';
import { requestContext } from './middleware/requestContext';
import { securityHeaders } from './middleware/securityHeaders';
import { staticFrontend } from './middleware/staticFrontend';
import { buildRouters, routerDispatch } from './routes';
import { FAL_CALLBACK_PATH } from './routes/providerCallbacks';
import { STRIPE_WEBHOOK_PATH } from './routes/stripe';

/** Routes that read their body as raw bytes (a signature covers them), so the JSON parser leaves them alone. */
const RAW_BODY_PATHS: ReadonlySet<string> = new Set([STRIPE_WEBHOOK_PATH, FAL_CALLBACK_PATH]);

/** Builds the Koa app without listening, so tests drive it through `app.callback()`. */
export function createApp(deps: AppDeps): Koa {
  // TRUST_PROXY on: ctx.ip comes from X-Forwarded-For, counting only the entries the trusted proxies appended
  // (maxIpsCount), so a client's own X-Forwarded-For cannot choose its address; off: the socket address.
  const hops = deps.config.trustProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.on('error', logAppError(deps.logger));
  // outermost: times the whole request and sees the status the error middleware chose
  if (tracingActive()) app.use(requestTracing());
  app.use(httpMetrics);
  app.use(requestContext(deps.logger));
  // CSP, frame-ancestors 'none', nosniff, Referrer-Policy, HSTS over https: set before anything can answer
  app.use(securityHeaders(deps.config));
  app.use(errorHandler);
  // before any route: a cookie-authenticated write from another site is refused (middleware/csrf.ts)
  app.use(csrfGuard(deps.config));
  // deny by default: every /api route except the public ones (middleware/auth.ts) needs a session
  app.use(apiSessionGuard(deps));
  // JSON bodies only here; multipart routes parse their own streams
  const parseJson = koaBody({ json: true, urlencoded: false, multipart: false, text: false, jsonLimit: '1mb', jsonStrict: true });
  app.use(async function jsonBody(ctx, next) {
    return RAW_BODY_PATHS.has(ctx.path.toLowerCase()) ? next() : parseJson(ctx, next);
  });
  app.use(async function apiUnmatched(ctx, next) {
    await next();
    // a method no route has (TRACE, CONNECT ...): the routers' allowedMethods says 501, but the server knows the
    // method and this resource does not allow it, which is 405 (RFC 9110), never a server error
    if (ctx.body == null && ctx.status === 501) ctx.status = 405;
    // no route answered: JSON like every other API reply (405 comes from the routers' allowedMethods)
    if (ctx.body == null && (ctx.status === 404 || ctx.status === 405) && isApiPath(ctx.path)) {
      const status = ctx.status;
      ctx.body = { success: false, error: status === 405 ? 'Method not allowed' : 'Not found' };
      ctx.status = status;
    }
  });
  // each request runs only the routers with a route under its first two path segments (routes/index.ts)
  app.use(routerDispatch(buildRouters(deps)));
  app.use(staticFrontend(deps.config.frontendDist, { serveSourceMaps: deps.config.nodeEnv !== 'production' }));
  return app;
}
