import type { Context, Middleware } from 'koa';
import { RequestError } from '../validation';

/**
 * Reads the request body as the exact bytes sent (a webhook's signature covers them) into `ctx.state.rawBody`.
 * The app's JSON parser skips the paths that use this (see RAW_BODY_PATHS in api/app.ts).
 */
export function rawBody({ limitBytes }: { limitBytes: number }): Middleware {
  return async function rawBodyMiddleware(ctx, next) {
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limitBytes) throw new RequestError(413, 'Request body too large');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) throw new RequestError(413, 'Request body too large');
      chunks.push(chunk);
    }
    ctx.state.rawBody = Buffer.concat(chunks);
    await next();
  };
}

export function rawBodyOf(ctx: Context): Buffer {
  const body = (ctx.state as { rawBody?: unknown }).rawBody;
  if (!Buffer.isBuffer(body)) throw new RequestError(400, 'The request body could not be read');
  return body;
}
