import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { readSingleFileForm } from '../multipart';
import { parse, parseBody, parseQuery, singleLine } from '../validation';
import { describeRoute, errorBody, type RouteDoc } from '../openapi/describe';
import { DRAFT_LIMITS, ENHANCE_MODES, ENHANCE_MSG, VISION_PROMPT_MODES } from '../../domain/enhanceRenders';
import { CircuitBreakerError, createProviders, ProviderError, type Providers } from '../../providers';
import { contentServicesFor } from '../../services/content/contentServices';
import { AccessCodeRateLimitedError, EnhanceAccessService } from '../../services/generation/enhanceAccess';
import { DraftService, type DraftUploadPurpose } from '../../services/generation/drafts';
import { DraftJobService, enhanceVisionPrompt } from '../../services/generation/draftJobs';
import { DraftUploads } from '../../services/generation/draftUploads';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { TASK_QUEUES } from '../../domain/taskQueues';
import { RequestError } from '../validation';
import { workspaceGrant, type RequestGrant } from '../workspace';
import type { WorkspaceAction } from '../../domain/workspaceRoles';

const userIdQuery = z.object({ userId: z.string().optional() });
const draftIdField = z.string({ error: ENHANCE_MSG.openDraftFirst }).trim().min(1, ENHANCE_MSG.openDraftFirst);
const unlockBody = z.object({ code: z.string({ error: 'code is required' }).max(200, 'code is too long') });
const createBody = z.object({
  userId: z.string().optional(),
  name: singleLine(z.string({ error: ENHANCE_MSG.draftNameRequired }), 'Draft name').refine((v) => v.trim() !== '', ENHANCE_MSG.draftNameRequired),
});
const commitBody = z.object({
  draftId: draftIdField,
  newProjectName: singleLine(z.string({ error: 'newProjectName must be text' }), 'Project name').max(200, 'Project name must be at most 200 characters').nullish(),
});
const draftBody = z.object({ draftId: draftIdField });
const uploadFields = z.object({
  draftId: draftIdField,
  userId: z.string().optional(),
  purpose: z.enum(['image', 'reference'], { error: 'purpose must be image or reference' }).optional(),
});
const newImage = z.object({
  source_type: singleLine(z.string(), 'source_type').max(40, 'source_type is too long').optional(),
  source_url: z.string({ error: 'source_url is required' }).min(1, 'source_url is required').max(2000, 'source_url is too long'),
  name: singleLine(z.string(), 'name').max(300, 'name is too long').optional(),
  order_index: z.number({ error: 'order_index must be a whole number' }).int('order_index must be a whole number').min(0).max(1000).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
const addImagesBody = z.object({ draftId: draftIdField, images: z.array(newImage, { error: 'images must be a list' }).min(1, 'images must list at least one image').max(DRAFT_LIMITS.maxImagesPerDraft, ENHANCE_MSG.limitReached) });
const getQuery = z.object({ draftId: draftIdField });
const removeImageBody = z.object({ draftId: draftIdField, imageId: z.string({ error: 'imageId is required' }).min(1, 'imageId is required'), sourceUrl: z.string().nullish() });
const restoreBody = z.object({
  draftId: draftIdField,
  imageId: z.string({ error: 'imageId is required' }).min(1, 'imageId is required'),
  versionUrl: z.string({ error: 'versionUrl is required' }).min(1, 'versionUrl is required').max(2000, 'versionUrl is too long'),
});
/** An attachment as the spec's browser keeps it ({ id, type, url, name, useForLook, placements }) or its URL alone. */
const reference = z.union([z.string().min(1).max(2000), z.object({ url: z.string().min(1).max(2000) }).loose()]).transform((r) => (typeof r === 'string' ? r : r.url));
const dispatchBody = z.object({
  draftId: draftIdField,
  imageIds: z.array(z.string().max(100), { error: ENHANCE_MSG.selectImage }).max(DRAFT_LIMITS.maxImagesPerDraft, `At most ${DRAFT_LIMITS.maxImagesPerDraft} images per dispatch`),
  prompt: z.string({ error: 'prompt must be text' }).max(DRAFT_LIMITS.promptMaxLength * 2, 'The prompt is too long').nullish(),
  modelId: z.string({ error: 'modelId is required' }).min(1, 'modelId is required').max(100),
  mode: z.enum([...ENHANCE_MODES, 'style_sync'], { error: `mode must be one of ${[...ENHANCE_MODES, 'style_sync'].join(', ')}` }),
  references: z.array(reference, { error: 'references must be a list' }).max(10, ENHANCE_MSG.referencesPerJob).default([]),
  syncImageId: z.string().max(100).nullish(),
});
const visionBody = z.object({
  mode: z.enum(VISION_PROMPT_MODES, { error: 'mode must be attach or style_sync' }),
  prompt: z.string({ error: 'prompt must be text' }).max(DRAFT_LIMITS.promptMaxLength, `The prompt must be at most ${DRAFT_LIMITS.promptMaxLength} characters`).default(''),
  imageUrls: z.array(z.string().min(1).max(2000)).max(DRAFT_LIMITS.maxImagesPerDraft, `At most ${DRAFT_LIMITS.maxImagesPerDraft} images`).default([]),
  referenceUrls: z.array(z.string().min(1).max(2000)).max(DRAFT_LIMITS.maxReferencesSent, ENHANCE_MSG.referencesPerJob).default([]),
});

const perApp = new WeakMap<object, DraftUploads>();

/**
 * The draft upload slots of an app, shared by every router built from the same deps. With background work (the API
 * process) the sweep of unregistered uploads runs every 5 minutes from a minute after start-up (building the app
 * touches no database), and stops with the process.
 */
export function draftUploadsFor(deps: AppDeps, firstSweepAfterMs = 60_000): DraftUploads {
  let uploads = perApp.get(deps);
  if (!uploads) {
    const { storage } = contentServicesFor(deps);
    const created = new DraftUploads({
      knex: deps.knex,
      storage,
      logger: deps.logger,
      limits: { maxAgeMinutes: deps.config.draftUploadMaxAgeMinutes, waitingPerAccount: deps.config.draftUploadsWaitingPerAccount },
    });
    if (deps.background) {
      const starting = setTimeout(() => created.startSweeping(), firstSweepAfterMs);
      starting.unref();
      deps.background.onClose(async () => {
        clearTimeout(starting);
        await created.stopSweeping();
      });
    }
    perApp.set(deps, created);
    uploads = created;
  }
  return uploads;
}

const ok = z.object({ success: z.literal(true) });
const draftObject = z.looseObject({ id: z.string() });
const draftImage = z.looseObject({ id: z.string() });
const jobIdBody = z.object({ jobId: z.string().min(1).max(100) });
const locked = {
  description:
    "Not allowed: the caller's role in the workspace does not allow it (WORKSPACE_FORBIDDEN), the caller has not entered the Enhance Renders access code (ENHANCE_LOCKED), or another user's id",
  schema: errorBody,
};
const noDraft = { description: 'No such draft or image in the workspace, or not a member of it', schema: errorBody };
const uploadForm = uploadFields.extend({ file: z.string().meta({ format: 'binary', description: 'A JPEG, PNG, GIF or WebP image' }) });

/**
 * Enhance Renders (Beta): the access code, the drafts calls, job dispatch (spec 001 section 7) and the vision prompt.
 * Drafts belong to a workspace (the request's: DESIGN.md "Teams (workspaces)"); every drafts call first checks the
 * caller's role there (read to look, edit to change drafts and upload into them, generate to run models), then that
 * the caller has entered the access code: it answers 403 (ENHANCE_LOCKED) until they have.
 */
export function enhanceSetRouter(deps: AppDeps): Router {
  const { storage, projects, uploads } = contentServicesFor(deps);
  const temporal = () => getTemporalClient(deps.config);
  const access = new EnhanceAccessService(deps.knex, deps.config.enhanceAccessCode, deps.enhanceAccessLimits);
  const draftUploads = draftUploadsFor(deps);
  const drafts = new DraftService({ knex: deps.knex, storage, projects, uploads, draftUploads, logger: deps.logger, temporal });
  const jobs = new DraftJobService({
    knex: deps.knex,
    storage,
    drafts,
    draftUploads,
    temporal,
    queues: { generation: deps.taskQueues?.generation ?? TASK_QUEUES.generation, media: deps.taskQueues?.media ?? TASK_QUEUES.media },
    logger: deps.logger,
  });
  let providers: Pick<Providers, 'visionPrompt'> | null = null;
  const router = new Router();
  router.use(requireAuth(deps));

  /**
   * The workspace grant for `action`, then the caller's own access code: a non-member gets the workspace's 404 and a
   * role without the right its 403 whether or not they entered the code, and nothing is read or changed before both.
   */
  const unlocked = async (ctx: Context, action: WorkspaceAction): Promise<RequestGrant> => {
    const grant = await workspaceGrant(ctx, deps, action);
    await access.assertUnlocked(grant.userId);
    return grant;
  };

  const doc = (path: string, method: 'get' | 'post', summary: string, rest: Partial<RouteDoc> & Pick<RouteDoc, 'responses'>) =>
    describeRoute(router, { method, path, summary, tag: 'Enhance Renders', access: 'session', ...rest });

  // The access code is the caller's own (workspace: 'self'): a Beta invitation handed to a person, remembered on their
  // personal account (profiles row of their personal workspace, whose id is theirs) and limited per person and address.
  // It unlocks the feature for them in every workspace they belong to, as far as their role there allows; it spends
  // nothing and reaches no workspace's data, so no workspace role is asked for, and a viewer may enter it too.
  doc('/api/enhance-set/access', 'get', 'Whether the beta is configured and the caller has entered the access code', {
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), configured: z.boolean(), unlocked: z.boolean() }) },
  });
  router.get('/api/enhance-set/access', async (ctx) => {
    const user = currentUser(ctx);
    ctx.body = { success: true, configured: access.configured, unlocked: access.configured && (await access.isUnlocked(user.id)) };
  });

  doc('/api/enhance-set/access/unlock', 'post', 'Enter the access code (checked by the server; wrong guesses are limited per account and address)', {
    workspace: 'self',
    body: unlockBody,
    responses: {
      200: z.looseObject({ success: z.literal(true) }),
      429: { description: 'Too many wrong codes: try again after Retry-After seconds', schema: errorBody },
    },
  });
  router.post('/api/enhance-set/access/unlock', async (ctx) => {
    const { code } = parseBody(ctx, unlockBody);
    try {
      ctx.body = { success: true, ...(await access.unlock(currentUser(ctx).id, ctx.ip || 'unknown', code)) };
    } catch (err) {
      if (err instanceof AccessCodeRateLimitedError) ctx.set('Retry-After', String(err.retryAfterSeconds));
      throw err;
    }
  });

  doc('/api/enhance-set/drafts/list', 'get', "The workspace's drafts", {
    workspace: 'read',
    query: userIdQuery,
    responses: { 200: z.object({ success: z.literal(true), drafts: z.array(draftObject) }), 403: locked },
  });
  router.get('/api/enhance-set/drafts/list', async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, userIdQuery).userId);
    const grant = await unlocked(ctx, 'read');
    ctx.body = { success: true, drafts: await drafts.list(grant.workspaceId) };
  });

  doc('/api/enhance-set/drafts/create', 'post', 'Create a draft in the workspace', {
    workspace: 'edit',
    body: createBody,
    responses: { 201: z.object({ success: z.literal(true), draft: draftObject }), 403: locked },
  });
  router.post('/api/enhance-set/drafts/create', async (ctx) => {
    const body = parseBody(ctx, createBody);
    assertSelf(ctx, body.userId);
    const grant = await unlocked(ctx, 'edit');
    ctx.status = 201;
    ctx.body = { success: true, draft: await drafts.create(grant.workspaceId, body.name) };
  });

  doc('/api/enhance-set/drafts/commit', 'post', "Save the draft's images into a new project of the workspace", {
    workspace: 'edit',
    body: commitBody,
    responses: { 200: z.looseObject({ success: z.literal(true) }), 403: locked, 404: noDraft, 409: { description: 'The draft cannot be committed now', schema: errorBody } },
  });
  router.post('/api/enhance-set/drafts/commit', async (ctx) => {
    const body = parseBody(ctx, commitBody);
    const grant = await unlocked(ctx, 'edit');
    const result = await drafts.commit(grant.workspaceId, body.draftId, body.newProjectName ?? null);
    ctx.body = { success: true, ...result };
  });

  doc('/api/enhance-set/drafts/delete', 'post', 'Delete a draft and its files', { workspace: 'edit', body: draftBody, responses: { 200: ok, 403: locked, 404: noDraft } });
  router.post('/api/enhance-set/drafts/delete', async (ctx) => {
    const { draftId } = parseBody(ctx, draftBody);
    const grant = await unlocked(ctx, 'edit');
    await drafts.remove(grant.workspaceId, draftId);
    ctx.body = { success: true };
  });

  // multipart: send draftId (and purpose) before the file, so they are checked before a byte is stored
  doc('/api/enhance-set/drafts/upload', 'post', 'Upload an image (or a reference) into a draft; send draftId before the file', {
    workspace: 'edit',
    description:
      'The upload is kept once add-images registers it (a reference: once a dispatch starts a job with it); until then it holds a slot, ' +
      'and one left unregistered for DRAFT_UPLOAD_MAX_AGE_MINUTES (30) is removed. The limits are checked before a byte is stored.',
    body: { contentType: 'multipart/form-data', schema: uploadForm },
    responses: {
      200: z.looseObject({ success: z.literal(true) }),
      403: locked,
      404: noDraft,
      409: {
        description:
          "The draft is full: its images and image uploads waiting to be added make 4 (DRAFT_IMAGE_LIMIT, 'Limit reached: maximum 4 images per draft'); " +
          'or it already has 6 references waiting to be used (DRAFT_REFERENCE_LIMIT); or the upload outlasted its slot (DRAFT_UPLOAD_EXPIRED)',
        schema: errorBody,
      },
      413: { description: 'The file is too large', schema: errorBody },
      429: { description: 'The account already has DRAFT_UPLOADS_WAITING_PER_ACCOUNT (20) uploads not yet added to a draft (TOO_MANY_WAITING_DRAFT_UPLOADS)', schema: errorBody },
    },
  });
  router.post('/api/enhance-set/drafts/upload', async (ctx) => {
    // decided before a byte of the body is read: the workspace is the request's (parameter or header)
    const grant = await unlocked(ctx, 'edit');
    drafts.assertRequestSize(ctx.get('content-length') ? Number(ctx.get('content-length')) : undefined);
    const { fields, file } = await readSingleFileForm(
      ctx.req,
      'file',
      async (incoming, early) => {
        assertSelf(ctx, early.userId);
        if (!early.draftId?.trim()) throw new RequestError(400, ENHANCE_MSG.openDraftFirst, 'DRAFT_REQUIRED');
        const purpose: DraftUploadPurpose = early.purpose === 'reference' ? 'reference' : 'image';
        return drafts.upload(grant.workspaceId, early.draftId.trim(), purpose, incoming);
      },
      (stored) => drafts.discardUpload(stored),
    );
    try {
      const input = parse(uploadFields, fields);
      assertSelf(ctx, input.userId);
    } catch (err) {
      await drafts.discardUpload(file);
      throw err;
    }
    ctx.body = file;
  });

  doc('/api/enhance-set/drafts/add-images', 'post', 'Add images (uploads into the draft) to a draft', {
    workspace: 'edit',
    body: addImagesBody,
    responses: {
      200: z.object({ success: z.literal(true), images: z.array(draftImage) }),
      403: locked,
      404: noDraft,
      409: { description: "The draft already holds 4 images (DRAFT_IMAGE_LIMIT, 'Limit reached: maximum 4 images per draft'), or an upload is already one of its images", schema: errorBody },
    },
  });
  router.post('/api/enhance-set/drafts/add-images', async (ctx) => {
    const body = parseBody(ctx, addImagesBody);
    const grant = await unlocked(ctx, 'edit');
    ctx.body = { success: true, images: await drafts.addImages(grant.workspaceId, body.draftId, body.images) };
  });

  doc('/api/enhance-set/drafts/get', 'get', 'A draft with its images and their versions', {
    workspace: 'read',
    query: getQuery,
    responses: { 200: z.object({ success: z.literal(true), draft: draftObject, images: z.array(draftImage) }), 403: locked, 404: noDraft },
  });
  router.get('/api/enhance-set/drafts/get', async (ctx) => {
    const { draftId } = parseQuery(ctx, getQuery);
    const grant = await unlocked(ctx, 'read');
    const { draft, images } = await drafts.get(grant.workspaceId, draftId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, draft, images };
  });

  doc('/api/enhance-set/drafts/remove-image', 'post', 'Remove an image from a draft', { workspace: 'edit', body: removeImageBody, responses: { 200: ok, 403: locked, 404: noDraft } });
  router.post('/api/enhance-set/drafts/remove-image', async (ctx) => {
    const body = parseBody(ctx, removeImageBody);
    const grant = await unlocked(ctx, 'edit');
    await drafts.removeImage(grant.workspaceId, body.draftId, body.imageId);
    ctx.body = { success: true };
  });

  doc('/api/enhance-set/drafts/restore-version', 'post', "Make an earlier version the image's current one", {
    workspace: 'edit',
    body: restoreBody,
    responses: { 200: z.object({ success: z.literal(true), image: draftImage }), 403: locked, 404: noDraft },
  });
  router.post('/api/enhance-set/drafts/restore-version', async (ctx) => {
    const body = parseBody(ctx, restoreBody);
    const grant = await unlocked(ctx, 'edit');
    ctx.body = { success: true, image: await drafts.restoreVersion(grant.workspaceId, body.draftId, body.imageId, body.versionUrl) };
  });

  doc('/api/enhance-set/jobs/dispatch', 'post', 'Run a model on some of the draft\'s images (one job per image)', {
    workspace: 'generate',
    body: dispatchBody,
    responses: { 200: z.looseObject({ success: z.boolean() }), 403: locked, 404: noDraft, 409: { description: 'An image has an unfinished job', schema: errorBody } },
  });
  router.post('/api/enhance-set/jobs/dispatch', async (ctx) => {
    const body = parseBody(ctx, dispatchBody);
    const grant = await unlocked(ctx, 'generate');
    ctx.body = await jobs.dispatch(grant.workspaceId, {
      draftId: body.draftId,
      imageIds: body.imageIds,
      prompt: body.prompt ?? null,
      modelId: body.modelId,
      mode: body.mode,
      references: body.references,
      syncImageId: body.syncImageId ?? null,
    }, grant.userId);
  });

  doc('/api/enhance-set/jobs/retry', 'post', "Run a failed job again on its image with the same model, prompt and references", {
    workspace: 'generate',
    body: jobIdBody,
    responses: {
      200: z.looseObject({ success: z.boolean() }),
      403: locked,
      404: { description: 'No such job of this user', schema: errorBody },
      409: { description: 'The job did not fail (JOB_NOT_FAILED), or the image has an unfinished job', schema: errorBody },
    },
  });
  router.post('/api/enhance-set/jobs/retry', async (ctx) => {
    const body = parseBody(ctx, jobIdBody);
    const grant = await unlocked(ctx, 'generate');
    ctx.body = await jobs.retry(grant.workspaceId, body.jobId, grant.userId);
  });

  // dismissing a failure notice is part of running the models (generate), as its Retry beside it is
  doc('/api/enhance-set/jobs/dismiss', 'post', "Dismiss a failed job's notice on its image's card", {
    workspace: 'generate',
    body: jobIdBody,
    responses: { 200: ok, 403: locked, 404: { description: 'No such job of this user', schema: errorBody }, 409: { description: 'The job did not fail (JOB_NOT_FAILED)', schema: errorBody } },
  });
  router.post('/api/enhance-set/jobs/dismiss', async (ctx) => {
    const body = parseBody(ctx, jobIdBody);
    const grant = await unlocked(ctx, 'generate');
    await jobs.dismiss(grant.workspaceId, body.jobId);
    ctx.body = { success: true };
  });

  // a provider call on the workspace's draft files, made while preparing a run: generate
  doc('/api/ai-enhance-prompt/vision', 'post', 'Improve a prompt by looking at the images (attach) or the pinned reference (style_sync)', {
    workspace: 'generate',
    body: visionBody,
    responses: {
      200: z.object({ success: z.literal(true), enhancedPrompt: z.string(), method: z.string() }),
      403: locked,
      404: { description: "An image is not one of the workspace's drafts' files", schema: errorBody },
      502: { description: 'Prompt enhancement failed (the browser falls back to its local enhancer)', schema: errorBody },
      503: { description: 'Prompt enhancement is unavailable, or the database is', schema: errorBody },
    },
  });
  router.post('/api/ai-enhance-prompt/vision', async (ctx) => {
    const body = parseBody(ctx, visionBody);
    const grant = await unlocked(ctx, 'generate');
    if (body.mode === 'style_sync' && body.referenceUrls.length !== 1) throw new RequestError(400, ENHANCE_MSG.syncNeedsPinned, 'SYNC_NEEDS_PINNED');
    providers ??= createProviders(deps.config);
    const result = await enhanceVisionPrompt({ storage, providers, jobs }, grant.workspaceId, body).catch((err: unknown) => {
      // the browser falls back to its local enhancer: say what failed, never the provider's internals
      if (err instanceof ProviderError) {
        throw err.code === 'INPUT' ? new RequestError(400, err.message, 'PROMPT_INPUT') : new RequestError(502, 'Prompt enhancement failed', 'PROMPT_ENHANCE_FAILED');
      }
      if (err instanceof CircuitBreakerError) throw new RequestError(503, 'Prompt enhancement is unavailable', 'PROMPT_ENHANCE_FAILED');
      throw err;
    });
    ctx.body = { success: true, enhancedPrompt: result.enhancedPrompt, method: result.method };
  });

  return router;
}

