import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { parseBody, RequestError, singleLine } from '../validation';
import { PLATFORMS, VIDEO_EFFECTS } from '../../domain/constants';
import { parsePlatform, parseVideoEffect } from '../../domain/clipGeneration';
import { TRY_IT_FILE_NAME_MAX_LENGTH } from '../../domain/tryIt';
import { TryItOnboardingService } from '../../services/accounts/onboarding';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { TASK_QUEUES } from '../../domain/taskQueues';
import { describeRoute } from '../openapi/describe';

const tryItBody = z.object({
  fileName: singleLine(z.string({ error: (issue) => (issue.input === undefined ? 'fileName is required' : 'fileName must be text') }).trim(), 'fileName').max(
    TRY_IT_FILE_NAME_MAX_LENGTH,
    `fileName must be at most ${TRY_IT_FILE_NAME_MAX_LENGTH} characters`,
  ),
  platform: z.string({ error: 'platform must be text' }).nullish(),
  effect: z.string({ error: 'effect must be text' }).nullish(),
  userId: z.string({ error: 'userId must be text' }).optional(),
});

function platformOf(value: string | null | undefined) {
  if (value == null || value.trim() === '') return null;
  const platform = parsePlatform(value);
  if (!platform) throw new RequestError(400, `Unknown platform "${value.slice(0, 40)}". Choose one of: ${PLATFORMS.join(', ')}`, 'VALIDATION_ERROR');
  return platform;
}

function effectOf(value: string | null | undefined) {
  if (value == null || value.trim() === '') return null;
  const effect = parseVideoEffect(value);
  if (!effect) throw new RequestError(400, `Unknown video effect "${value.slice(0, 40)}". Choose one of: ${VIDEO_EFFECTS.join(', ')}`, 'VALIDATION_ERROR');
  return effect;
}

const tryItAnswer = z.object({
  success: z.boolean(),
  projectId: z.string().nullable(),
  projectName: z.string().nullable(),
  error: z.string().nullable(),
  code: z.string().optional(),
});

/** POST /api/onboarding/try-it: the signed-in user's saved try-it choices become their first project. */
export function onboardingRouter(deps: AppDeps): Router {
  const service = new TryItOnboardingService({
    temporal: () => getTemporalClient(deps.config),
    taskQueue: deps.taskQueues?.onboarding ?? TASK_QUEUES.onboarding,
    logger: deps.logger,
  });
  const router = new Router();

  describeRoute(router, {
    method: 'post',
    path: '/api/onboarding/try-it',
    tag: 'Projects',
    summary: "Turn the try-it choices saved before sign-up into the user's first project",
    access: 'session',
    workspace: 'self',
    body: tryItBody,
    responses: {
      200: tryItAnswer,
      400: { description: "'No try-it data found' (NO_TRY_IT_DATA) or a field refused", schema: tryItAnswer.or(z.object({ success: z.literal(false), error: z.string(), code: z.string().optional() })) },
    },
  });
  router.post('/api/onboarding/try-it', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, tryItBody);
    const user = assertSelf(ctx, body.userId);
    const { status, body: answer } = await service.run(user.id, { fileName: body.fileName, platform: platformOf(body.platform), effect: effectOf(body.effect) });
    ctx.status = status;
    ctx.body = answer;
  });

  return router;
}
