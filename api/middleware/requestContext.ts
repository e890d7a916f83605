import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../config/logger';

/**
 * The path as the log line says it: a review link's page (/r/<token>) without its token, which is a credential
 * (issue 43). API routes carry no token in their paths (the guest's session names the link by its id).
 */
export function loggedPath(path: string): string {
  return /^\/r\/[^/]*/i.test(path) ? path.replace(/^\/r\/[^/]*/i, '/r/:token') : path;
}

/** Gives each request an id (echoed as X-Request-Id) and a child logger; logs one line per request. */
export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[\w-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info({ method: ctx.method, path: loggedPath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
