import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps';
import { attachmentDisposition, contentTypeOf, createStorage, downloadsAsAttachment, isBucket, isValidObjectPath, UrlSigner, type ByteRange, type Storage } from '../../storage';
import { parseQuery, RequestError } from '../validation';
import { z } from 'zod';
import { describeRoute, errorBody } from '../openapi/describe';
import { isUnapprovedOriginal } from '../../services/content/unapprovedOriginals';
import type { Knex } from 'knex';

/** The link's signature (storage/signedUrls.ts); anything else in the query is ignored. */
const fileQuery = z.object({
  expires: z.string().optional(),
  sig: z.string().optional(),
  download: z.string().optional().meta({ description: 'Save the file under this name (Content-Disposition: attachment); links from /api/downloads carry it' }),
});
const downloadQuery = z.object({
  // links the API hands out are printable ASCII (percent-encoded); the bound keeps the whole request line, encoded,
  // well inside Node's 16 KB header limit (a longer one would be refused with a bare 431 before any route)
  url: z
    .string()
    .min(1)
    .max(3072)
    .regex(/^[!-~]+$/, 'Invalid file link')
    .meta({ description: 'A file link the API handed out (signed_url of an item), still valid' }),
  name: z.string().min(1).max(255).meta({ description: 'The name to save the file under' }),
});
const rangeHeader = z.object({ range: z.string().optional().meta({ description: 'One `bytes=a-b` range; others are served whole' }) });
/** What a stored file can be served as (storage/contentTypes.ts), for the document. */
const FILE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/webm', 'video/quicktime', 'audio/mpeg', 'audio/wav', 'audio/mp4', 'audio/aac', 'audio/flac', 'application/zip', 'application/octet-stream'];

/** One `bytes=a-b` range within `size`; null for none, 'unsatisfiable' for a range past the end. Multi-ranges are served whole. */
function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  const start = m[1] === '' ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * The answer to a valid link whose file is the original of an item that is not approved (pending, rejected or
 * expired): the same 403 as a forged link, so the answer tells nothing about the file or the item's state.
 */
function invalidLink(): RequestError {
  return new RequestError(403, 'Invalid file link', 'LINK_INVALID');
}

/**
 * Streams a stored file to whoever holds an unexpired signed link to it (storage/signedUrls.ts). With object storage
 * (STORAGE_BACKEND=s3) the app hands out presigned storage URLs instead; a link to this route made earlier (or by
 * an older replica) is still honoured with a redirect to one, for the rest of its lifetime: the bytes never pass here.
 * The original of an item that is not approved is refused whatever link names it (pay on approval).
 */
async function serveFile(storage: Storage, signer: UrlSigner, knex: Knex, ctx: Context): Promise<void> {
  const { bucket, path } = ctx.params as { bucket: string; path: string };
  // a repeated or otherwise malformed signature is no valid link: the same 403, never a 400 that tells more
  const query = fileQuery.safeParse(ctx.query);
  const { expires, sig, download } = query.success ? query.data : { expires: undefined, sig: undefined, download: undefined };
  const check = signer.verify(bucket, path, expires, sig);
  if (check === 'expired') throw new RequestError(403, 'This file link has expired', 'LINK_EXPIRED');
  if (check !== 'valid' || !isBucket(bucket) || !isValidObjectPath(path)) throw invalidLink();
  // only a validly signed link costs a lookup: a guessed one learns nothing from the database
  if (await isUnapprovedOriginal(knex, { bucket, path })) throw invalidLink();
  const remaining = Math.max(1, Number(expires) - Math.floor(Date.now() / 1000));
  // HEAD is answered here from the object's metadata (a presigned GET link is not valid for HEAD)
  if (storage.backend === 's3' && ctx.method !== 'HEAD') {
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(storage.urls.sign(bucket, path, remaining));
    return;
  }
  const stat = await storage.objects.stat(bucket, path);
  if (!stat) throw new RequestError(404, 'File not found', 'FILE_NOT_FOUND');

  const range = parseRange(ctx.get('range') || undefined, stat.size);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', `private, max-age=${Math.max(0, Number(expires) - Math.floor(Date.now() / 1000))}, immutable`);
  ctx.set('Last-Modified', stat.modifiedAt.toUTCString());
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
  ctx.type = contentTypeOf(path);
  // a download (a link from /api/downloads) is saved under the name it asks for; a zip (the data export) under its own
  if (download && download.length <= 255) ctx.set('Content-Disposition', attachmentDisposition(download));
  else if (downloadsAsAttachment(path)) ctx.attachment(path.slice(path.lastIndexOf('/') + 1), { type: 'attachment' });
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

export function filesRouter(deps: Pick<AppDeps, 'config' | 'knex'>): Router {
  const storage = createStorage(deps.config);
  const signer = new UrlSigner({ secret: deps.config.signingSecret, ttlSeconds: deps.config.signedUrlTtlSeconds });
  const router = new Router();
  describeRoute(router, {
    method: 'get',
    path: '/api/files/:bucket/*path',
    tag: 'Files',
    summary: 'A stored file, for whoever holds an unexpired signed link to it',
    description:
      'The links come signed in the answers that list files; `path` may span several segments. Supports one byte range. ' +
      'The original of an item that is not approved (pending, rejected or expired), and the thumbnail made from it, are refused with 403 LINK_INVALID, even through a link minted earlier: ' +
      'until approval only its watermarked preview is served.',
    access: 'signature',
    query: fileQuery,
    headers: rangeHeader,
    responses: {
      200: { description: 'The file', contentType: FILE_TYPES, schema: z.string().meta({ format: 'binary' }) },
      206: { description: 'The requested byte range', contentType: FILE_TYPES, schema: z.string().meta({ format: 'binary' }) },
      302: { description: 'With object storage (STORAGE_BACKEND=s3): to a presigned storage URL for the rest of the link\'s lifetime' },
      403: {
        description: 'Invalid file link (LINK_INVALID): not a link the API handed out, or the original of an item not approved; or This file link has expired (LINK_EXPIRED)',
        schema: errorBody,
      },
      404: { description: 'File not found', schema: errorBody },
      416: { description: 'Range not satisfiable', schema: errorBody },
    },
    omit: [400],
  });
  router.get('/api/files/:bucket/*path', (ctx) => serveFile(storage, signer, deps.knex, ctx));

  describeRoute(router, {
    method: 'get',
    path: '/api/downloads',
    tag: 'Files',
    summary: 'Download a file under a given name',
    description:
      'Redirects to a link to the same file that the browser saves as `name` (Content-Disposition: attachment), valid for the rest of the given link\'s lifetime: ' +
      'the API\'s file route on local storage, a presigned object storage URL with `response-content-disposition` on S3. The browser navigates there (no fetch, so no CORS rule is needed). ' +
      'The original of an item that is not approved (pending, rejected or expired) is refused like an invalid link: no download link is made for it.',
    access: 'signature',
    query: downloadQuery,
    responses: {
      302: { description: 'To the download link' },
      403: { description: 'Invalid file link (LINK_INVALID): not a link the API handed out, expired, or the original of an item not approved', schema: errorBody },
    },
  });
  router.get('/api/downloads', async (ctx) => {
    const { url, name } = parseQuery(ctx, downloadQuery);
    const link = storage.urls.downloadLink(url, name);
    if (!link) throw invalidLink();
    // a valid link names its file (on S3 the redirect below goes straight to the object storage, past the files route)
    const file = storage.urls.parse(url);
    if (!file || (await isUnapprovedOriginal(deps.knex, file))) throw invalidLink();
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(link);
  });
  return router;
}
