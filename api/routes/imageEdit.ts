import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
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
import { getTemporalClient } from '../../services/platform/temporalClient';
import { jobWorkspaceOf } from '../../services/generation/jobs';
import type { ImageEditResponse } from '../../domain/imageEdit';
import type { ImageEditJobState } from '../../services/generation/imageEdit';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { imageEditServiceFor } from '../generationServices';

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

const jobParams = z.object({ jobId: z.string() });
const promptRefinement = z.object({ originalPrompt: z.string(), refinedPrompt: z.string(), refinementMethod: z.string() });
const storedFile = z.object({ bucket: z.enum(['renders', 'images', 'clips', 'videos', 'drafts']), path: z.string() });
const signedImage = z.object({ url: z.string(), width: z.number(), height: z.number(), mime: z.string(), model: z.string() });
const imageEditAnswer = answers<ImageEditResponse>()(
  z.object({
    success: z.literal(true),
    error: z.null(),
    result: z
      .object({
        promptRefinement,
        generatedImage: signedImage.extend({ description: z.string().nullable() }),
        upscaledImage: signedImage.extend({ scale: z.number(), fileSize: z.number() }),
        savedImage: z.object({
          id: z.string(),
          approvalId: z.string(),
          status: z.literal('pending_approval'),
          fractionalCostCharged: z.literal(0),
          fullCost: z.number(),
          approvalDeadline: z.string(),
          fileName: z.string(),
          aspectRatio: z.string(),
          previewUrl: z.string(),
        }),
      })
      .nullable(),
    metadata: z.object({
      workflow: z.literal(ENHANCED_IMAGE_EDITING),
      jobId: z.string(),
      workflowId: z.string(),
      status: z.enum(['completed', 'processing']),
      approvalWorkflowId: z.string().nullable(),
      editId: z.string().nullable(),
      projectId: z.string(),
      baseImage: z.object({ type: z.enum(['render', 'image']), id: z.string(), fileName: z.string(), fileSize: z.number() }),
      format: z.enum(IMAGE_EDIT_FORMATS),
      quality: z.enum(IMAGE_EDIT_QUALITIES),
      upscaleScale: z.number(),
      platform: z.string(),
      processingTimeMs: z.number(),
      warning: z.string().nullable(),
    }),
  }),
);
const imageEditJob = answers<ImageEditJobState>()(
  z.object({
    jobId: z.string(),
    workflowId: z.string(),
    status: z.enum(['pending', 'processing', 'completed', 'failed']),
    progress: z.number(),
    message: z.string(),
    error: z.string().nullable(),
    errorCode: z.string().nullable(),
    result: z
      .object({
        jobId: z.string(),
        editId: z.string(),
        promptRefinement,
        generatedImage: z.object({ width: z.number(), height: z.number(), mime: z.string(), model: z.string(), description: z.string().nullable() }),
        upscaledImage: z.object({ width: z.number(), height: z.number(), mime: z.string(), model: z.string(), scale: z.number(), fileSize: z.number() }),
        savedImage: z.object({
          status: z.literal('pending_approval'),
          approvalId: z.string(),
          approvalWorkflowId: z.string(),
          fractionalCostCharged: z.literal(0),
          fullCost: z.number(),
          approvalDeadline: z.string(),
          fileName: z.string(),
          aspectRatio: z.string(),
          watermarked: storedFile,
        }),
      })
      .nullable(),
  }),
);

/** POST /api/ai-image-simple (start and wait for an image edit) and its status call. */
export function imageEditRouter(deps: AppDeps): Router {
  // where a job status route finds a job named without its workspace (api/workspace.ts)
  const jobLookup = { knex: deps.knex, client: () => getTemporalClient(deps.config) };
  const service = imageEditServiceFor(deps);
  const router = new Router();

  describeRoute(router, {
    method: 'post',
    path: '/api/ai-image-simple',
    tag: 'Generation',
    summary: 'Edit a render or AI image with a prompt; waits for the result (202 when it takes longer: poll the status call)',
    access: 'session',
    workspace: 'generate',
    body: imageEditBody,
    responses: {
      200: imageEditAnswer,
      202: { description: 'Still running: result is null; poll /api/ai-image-simple/status/{jobId}', schema: imageEditAnswer },
      403: { description: "The caller's role in the workspace does not allow generating (WORKSPACE_FORBIDDEN)", schema: errorBody },
      404: { description: 'No such render, image or project in the workspace, or not a member of it', schema: errorBody },
      409: { description: 'The pending approvals limit is reached', schema: errorBody },
      429: { description: 'Generation is paused after repeated rejections (REJECTION_STREAK_COOLDOWN)', schema: errorBody },
    },
  });
  router.post('/api/ai-image-simple', requireAuth(deps, { unauthenticatedMessage: MSG.loginToGenerate }), async (ctx) => {
    const { context, parameters } = parseBody(ctx, imageEditBody);
    assertSelf(ctx, context.userId);
    // the project's workspace (or the request's): the account whose credits the edit reserves; the caller is its actor
    const grant = await workspaceGrant(ctx, deps, 'generate', { projectId: context.projectId });
    const { status, body } = await service.run(grant.workspaceId, {
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
    }, grant.userId);
    ctx.status = status;
    ctx.body = body;
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/ai-image-simple/status/:jobId',
    tag: 'Generation',
    summary: "An image edit job's status, progress and result",
    access: 'session',
    workspace: 'read',
    params: jobParams,
    responses: { 200: z.object({ success: z.literal(true), job: imageEditJob }) },
  });
  router.get('/api/ai-image-simple/status/:jobId', requireAuth(deps), async (ctx) => {
    const { jobId } = parse(jobParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'read', { jobWorkspace: () => jobWorkspaceOf(jobLookup, 'image-edit', jobId) });
    ctx.body = { success: true, job: await service.state(grant.workspaceId, jobId) };
  });

  return router;
}
