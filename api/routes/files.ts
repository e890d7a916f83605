import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps';
import { createStorage, isBucket, isValidObjectPath, type ByteRange, type Storage } from '../../storage';
import { RequestError } from '../validation';

const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  zip: 'application/zip',
};

function contentType(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}

/** One `bytes=a-b` range within `size`; null for none, 'unsatisfiable' for a range past the end. Multi-ranges are served whole. */
function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  const start = m[1] === '' ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** Streams a stored file to whoever holds an unexpired signed link to it (storage/signedUrls.ts). */
async function serveFile(storage: Storage, ctx: Context): Promise<void> {
  const { bucket, path } = ctx.params as { bucket: string; path: string };
  const expires = typeof ctx.query.expires === 'string' ? ctx.query.expires : undefined;
  const sig = typeof ctx.query.sig === 'string' ? ctx.query.sig : undefined;
  const check = storage.urls.verify(bucket, path, expires, sig);
  if (check === 'expired') throw new RequestError(403, 'This file link has expired', 'LINK_EXPIRED');
  if (check !== 'valid' || !isBucket(bucket) || !isValidObjectPath(path)) throw new RequestError(403, 'Invalid file link', 'LINK_INVALID');
  const stat = await storage.objects.stat(bucket, path);
  if (!stat) throw new RequestError(404, 'File not found', 'FILE_NOT_FOUND');

  const range = parseRange(ctx.get('range') || undefined, stat.size);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', `private, max-age=${Math.max(0, Number(expires) - Math.floor(Date.now() / 1000))}, immutable`);
  ctx.set('Last-Modified', stat.modifiedAt.toUTCString());
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
  ctx.type = contentType(path);
  // a zip (the data export) downloads under its own name instead of opening
  if (ctx.type === 'application/zip') ctx.attachment(path.slice(path.lastIndexOf('/') + 1), { type: 'attachment' });
  if (range === 'unsatisfiable') {
    ctx.set('Content-Range', `bytes */${stat.size}`);
    throw new RequestError(416, 'Range not satisfiable');
  }
  ctx.status = range ? 206 : 200;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`);
  const length = range ? range.end - range.start + 1 : stat.size;
  // HEAD answers the headers only: no file is opened
  if (ctx.method !== 'HEAD') ctx.body = await storage.objects.read(bucket, path, range ?? undefined);
  ctx.length = length;
}

export function filesRouter(deps: AppDeps): Router {
  const storage = createStorage(deps.config);
  const router = new Router();
  router.get('/api/files/:bucket/*path', (ctx) => serveFile(storage, ctx));
  return router;
}
