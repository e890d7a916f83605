import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAuth } from '../middleware/auth';
import { parseQuery } from '../validation';
import { JobService } from '../../services/jobs';
import { getTemporalClient } from '../../services/temporalClient';
import { VideoGenerationService, defaultClipQueues } from '../../services/videoGeneration';

const listQuery = z.object({ all: z.enum(['0', '1', 'true', 'false'], { message: 'all must be 1 or 0' }).optional() });

/** /api/jobs: the Activity view's list (own jobs; every user's for an admin with ?all=1), cancel and retry. */
export function jobsRouter(deps: AppDeps): Router {
  const client = () => getTemporalClient(deps.config);
  const service = new JobService({
    knex: deps.knex,
    client,
    clips: new VideoGenerationService({ knex: deps.knex, logger: deps.logger, client, queues: defaultClipQueues(deps.taskQueues) }),
    config: deps.config,
    logger: deps.logger,
  });
  const router = new Router();
  router.use(requireAuth(deps));

  router.get('/api/jobs', async (ctx) => {
    const { all } = parseQuery(ctx, listQuery);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await service.list(currentUser(ctx), { all: all === '1' || all === 'true' })) };
  });

  router.post('/api/jobs/:kind/:id/cancel', async (ctx) => {
    ctx.body = { success: true, job: await service.cancel(currentUser(ctx), ctx.params.kind, ctx.params.id) };
  });

  router.post('/api/jobs/:kind/:id/retry', async (ctx) => {
    ctx.body = { success: true, job: await service.retry(currentUser(ctx), ctx.params.kind, ctx.params.id) };
  });

  return router;
}
