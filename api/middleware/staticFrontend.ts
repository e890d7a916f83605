import path from 'node:path';
import type { Middleware } from 'koa';
import send from 'koa-send';
import { isApiPath } from './auth';

const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

function isNotFound(err: unknown): boolean {
  return (err as { status?: number })?.status === 404;
}

/**
 * Serves the built front end for GET/HEAD outside /api: hashed files under /assets/ with a year-long
 * immutable cache, other files as they are, and index.html (never cached) for every other path so the
 * app's own routing handles reloads and deep links. Paths that look like files and do not exist stay 404.
 * Source maps (*.map) are 404 unless `serveSourceMaps` (off in production, where builds emit none either).
 */
export function staticFrontend(distDir: string, options: { serveSourceMaps: boolean } = { serveSourceMaps: false }): Middleware {
  const root = path.resolve(distDir);
  const noCache = (res: { setHeader: (name: string, value: string) => void }) => res.setHeader('Cache-Control', 'no-cache');
  return async function staticFrontendMiddleware(ctx, next) {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    if (!options.serveSourceMaps && ctx.path.toLowerCase().endsWith('.map')) return next();
    if (ctx.path.startsWith('/assets/')) {
      await send(ctx, ctx.path, { root, maxage: ONE_YEAR_MS, immutable: true });
      return;
    }
    if (ctx.path !== '/') {
      try {
        if (await send(ctx, ctx.path, { root, setHeaders: noCache })) return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (path.extname(ctx.path)) throw err;
      }
    }
    try {
      await send(ctx, 'index.html', { root, setHeaders: noCache });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await next(); // no built front end: a plain 404
    }
  };
}
