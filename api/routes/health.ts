import Router from '@koa/router';
import type { AppDeps } from '../deps';

/** Liveness and database reachability, open without a session (load balancers, npm start's wait). */
export function healthRouter(deps: Pick<AppDeps, 'knex'>): Router {
  const router = new Router();
  router.get('/api/health', async (ctx) => {
    try {
      await deps.knex.raw('select 1');
      ctx.body = { success: true, status: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { success: false, status: 'unavailable', error: 'Database unavailable' };
    }
  });
  return router;
}
