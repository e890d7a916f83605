import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { AppDeps } from './deps';
import { errorHandler } from './middleware/errors';
import { requestContext } from './middleware/requestContext';
import { buildRouters } from './routes';

/** Builds the Koa app without listening, so tests drive it through `app.callback()`. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: process.env.TRUST_PROXY === 'true' });
  app.on('error', (err, ctx) => {
    const log = ctx?.state?.log ?? deps.logger;
    log.error({ err }, 'unhandled error');
  });
  app.use(requestContext(deps.logger));
  app.use(errorHandler);
  // JSON bodies only here; multipart routes parse their own streams
  app.use(koaBody({ json: true, urlencoded: false, multipart: false, text: false, jsonLimit: '1mb', jsonStrict: true }));
  for (const router of buildRouters(deps)) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
