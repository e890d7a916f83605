import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { parse, parseBody, singleLine } from '../validation';
import {
  ENHANCED_IMAGE_EDITING,
  IMAGE_DESCRIPTION_MAX_LENGTH,
  IMAGE_EDIT_DEFAULTS,
  IMAGE_EDIT_FORMATS,
  IMAGE_EDIT_QUALITIES,
  IMAGE_PROMPT_MAX_LENGTH,
} from '../../domain/imageEdit';
import { MSG } from '../../domain/messages';
import { contentServicesFor } from '../../services/contentServices';
import { ImageEditService } from '../../services/imageEdit';
import { getTemporalClient } from '../../services/temporalClient';
import { TASK_QUEUES } from '../../workers/taskQueues';

const optionalText = (max: number, label: string) =>
  z
    .string({ error: `${label} must be text` })
    .max(max, `${label} must be at most ${max} characters`)
    .nullish()
    .transform((v) => (v && v.trim() ? v.trim() : null));

const imageEditBody = z.object({
  workflow: z.literal(ENHANCED_IMAGE_EDITING, { error: `workflow must be ${ENHANCED_IMAGE_EDITING}` }).optional(),
  context: z
    .object({
      projectId: z.string({ error: 'projectId must be text' }).nullish(),
      userId: z.string({ error: 'userId must be text' }).nullish(),
      userIntent: optionalText(500, 'userIntent'),
      platform: singleLine(z.string({ error: 'platform must be text' }), 'platform').max(40, 'platform is too long').nullish(),
    })
    .prefault({}),
  parameters: z.object(
    {
      prompt: z
        .string({ error: MSG.promptRequired })
        .refine((v) => v.trim() !== '', MSG.promptRequired)
        .refine((v) => v.trim().length <= IMAGE_PROMPT_MAX_LENGTH, `The description must be at most ${IMAGE_PROMPT_MAX_LENGTH} characters`),
      baseImage: z.string({ error: 'baseImage is required: choose a render or image' }).trim().min(1, 'baseImage is required: choose a render or image'),
      imageDescription: optionalText(IMAGE_DESCRIPTION_MAX_LENGTH, 'imageDescription'),
      validateRefinement: z.boolean({ error: 'validateRefinement must be true or false' }).default(true),
      format: z.enum(IMAGE_EDIT_FORMATS, { error: `format must be one of ${IMAGE_EDIT_FORMATS.join(', ')}` }).default(IMAGE_EDIT_DEFAULTS.format),
      quality: z.enum(IMAGE_EDIT_QUALITIES, { error: `quality must be one of ${IMAGE_EDIT_QUALITIES.join(', ')}` }).default(IMAGE_EDIT_DEFAULTS.quality),
      upscaleScale: z
        .number({ error: 'upscaleScale must be a whole number from 1 to 4' })
        .int('upscaleScale must be a whole number from 1 to 4')
        .min(1, 'upscaleScale must be a whole number from 1 to 4')
        .max(4, 'upscaleScale must be a whole number from 1 to 4')
        .default(IMAGE_EDIT_DEFAULTS.upscaleScale),
    },
    { error: MSG.promptRequired },
  ),
});

/** POST /api/ai-image-simple (start and wait for an image edit) and its status call. */
export function imageEditRouter(deps: AppDeps): Router {
  const { projects, storage } = contentServicesFor(deps);
  const service = new ImageEditService({
    knex: deps.knex,
    storage,
    projects,
    temporal: () => getTemporalClient(deps.config),
    queues: {
      generation: deps.taskQueues?.generation ?? TASK_QUEUES.generation,
      media: deps.taskQueues?.media ?? TASK_QUEUES.media,
      approvals: deps.taskQueues?.approvals ?? TASK_QUEUES.approvals,
    },
  });
  const router = new Router();

  router.post('/api/ai-image-simple', requireAuth(deps, { unauthenticatedMessage: MSG.loginToGenerate }), async (ctx) => {
    const { context, parameters } = parseBody(ctx, imageEditBody);
    const user = assertSelf(ctx, context.userId);
    const { status, body } = await service.run(user.id, {
      projectId: context.projectId ? context.projectId : null,
      userIntent: context.userIntent,
      platform: context.platform?.trim() || 'web',
      prompt: parameters.prompt.trim(),
      baseImage: parameters.baseImage,
      imageDescription: parameters.imageDescription,
      validateRefinement: parameters.validateRefinement,
      format: parameters.format,
      quality: parameters.quality,
      upscaleScale: parameters.upscaleScale,
    });
    ctx.status = status;
    ctx.body = body;
  });

  router.get('/api/ai-image-simple/status/:jobId', requireAuth(deps), async (ctx) => {
    const jobId = parse(z.string(), ctx.params.jobId);
    ctx.body = { success: true, job: await service.state(currentUser(ctx).id, jobId) };
  });

  return router;
}
