import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
import { RequestError, parse, parseBody, singleLine } from '../validation';
import { CLIP_DURATION_SECONDS, PLATFORM_ASPECT, VIDEO_EFFECTS, type Platform } from '../../domain/constants';
import { CLIP_TYPICAL_SECONDS, PORTRAIT_PLATFORMS, parsePlatform, parseVideoEffect, type ClipAspectRatio, type ClipMaker } from '../../domain/clipGeneration';
import { contentServicesFor } from '../../services/content/contentServices';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { jobWorkspaceOf } from '../../services/generation/jobs';
import { VideoGenerationService, defaultClipQueues, type StartClipAnswer, type StartClipRequest } from '../../services/generation/videoGeneration';
import { PLATFORMS } from '../../domain/constants';
import type { ClipJobView } from '../../domain/clipGeneration';
import { answers, describeRoute, errorBody, orNull } from '../openapi/describe';

const optionalText = (max: number) => z.string().max(max, { message: `Must be at most ${max} characters` }).nullable().optional();
const optionalId = (label: string) => singleLine(z.string(), label).max(64).nullable().optional();

const startBody = z.object({
  options: z.object(
    {
      imageUrl: singleLine(z.string(), 'options.imageUrl').max(2048, { message: 'Must be at most 2048 characters' }).nullable().optional(),
      movement: singleLine(z.string({ error: 'options.movement (the video effect) is required' }), 'options.movement'),
      originalPrompt: optionalText(2000),
      duration: z.number({ error: 'options.duration must be a number' }).optional(),
      aspectRatio: singleLine(z.string({ error: 'options.aspectRatio must be a string' }), 'options.aspectRatio').optional(),
      platform: singleLine(z.string({ error: 'options.platform must be a string' }), 'options.platform').optional(),
    },
    { error: 'options is required' },
  ),
  context: z.object(
    {
      projectId: singleLine(z.string({ error: 'context.projectId is required' }), 'context.projectId'),
      userId: z.string().optional(),
      renderId: optionalId('context.renderId'),
      imageId: optionalId('context.imageId'),
      isTemporaryImage: z.boolean({ error: 'context.isTemporaryImage must be true or false' }).optional(),
    },
    { error: 'context is required' },
  ),
});

const portraitBody = z.object({
  imageUrl: singleLine(z.string(), 'imageUrl').max(2048, { message: 'Must be at most 2048 characters' }).nullable().optional(),
  projectId: singleLine(z.string({ error: 'projectId is required' }), 'projectId'),
  userId: z.string().optional(),
  renderId: optionalId('renderId'),
  imageId: optionalId('imageId'),
  prompt: optionalText(2000),
  cameraMovement: singleLine(z.string({ error: 'cameraMovement (the video effect) is required' }), 'cameraMovement'),
  platform: singleLine(z.string({ error: 'platform must be a string' }), 'platform').optional(),
  isTemporaryImage: z.boolean({ error: 'isTemporaryImage must be true or false' }).optional(),
});

const jobParams = z.object({ jobId: z.string() });
const aspect = z.enum(['16:9', '9:16', '1:1']);
export const clipJobView = answers<ClipJobView>()(
  z
    .object({
      id: z.string(),
      status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']),
      progress: z.number(),
      message: z.string(),
      error: z.string().nullable(),
      code: z.string().nullable(),
      result: z
        .object({
          approvalId: z.string(),
          approvalWorkflowId: z.string(),
          fileName: z.string(),
          durationSeconds: z.number(),
          fileSize: z.number(),
          width: z.number(),
          height: z.number(),
          aspectRatio: aspect,
          platform: z.enum(PLATFORMS),
          effect: z.enum(VIDEO_EFFECTS),
        })
        .nullable(),
      projectId: z.string(),
      options: z.object({
        effect: z.enum(VIDEO_EFFECTS),
        platform: z.enum(PLATFORMS),
        aspectRatio: aspect,
        durationSeconds: z.number(),
        prompt: z.string().nullable(),
        sourceKind: z.enum(['render', 'image']),
        sourceId: z.string(),
        isTemporaryImage: z.boolean(),
        startedBy: z.enum(['start', 'portrait']),
      }),
      createdAt: z.string(),
    })
    .meta({ id: 'ClipJob' }),
);
const startAnswer = answers<StartClipAnswer>()(
  z.object({ success: z.literal(true), jobId: z.string(), warning: z.string().optional(), code: z.string().optional() }),
);
const forbidden = { description: "The caller's role in the workspace does not allow this (WORKSPACE_FORBIDDEN)", schema: errorBody };
const startRefusals = {
  403: forbidden,
  404: { description: 'No such project, render or image in the workspace, or not a member of it', schema: errorBody },
  409: { description: 'A clip is already being generated, or the pending approvals limit is reached', schema: errorBody },
  429: { description: 'Generation is paused after repeated rejections (REJECTION_STREAK_COOLDOWN)', schema: errorBody },
};
const jobAnswer = z.object({ success: z.literal(true), job: clipJobView });

const ASPECT_PLATFORM: Record<ClipAspectRatio, Platform> = { '16:9': 'YouTube', '9:16': 'TikTok', '1:1': 'Square' };

function effectOf(value: string): StartClipRequest['effect'] {
  const effect = parseVideoEffect(value);
  if (!effect) throw new RequestError(400, `Unknown video effect "${value.slice(0, 40)}". Choose one of: ${VIDEO_EFFECTS.join(', ')}`, 'VALIDATION_ERROR');
  return effect;
}

function platformOf(value: string): Platform {
  const platform = parsePlatform(value);
  if (!platform) throw new RequestError(400, `Unknown platform "${value.slice(0, 40)}". Choose YouTube, Facebook, TikTok, Instagram or Square`, 'VALIDATION_ERROR');
  return platform;
}

function durationOf(value: number | undefined): number {
  if (value !== undefined && value !== CLIP_DURATION_SECONDS) throw new RequestError(400, `Clips are ${CLIP_DURATION_SECONDS} seconds long`, 'VALIDATION_ERROR');
  return CLIP_DURATION_SECONDS;
}

/** The platform decides the aspect; a given aspectRatio must agree with it (or pick the platform when none is given). */
function platformAndAspect(platformText: string | undefined, aspectText: string | undefined): { platform: Platform; aspectRatio: ClipAspectRatio } {
  const aspect = aspectText?.trim();
  if (aspect !== undefined && !(aspect in ASPECT_PLATFORM)) throw new RequestError(400, 'aspectRatio must be 16:9, 9:16 or 1:1', 'VALIDATION_ERROR');
  const platform = platformText !== undefined ? platformOf(platformText) : ASPECT_PLATFORM[(aspect as ClipAspectRatio | undefined) ?? '16:9'];
  const aspectRatio = PLATFORM_ASPECT[platform];
  if (aspect !== undefined && aspect !== aspectRatio) throw new RequestError(400, `aspectRatio ${aspect} does not match ${platform} (${aspectRatio})`, 'VALIDATION_ERROR');
  return { platform, aspectRatio };
}

function blankToNull(value: string | null | undefined): string | null {
  return value && value.trim() ? value.trim() : null;
}

const timingAnswer = z.object({
  success: z.literal(true),
  data: z.object({
    maker: z.enum(['hosted', 'local']).meta({ description: 'hosted: the AI provider (AI_PROVIDER=fal); local: this server makes clips itself with ffmpeg' }),
    typicalSeconds: z.object({ min: z.number(), max: z.number() }),
  }),
});

/** /api/video-generation/*: start (main and portrait), status, the active job, cancel and retry, and how long a clip takes. */
export function videoGenerationRouter(deps: AppDeps): Router {
  // where a job status route finds a job named without its workspace (api/workspace.ts)
  const jobLookup = { knex: deps.knex, client: () => getTemporalClient(deps.config) };
  const service = new VideoGenerationService({
    knex: deps.knex,
    logger: deps.logger,
    client: () => getTemporalClient(deps.config),
    queues: defaultClipQueues(deps.taskQueues),
    urls: contentServicesFor(deps).storage.urls,
  });
  const router = new Router();
  router.use(requireAuth(deps));

  describeRoute(router, {
    method: 'get',
    path: '/api/video-generation/timing',
    tag: 'Generation',
    summary: 'Who makes clips on this server and how long one typically takes, start to preview',
    access: 'session',
    workspace: 'self',
    responses: { 200: timingAnswer },
  });
  router.get('/api/video-generation/timing', (ctx) => {
    const maker: ClipMaker = deps.config.providerKind === 'local' ? 'local' : 'hosted';
    ctx.body = { success: true, data: { maker, typicalSeconds: CLIP_TYPICAL_SECONDS[maker] } };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/video-generation/start',
    tag: 'Generation',
    summary: "Start a 5-second clip from a render or AI image (reserves 4 of the workspace's credits)",
    access: 'session',
    workspace: 'generate',
    body: startBody,
    responses: { 200: startAnswer, ...startRefusals },
  });
  router.post('/api/video-generation/start', async (ctx) => {
    const { options, context } = parseBody(ctx, startBody);
    assertSelf(ctx, context.userId);
    const { platform, aspectRatio } = platformAndAspect(options.platform, options.aspectRatio);
    // the project's workspace is the account the clip is for (its credits, its one-clip-at-a-time); the caller acts
    const grant = await workspaceGrant(ctx, deps, 'generate', { projectId: context.projectId });
    ctx.body = await service.start(grant.workspaceId, {
      projectId: context.projectId,
      renderId: blankToNull(context.renderId),
      imageId: blankToNull(context.imageId),
      imageUrl: blankToNull(options.imageUrl),
      effect: effectOf(options.movement),
      platform,
      aspectRatio,
      durationSeconds: durationOf(options.duration),
      prompt: blankToNull(options.originalPrompt),
      isTemporaryImage: context.isTemporaryImage ?? false,
      startedBy: 'start',
    }, grant.userId);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/video-generation/portrait/start',
    tag: 'Generation',
    summary: 'Start a portrait (9:16) clip for TikTok or Instagram',
    access: 'session',
    workspace: 'generate',
    body: portraitBody,
    responses: { 200: startAnswer, ...startRefusals },
  });
  router.post('/api/video-generation/portrait/start', async (ctx) => {
    const body = parseBody(ctx, portraitBody);
    assertSelf(ctx, body.userId);
    const platform = body.platform === undefined ? PORTRAIT_PLATFORMS[0] : platformOf(body.platform);
    if (!PORTRAIT_PLATFORMS.includes(platform)) {
      throw new RequestError(400, `${platform} is not a portrait platform. Choose ${PORTRAIT_PLATFORMS.join(' or ')}`, 'VALIDATION_ERROR');
    }
    const grant = await workspaceGrant(ctx, deps, 'generate', { projectId: body.projectId });
    ctx.body = await service.start(grant.workspaceId, {
      projectId: body.projectId,
      renderId: blankToNull(body.renderId),
      imageId: blankToNull(body.imageId),
      imageUrl: blankToNull(body.imageUrl),
      effect: effectOf(body.cameraMovement),
      platform,
      aspectRatio: PLATFORM_ASPECT[platform],
      durationSeconds: CLIP_DURATION_SECONDS,
      prompt: blankToNull(body.prompt),
      isTemporaryImage: body.isTemporaryImage ?? false,
      startedBy: 'portrait',
    }, grant.userId);
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/video-generation/status/:jobId',
    tag: 'Generation',
    summary: "A clip job's status, progress, message, error and result",
    access: 'session',
    workspace: 'read',
    params: jobParams,
    responses: { 200: jobAnswer },
  });
  router.get('/api/video-generation/status/:jobId', async (ctx) => {
    const { jobId } = parse(jobParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'read', { jobWorkspace: () => jobWorkspaceOf(jobLookup, 'clip', jobId) });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, job: await service.status(grant.workspaceId, jobId) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/video-generation/active',
    tag: 'Generation',
    summary: "The caller's running clip job in the workspace, if any (one at a time per member)",
    access: 'session',
    workspace: 'read',
    responses: { 200: z.object({ success: z.literal(true), job: orNull(clipJobView) }) },
  });
  router.get('/api/video-generation/active', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, job: await service.active(grant.workspaceId, grant.userId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/video-generation/cancel/:jobId',
    tag: 'Generation',
    summary: 'Cancel a running clip job of the workspace (its credits are released)',
    access: 'session',
    workspace: 'generate',
    params: jobParams,
    responses: { 200: jobAnswer, 403: forbidden, 409: { description: 'The job is not running', schema: errorBody } },
  });
  router.post('/api/video-generation/cancel/:jobId', async (ctx) => {
    const { jobId } = parse(jobParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'generate');
    ctx.body = { success: true, job: await service.cancel(grant.workspaceId, jobId, grant.userId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/video-generation/retry/:jobId',
    tag: 'Generation',
    summary: 'Start a failed or cancelled clip job again with the same inputs',
    access: 'session',
    workspace: 'generate',
    params: jobParams,
    responses: { 200: startAnswer.extend({ retriedFrom: z.string() }), ...startRefusals },
  });
  router.post('/api/video-generation/retry/:jobId', async (ctx) => {
    const { jobId } = parse(jobParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'generate');
    ctx.body = await service.retry(grant.workspaceId, jobId, grant.userId);
  });

  return router;
}
