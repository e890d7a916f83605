import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { requireAuth } from '../middleware/auth';
import { workspaceGrant, type RequestGrant } from '../workspace';
import { parse, parseQuery } from '../validation';
import { JobService } from '../../services/generation/jobs';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { VideoGenerationService, defaultClipQueues } from '../../services/generation/videoGeneration';
import { JOB_KINDS, type ActivityJob } from '../../domain/jobs';
import { answers, describeRoute, errorBody } from '../openapi/describe';

const listQuery = z.object({ all: z.enum(['0', '1', 'true', 'false'], { message: 'all must be 1 or 0' }).optional() });

const jobParams = z.object({ kind: z.string(), id: z.string() });
const jobStarter = z
  .object({
    userId: z.string(),
    name: z.string().meta({ description: "The starter's name (their profile's)" }),
    email: z.string(),
  })
  .nullable()
  .meta({ description: 'The member who started the job; null when nobody is recorded (a system run) or the user was deleted' });
const activityJob = answers<ActivityJob>()(
  z.object({
    kind: z.enum(JOB_KINDS),
    id: z.string(),
    workflowId: z.string(),
    userId: z.string().meta({ description: 'The account the job belongs to: its workspace' }),
    userEmail: z.string().optional().meta({ description: "Only in a site admin's list of every account's jobs (all=1): the starter's e-mail, else the account owner's" }),
    startedBy: jobStarter,
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
    traceId: z.string().optional().meta({ description: 'Site admins only, for a job started with tracing on: its OpenTelemetry trace id' }),
    traceUrl: z.string().optional().meta({ description: 'With traceId, when TRACE_VIEWER_URL is set: the trace in the trace viewer' }),
  }),
);
const jobRefusals = {
  403: { description: "The caller's role in the workspace does not allow this (WORKSPACE_FORBIDDEN)", schema: errorBody },
  404: { description: 'Job not found in the workspace', schema: errorBody },
  409: { description: 'The job cannot be cancelled or retried in its state', schema: errorBody },
};

/** The service's view of who asks: the user, their site role, and the workspace the grant is for. */
function jobActor(grant: RequestGrant) {
  return { id: grant.userId, role: grant.user.role, workspaceId: grant.workspaceId };
}

/**
 * /api/jobs: the Activity view's list (the workspace's jobs with who started each; every account's for a site admin
 * with ?all=1), cancel and retry. The workspace is the request's (`workspaceId` parameter or X-Workspace-Id header,
 * else the personal one).
 */
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
    summary: "The workspace's jobs with who started each (every account's for a site admin with all=1), newest first",
    access: 'session',
    workspace: 'read',
    query: listQuery,
    responses: { 200: z.object({ success: z.literal(true), jobs: z.array(activityJob), all: z.boolean() }) },
  });
  router.get('/api/jobs', async (ctx) => {
    const { all } = parseQuery(ctx, listQuery);
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await service.list(jobActor(grant), { all: all === '1' || all === 'true' })) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/jobs/:kind/:id/cancel',
    tag: 'Jobs',
    summary: 'Cancel a running job of the workspace',
    access: 'session',
    workspace: 'generate',
    params: jobParams,
    responses: { 200: z.object({ success: z.literal(true), job: activityJob }), ...jobRefusals },
  });
  router.post('/api/jobs/:kind/:id/cancel', async (ctx) => {
    const { kind, id } = parse(jobParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'generate');
    ctx.body = { success: true, job: await service.cancel(jobActor(grant), kind, id) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/jobs/:kind/:id/retry',
    tag: 'Jobs',
    summary: 'Retry a failed or cancelled job of the workspace with the same inputs',
    access: 'session',
    workspace: 'generate',
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
    const grant = await workspaceGrant(ctx, deps, 'generate');
    ctx.body = { success: true, job: await service.retry(jobActor(grant), kind, id) };
  });

  return router;
}
