import fs from 'node:fs';
import path from 'node:path';
import type { Context, Middleware } from 'koa';
import send from 'koa-send';
import { parseByteRange } from '../byteRange';
import { isApiPath } from './auth';

const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;
/** The build writes `.br` and `.gz` beside these (frontend/vite.config.ts, precompress); koa-send picks one by Accept-Encoding. */
const PRECOMPRESSED = /\.(js|mjs|css|html|svg|json|txt|webmanifest)(\.br|\.gz)?$/i;
/** Media the browser reads in ranges (a looping or seeking <video>). */
const MEDIA_TYPES: Record<string, string> = { '.mp4': 'video/mp4', '.webm': 'video/webm' };

function isNotFound(err: unknown): boolean {
  return (err as { status?: number })?.status === 404;
}

type HeaderTarget = { setHeader: (name: string, value: string) => void };

/** The answer may differ by Accept-Encoding for files that have precompressed copies: caches must know. */
function varyOnEncoding(res: HeaderTarget, file: string): void {
  if (PRECOMPRESSED.test(file)) res.setHeader('Vary', 'Accept-Encoding');
}

/**
 * A hashed video under /assets/ with byte ranges: Chromium reads a looping, seekable <video> in ranges
 * (koa-send answers whole files only). Returns false when the file does not exist.
 */
async function sendMediaRange(ctx: Context, root: string, mime: string): Promise<boolean> {
  let file: string;
  let stat: fs.Stats;
  try {
    file = path.resolve(root, `.${decodeURIComponent(ctx.path)}`);
    if (!file.startsWith(root + path.sep)) return false;
    stat = await fs.promises.stat(file);
  } catch {
    return false;
  }
  if (!stat.isFile()) return false;
  const range = parseByteRange(ctx.get('range') || undefined, stat.size);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', `public, max-age=${ONE_YEAR_MS / 1000}, immutable`);
  ctx.set('Last-Modified', stat.mtime.toUTCString());
  ctx.type = mime;
  if (range === 'unsatisfiable') {
    ctx.set('Content-Range', `bytes */${stat.size}`);
    ctx.status = 416;
    ctx.body = 'Range not satisfiable';
    return true;
  }
  ctx.status = range ? 206 : 200;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`);
  if (ctx.method !== 'HEAD') ctx.body = fs.createReadStream(file, range ?? {});
  ctx.length = range ? range.end - range.start + 1 : stat.size;
  return true;
}

/**
 * Serves the built front end for GET/HEAD outside /api: hashed files under /assets/ with a year-long
 * immutable cache, other files as they are, and index.html (never cached) for every other path so the
 * app's own routing handles reloads and deep links. Paths that look like files and do not exist stay 404.
 * Text files go out brotli- or gzip-compressed from the build's precompressed copies when the browser
 * accepts it; videos answer byte ranges. Source maps (*.map) are 404 unless `serveSourceMaps` (off in
 * production, where builds emit none either).
 */
export function staticFrontend(distDir: string, options: { serveSourceMaps: boolean } = { serveSourceMaps: false }): Middleware {
  const root = path.resolve(distDir);
  const noCache = (res: HeaderTarget, file: string) => {
    res.setHeader('Cache-Control', 'no-cache');
    varyOnEncoding(res, file);
  };
  return async function staticFrontendMiddleware(ctx, next) {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    if (!options.serveSourceMaps && ctx.path.toLowerCase().endsWith('.map')) return next();
    if (ctx.path.startsWith('/assets/')) {
      const mime = MEDIA_TYPES[path.extname(ctx.path).toLowerCase()];
      if (mime && (await sendMediaRange(ctx, root, mime))) return;
      await send(ctx, ctx.path, { root, maxage: ONE_YEAR_MS, immutable: true, brotli: true, gzip: true, setHeaders: varyOnEncoding });
      return;
    }
    if (ctx.path !== '/') {
      try {
        if (await send(ctx, ctx.path, { root, setHeaders: noCache, brotli: true, gzip: true })) return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (path.extname(ctx.path)) throw err;
      }
    }
    try {
      await send(ctx, 'index.html', { root, setHeaders: noCache, brotli: true, gzip: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await next(); // no built front end: a plain 404
    }
  };
}
