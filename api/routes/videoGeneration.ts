import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { RequestError, parseBody, singleLine } from '../validation';
import { CLIP_DURATION_SECONDS, PLATFORM_ASPECT, VIDEO_EFFECTS, type Platform } from '../../domain/constants';
import { PORTRAIT_PLATFORMS, parsePlatform, parseVideoEffect, type ClipAspectRatio } from '../../domain/clipGeneration';
import { getTemporalClient } from '../../services/temporalClient';
import { VideoGenerationService, defaultClipQueues, type StartClipRequest } from '../../services/videoGeneration';

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

/** /api/video-generation/*: start (main and portrait), status, the active job, cancel and retry. */
export function videoGenerationRouter(deps: AppDeps): Router {
  const service = new VideoGenerationService({
    knex: deps.knex,
    logger: deps.logger,
    client: () => getTemporalClient(deps.config),
    queues: defaultClipQueues(deps.taskQueues),
  });
  const router = new Router();
  router.use(requireAuth(deps));

  router.post('/api/video-generation/start', async (ctx) => {
    const { options, context } = parseBody(ctx, startBody);
    const user = assertSelf(ctx, context.userId);
    const { platform, aspectRatio } = platformAndAspect(options.platform, options.aspectRatio);
    ctx.body = await service.start(user.id, {
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
    });
  });

  router.post('/api/video-generation/portrait/start', async (ctx) => {
    const body = parseBody(ctx, portraitBody);
    const user = assertSelf(ctx, body.userId);
    const platform = body.platform === undefined ? PORTRAIT_PLATFORMS[0] : platformOf(body.platform);
    if (!PORTRAIT_PLATFORMS.includes(platform)) {
      throw new RequestError(400, `${platform} is not a portrait platform. Choose ${PORTRAIT_PLATFORMS.join(' or ')}`, 'VALIDATION_ERROR');
    }
    ctx.body = await service.start(user.id, {
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
    });
  });

  router.get('/api/video-generation/status/:jobId', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, job: await service.status(currentUser(ctx).id, ctx.params.jobId) };
  });

  router.get('/api/video-generation/active', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, job: await service.active(currentUser(ctx).id) };
  });

  router.post('/api/video-generation/cancel/:jobId', async (ctx) => {
    ctx.body = { success: true, job: await service.cancel(currentUser(ctx).id, ctx.params.jobId) };
  });

  router.post('/api/video-generation/retry/:jobId', async (ctx) => {
    ctx.body = await service.retry(currentUser(ctx).id, ctx.params.jobId);
  });

  return router;
}
