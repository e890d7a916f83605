import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAuth } from '../middleware/auth';
import { parse, parseQuery } from '../validation';
import { JobService } from '../../services/generation/jobs';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { VideoGenerationService, defaultClipQueues } from '../../services/generation/videoGeneration';
import { JOB_KINDS, type ActivityJob } from '../../domain/jobs';
import { answers, describeRoute, errorBody } from '../openapi/describe';

const listQuery = z.object({ all: z.enum(['0', '1', 'true', 'false'], { message: 'all must be 1 or 0' }).optional() });

const jobParams = z.object({ kind: z.string(), id: z.string() });
const activityJob = answers<ActivityJob>()(
  z.object({
    kind: z.enum(JOB_KINDS),
    id: z.string(),
    workflowId: z.string(),
    userId: z.string(),
    userEmail: z.string().optional(),
    projectId: z.string().nullable(),
    projectName: z.string().nullable(),
    item: z.string(),
    state: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']),
    progress: z.number(),
    message: z.string(),
    error: z.string().nullable(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    durationMs: z.number().nullable(),
    cost: z.number(),
    canCancel: z.boolean(),
    canRetry: z.boolean(),
    temporalUrl: z.string().optional(),
  }),
);
const jobRefusals = {
  404: { description: 'Job not found', schema: errorBody },
  409: { description: 'The job cannot be cancelled or retried in its state', schema: errorBody },
};

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

  describeRoute(router, {
    method: 'get',
    path: '/api/jobs',
    tag: 'Jobs',
    summary: "The user's jobs (every user's for an admin with all=1), newest first",
    access: 'session',
    query: listQuery,
    responses: { 200: z.object({ success: z.literal(true), jobs: z.array(activityJob), all: z.boolean() }) },
  });
  router.get('/api/jobs', async (ctx) => {
    const { all } = parseQuery(ctx, listQuery);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await service.list(currentUser(ctx), { all: all === '1' || all === 'true' })) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/jobs/:kind/:id/cancel',
    tag: 'Jobs',
    summary: 'Cancel a running job',
    access: 'session',
    params: jobParams,
    responses: { 200: z.object({ success: z.literal(true), job: activityJob }), ...jobRefusals },
  });
  router.post('/api/jobs/:kind/:id/cancel', async (ctx) => {
    const { kind, id } = parse(jobParams, ctx.params);
    ctx.body = { success: true, job: await service.cancel(currentUser(ctx), kind, id) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/jobs/:kind/:id/retry',
    tag: 'Jobs',
    summary: 'Retry a failed or cancelled job with the same inputs',
    access: 'session',
    params: jobParams,
    responses: {
      200: z.object({
        success: z.literal(true),
        job: z.object({ kind: z.enum(JOB_KINDS), id: z.string(), retriedFrom: z.string(), warning: z.string().optional(), code: z.string().optional() }),
      }),
      ...jobRefusals,
      429: { description: 'Generation is paused after repeated rejections (REJECTION_STREAK_COOLDOWN)', schema: errorBody },
    },
  });
  router.post('/api/jobs/:kind/:id/retry', async (ctx) => {
    const { kind, id } = parse(jobParams, ctx.params);
    ctx.body = { success: true, job: await service.retry(currentUser(ctx), kind, id) };
  });

  return router;
}
