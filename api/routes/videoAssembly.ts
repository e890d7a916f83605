import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
import type { WorkspaceAction } from '../../domain/workspaceRoles';
import { RequestError, parseBody, parseQuery, singleLine } from '../validation';
import { ASSEMBLY_FORMATS, ASSEMBLY_FORMATS_MESSAGE, ASSEMBLY_MSG, CHAT_MESSAGE_MAX, parseAssemblyPlatform } from '../../domain/assembly';
import { ORIENTATIONS, type Orientation } from '../../domain/orientation';
import { MUSIC_MAX_FADE_SECONDS, MUSIC_MAX_SECONDS, MUSIC_MIN_VOLUME, normalizeMusicSetting } from '../../domain/music';
import {
  END_CARD_MAX_SECONDS,
  END_CARD_MIN_SECONDS,
  LOGO_CORNERS,
  LOGO_MAX_SIZE,
  LOGO_MIN_OPACITY,
  LOGO_MIN_SIZE,
  TITLE_MAX_SECONDS,
  TITLE_MIN_SECONDS,
  TITLE_STYLES,
  TITLE_TEXT_MAX_LENGTH,
} from '../../domain/brandVideo';
import { createChatProvider } from '../../providers';
import { AestheticChatService } from '../../services/generation/aestheticChat';
import { contentServicesFor } from '../../services/content/contentServices';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { jobWorkspaceOf } from '../../services/generation/jobs';
import { VideoAssemblyService, defaultAssemblyQueues } from '../../services/generation/videoAssembly';
import { describeRoute, errorBody, type RouteDoc } from '../openapi/describe';

const chatState = z.looseObject({ success: z.literal(true), error: z.null() }).meta({ description: 'chat_history, preferences, editing_config, analysis, workflow_analysis, clip_suggestions' });
const assemblyRefusals: RouteDoc['responses'] = {
  401: { description: "'User authentication required'", schema: errorBody },
  403: { description: "The user's role in the workspace does not allow it (a viewer assembling), or the project is not the workspace's ('You do not have permission to use this project')", schema: errorBody },
  404: { description: 'No such clip, project or job in this workspace', schema: errorBody },
  409: { description: 'The pending approvals limit is reached, or an assembly is already running', schema: errorBody },
  429: { description: 'Generation is paused after repeated rejections (REJECTION_STREAK_COOLDOWN)', schema: errorBody },
};

/** At most this many entries are read from a list a client sends (the rules then say 'Maximum 5 clips allowed'). */
const LIST_MAX = 50;
const id = (label: string) => singleLine(z.string({ error: `${label} must be a string` }), label).max(64, { message: `${label} is too long` });

const projectIdField = singleLine(z.string({ error: 'projectId must be a string' }), 'projectId').max(64).nullable().optional();

/** Issue 44 item 4: one or more of the four formats, each once. */
const formatsList = z
  .array(z.enum(ASSEMBLY_FORMATS, { error: ASSEMBLY_FORMATS_MESSAGE }), { error: ASSEMBLY_FORMATS_MESSAGE })
  .min(1, { message: ASSEMBLY_FORMATS_MESSAGE })
  .max(ASSEMBLY_FORMATS.length, { message: ASSEMBLY_FORMATS_MESSAGE })
  .refine((formats) => new Set(formats).size === formats.length, { message: 'formats must not name a format twice' });

/** The formats an assembly renders; the platform's own when absent. */
const formatsField = formatsList.optional();

const dryRunBody = z.object({
  projectId: projectIdField,
  clipIds: z.array(id('clipIds[]'), { error: 'clipIds must be a list of clip ids' }).max(LIST_MAX).optional(),
  aspectRatio: singleLine(z.string({ error: 'aspectRatio must be a string' }), 'aspectRatio').max(16).nullable().optional(),
  formats: formatsField,
  editorState: z
    .object({
      transitions: z
        .array(
          z.union([
            singleLine(z.string(), 'editorState.transitions[]').max(32),
            z.object({
              type: singleLine(z.string(), 'editorState.transitions[].type').max(32).nullable().optional(),
              duration: z.number({ error: 'editorState.transitions[].duration must be a number' }).nullable().optional(),
            }),
            z.null(),
          ]),
        )
        .max(LIST_MAX)
        .optional(),
    })
    .nullable()
    .optional(),
});

const assembleBody = z.object({
  projectId: projectIdField,
  userId: z.string().optional(),
  platform: singleLine(z.string({ error: 'platform must be youtube, tiktok, portrait or landscape' }), 'platform').max(32).optional(),
  formats: formatsField,
  contentItems: z
    .array(
      z.object({
        id: id('contentItems[].id'),
        type: singleLine(z.string(), 'contentItems[].type').max(32).optional(),
        file_url: z.string().max(4096).nullable().optional(),
        file_name: z.string().max(1000).nullable().optional(),
      }),
      { error: 'contentItems must be a list of clips' },
    )
    .max(LIST_MAX)
    .optional(),
  clipOrder: z.array(id('clipOrder[]')).max(LIST_MAX).nullable().optional(),
});

const statusQuery = z.object({ jobId: singleLine(z.string({ error: 'jobId is required' }), 'jobId').max(64) });
const clipsQuery = z.object({ orientation: z.enum(ORIENTATIONS as [Orientation, ...Orientation[]], { error: 'orientation must be landscape or portrait' }).optional() });

const chatBody = z.object({
  message: z.string({ error: ASSEMBLY_MSG.typeMessage }).max(CHAT_MESSAGE_MAX, { message: `A message is at most ${CHAT_MESSAGE_MAX} characters` }),
  // accepted for the spec's payload; the server's stored conversation is the one that counts
  chat_history: z.array(z.unknown()).optional(),
  selected_clips: z
    .array(z.union([id('selected_clips[]'), z.object({ id: id('selected_clips[].id') }).passthrough()]))
    .max(LIST_MAX)
    .nullable()
    .optional(),
  aspect_ratio: singleLine(z.string(), 'aspect_ratio').max(16).nullable().optional(),
});

const chatSelectionBody = z.object({
  selected_clips: z.array(z.union([id('selected_clips[]'), z.object({ id: id('selected_clips[].id') }).passthrough()]), { error: 'selected_clips must be a list of clip ids' }).max(LIST_MAX),
});

const seconds = (label: string, max: number) =>
  z.number({ error: `${label} must be a number of seconds` }).min(0, { message: `${label} must be 0 or more` }).max(max, { message: `${label} is at most ${max} seconds` });
const chatMusicBody = z.object({
  trackId: z
    .string({ error: 'trackId must be a track id or null' })
    .max(64)
    .nullable()
    .meta({ description: "One of the workspace's music tracks, or null for no music (the video stays silent)" }),
  offsetSeconds: seconds('offsetSeconds', MUSIC_MAX_SECONDS).optional().meta({ description: 'Where in the track the music starts (default 0)' }),
  volume: z
    .number({ error: 'volume must be a number' })
    .min(MUSIC_MIN_VOLUME, { message: `volume must be at least ${MUSIC_MIN_VOLUME}` })
    .max(1, { message: 'volume must be at most 1' })
    .optional()
    .meta({ description: '0.05-1: 1 plays the music at -14 LUFS integrated (default 1)' }),
  fadeInSeconds: seconds('fadeInSeconds', MUSIC_MAX_FADE_SECONDS).optional(),
  fadeOutSeconds: seconds('fadeOutSeconds', MUSIC_MAX_FADE_SECONDS).optional(),
});

const brandPartsBody = z
  .object({
    titleCard: z.boolean({ error: 'titleCard must be true or false' }).optional().meta({ description: 'The title card over the first clip' }),
    titleText: z
      .string({ error: 'titleText must be text or null' })
      .max(TITLE_TEXT_MAX_LENGTH, { message: `titleText is at most ${TITLE_TEXT_MAX_LENGTH} characters` })
      .nullable()
      .optional()
      .meta({ description: "The title's text; null or empty: the project's name" }),
    titleStyle: z.enum(TITLE_STYLES, { error: `titleStyle must be ${TITLE_STYLES.join(' or ')}` }).optional(),
    titleSeconds: z
      .number({ error: 'titleSeconds must be a number of seconds' })
      .min(TITLE_MIN_SECONDS, { message: `titleSeconds must be at least ${TITLE_MIN_SECONDS}` })
      .max(TITLE_MAX_SECONDS, { message: `titleSeconds is at most ${TITLE_MAX_SECONDS}` })
      .optional(),
    captions: z.boolean({ error: 'captions must be true or false' }).optional().meta({ description: "Captions in the kit's font and colour (false: plain white captions)" }),
    logo: z.boolean({ error: 'logo must be true or false' }).optional().meta({ description: 'The logo watermark over the clips' }),
    logoCorner: z.enum(LOGO_CORNERS, { error: `logoCorner must be one of ${LOGO_CORNERS.join(', ')}` }).optional(),
    logoSize: z
      .number({ error: 'logoSize must be a number' })
      .min(LOGO_MIN_SIZE, { message: `logoSize must be at least ${LOGO_MIN_SIZE}` })
      .max(LOGO_MAX_SIZE, { message: `logoSize is at most ${LOGO_MAX_SIZE}` })
      .optional()
      .meta({ description: "The logo's longer side as a fraction of the frame's shorter side" }),
    logoOpacity: z
      .number({ error: 'logoOpacity must be a number' })
      .min(LOGO_MIN_OPACITY, { message: `logoOpacity must be at least ${LOGO_MIN_OPACITY}` })
      .max(1, { message: 'logoOpacity is at most 1' })
      .optional(),
    endCard: z.boolean({ error: 'endCard must be true or false' }).optional().meta({ description: "The end card after the last clip (brand colour, logo, call to action, contact lines)" }),
    endCardSeconds: z
      .number({ error: 'endCardSeconds must be a number of seconds' })
      .min(END_CARD_MIN_SECONDS, { message: `endCardSeconds must be at least ${END_CARD_MIN_SECONDS}` })
      .max(END_CARD_MAX_SECONDS, { message: `endCardSeconds is at most ${END_CARD_MAX_SECONDS}` })
      .optional(),
  })
  .strict();

const chatFormatsBody = z
  .object({
    formats: formatsList
      .nullable()
      .meta({ description: "Every format the project's next assembly renders (9:16, 1:1, 4:5, 16:9), or null for the platform's own" }),
  })
  .strict();

/** The play order: clipOrder over the content items (items it leaves out follow in their own order). */
function orderedClipIds(items: Array<{ id: string; type?: string }>, clipOrder: string[] | null | undefined): string[] {
  const notClip = items.find((item) => item.type !== undefined && item.type !== 'clip');
  if (notClip) throw new RequestError(400, 'Only clips can be assembled', 'VALIDATION_ERROR');
  const ids = items.map((item) => item.id);
  if (!clipOrder || clipOrder.length === 0) return ids;
  const chosen = new Set(ids);
  const ordered = clipOrder.filter((clipId) => chosen.has(clipId));
  if (new Set(ordered).size !== ordered.length) throw new RequestError(400, 'Each clip can be used once in an assembly', 'VALIDATION_ERROR');
  return [...ordered, ...ids.filter((clipId) => !ordered.includes(clipId))];
}

/**
 * Video assembly (spec 001 section 7): the user's clips for assembly, the dry-run, the assembly start and status,
 * and the project's AI editing chat.
 */
export function videoAssemblyRouter(deps: AppDeps): Router {
  // where a job status route finds a job named without its workspace (api/workspace.ts)
  const jobLookup = { knex: deps.knex, client: () => getTemporalClient(deps.config) };
  const { projects, storage } = contentServicesFor(deps);
  const chat = new AestheticChatService({ knex: deps.knex, chat: deps.chat ?? createChatProvider(deps.config), projects, logger: deps.logger });
  const service = new VideoAssemblyService({
    knex: deps.knex,
    storage,
    chat,
    logger: deps.logger,
    client: () => getTemporalClient(deps.config),
    queues: defaultAssemblyQueues(deps.taskQueues),
  });
  const router = new Router();
  // these answer the spec's own text without a session (their paths are in PUBLIC_API_ROUTES for that)
  const signedIn = requireAuth(deps, { unauthenticatedMessage: ASSEMBLY_MSG.authRequired });

  /** The user's approved clips for assembly (not in the spec's call list; what the clip selector shows). */
  const doc = (method: 'get' | 'post' | 'put', path: string, workspace: WorkspaceAction, summary: string, rest: Partial<RouteDoc> & Pick<RouteDoc, 'responses'>) =>
    describeRoute(router, { method, path, summary, tag: 'Assembly', access: 'session', workspace, ...rest, responses: { ...assemblyRefusals, ...rest.responses } });

  doc('get', '/api/video-assembly/clips', 'read', "The workspace's approved clips for assembly, optionally of one orientation", {
    query: clipsQuery,
    responses: { 200: z.object({ success: z.literal(true), clips: z.array(z.looseObject({ id: z.string() })) }) },
  });
  router.get('/api/video-assembly/clips', signedIn, async (ctx) => {
    const { orientation } = parseQuery(ctx, clipsQuery);
    ctx.set('Cache-Control', 'no-store');
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, clips: await service.clips(grant.workspaceId, orientation) };
  });

  doc('post', '/api/video-assembly/dry-run', 'assemble', 'The timeline (tracks, clips, transitions, output size) an assembly would render, and its preview', {
    body: dryRunBody,
    responses: { 200: z.looseObject({}) },
  });
  router.post('/api/video-assembly/dry-run', signedIn, async (ctx) => {
    const body = parseBody(ctx, dryRunBody);
    const transitions = (body.editorState?.transitions ?? []).map((t) => (t === null ? null : typeof t === 'string' ? { type: t } : t));
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: body.projectId });
    ctx.body = await service.dryRun(grant.workspaceId, {
      projectId: body.projectId ?? null,
      clipIds: body.clipIds ?? [],
      aspectRatio: body.aspectRatio ?? null,
      transitions: transitions.map((t) => t ?? {}),
      ...(body.formats ? { formats: body.formats } : {}),
    });
  });

  doc('post', '/api/video/assemble', 'assemble', 'Start assembling up to 5 clips of one orientation into a video for a platform (free; waits for approval)', {
    body: assembleBody,
    responses: { 200: z.object({ success: z.literal(true), jobId: z.string() }), 503: { description: "'Failed to start assembly', or the database is unavailable", schema: errorBody } },
  });
  router.post('/api/video/assemble', signedIn, async (ctx) => {
    const body = parseBody(ctx, assembleBody);
    const user = currentUser(ctx);
    if (body.userId !== undefined && body.userId !== user.id) throw new RequestError(403, ASSEMBLY_MSG.projectPermission, 'FORBIDDEN');
    const clipIds = orderedClipIds(body.contentItems ?? [], body.clipOrder);
    const platform = parseAssemblyPlatform(body.platform ?? 'youtube');
    if (!platform) throw new RequestError(400, 'platform must be youtube, tiktok, portrait or landscape', 'VALIDATION_ERROR');
    // the video goes into the project's workspace, made of its clips; the member who started it is recorded (created_by)
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: body.projectId });
    ctx.body = await service.start(grant.workspaceId, { projectId: body.projectId ?? null, platform, clipIds, ...(body.formats ? { formats: body.formats } : {}) }, { actorId: grant.userId });
  });

  doc('get', '/api/video/assemble', 'read', "An assembly job's status", {
    query: statusQuery,
    responses: { 200: z.object({ success: z.literal(true), job: z.looseObject({ status: z.string() }) }) },
  });
  router.get('/api/video/assemble', signedIn, async (ctx) => {
    const { jobId } = parseQuery(ctx, statusQuery);
    ctx.set('Cache-Control', 'no-store');
    const grant = await workspaceGrant(ctx, deps, 'read', { jobWorkspace: () => jobWorkspaceOf(jobLookup, 'assembly', jobId) });
    ctx.body = { success: true, job: await service.status(grant.workspaceId, jobId) };
  });

  doc('get', '/api/projects/:id/aesthetic', 'read', "The project's editing chat: history, preferences and editing config", { responses: { 200: chatState } });
  router.get('/api/projects/:id/aesthetic', requireAuth(deps), async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read', { projectId: ctx.params.id });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, error: null, ...(await chat.state(grant.workspaceId, ctx.params.id)) };
  });

  doc('post', '/api/projects/:id/aesthetic', 'assemble', "Send a message to the project's editing chat ('__SYNC_CLIPS__' and '__CLEAR_CONVERSATION__' are commands)", {
    body: chatBody,
    responses: { 200: chatState, 503: { description: 'The editing assistant is unavailable, or the database is', schema: errorBody } },
  });
  router.post('/api/projects/:id/aesthetic', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, chatBody);
    const selected = body.selected_clips === undefined || body.selected_clips === null ? null : body.selected_clips.map((c) => (typeof c === 'string' ? c : c.id));
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: ctx.params.id });
    ctx.body = {
      success: true,
      error: null,
      ...(await chat.post(grant.workspaceId, ctx.params.id, { message: body.message, selectedClipIds: selected, aspectRatio: body.aspect_ratio ?? null })),
    };
  });

  doc('put', '/api/projects/:id/aesthetic/clips', 'assemble', "Tell the project's editing chat the current clip selection (no message): its readiness and suggested order follow", {
    body: chatSelectionBody,
    responses: { 200: chatState },
  });
  router.put('/api/projects/:id/aesthetic/clips', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, chatSelectionBody);
    const selected = body.selected_clips.map((c) => (typeof c === 'string' ? c : c.id));
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: ctx.params.id });
    ctx.body = { success: true, error: null, ...(await chat.syncSelection(grant.workspaceId, ctx.params.id, { selectedClipIds: selected })) };
  });

  doc('put', '/api/projects/:id/aesthetic/music', 'assemble', "Choose the music of the project's assemblies (no message): a track of the workspace or none, its start offset, volume and fades", {
    body: chatMusicBody,
    responses: { 200: chatState, 404: { description: 'No such project, or no such track in the workspace (MUSIC_TRACK_NOT_FOUND)', schema: errorBody } },
  });
  router.put('/api/projects/:id/aesthetic/music', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, chatMusicBody);
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: ctx.params.id });
    const music =
      body.trackId === null
        ? null
        : normalizeMusicSetting({
            track_id: body.trackId,
            offset_seconds: body.offsetSeconds,
            volume: body.volume,
            fade_in_seconds: body.fadeInSeconds,
            fade_out_seconds: body.fadeOutSeconds,
          });
    if (body.trackId !== null && !music) throw new RequestError(404, 'Music track not found', 'MUSIC_TRACK_NOT_FOUND');
    ctx.body = { success: true, error: null, ...(await chat.setMusic(grant.workspaceId, ctx.params.id, music)) };
  });

  doc('put', '/api/projects/:id/aesthetic/brand', 'assemble', "Switch the brand kit's parts on or off for the project's assemblies (title card, brand captions, logo, end card) and set the title, logo placement and card lengths; what is left out stays as it was", {
    body: brandPartsBody,
    responses: { 200: chatState },
  });
  router.put('/api/projects/:id/aesthetic/brand', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, brandPartsBody);
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: ctx.params.id });
    const changes = {
      title_card: body.titleCard,
      ...(body.titleText !== undefined ? { title_text: body.titleText } : {}),
      title_style: body.titleStyle,
      title_seconds: body.titleSeconds,
      captions: body.captions,
      logo: body.logo,
      logo_corner: body.logoCorner,
      logo_size: body.logoSize,
      logo_opacity: body.logoOpacity,
      end_card: body.endCard,
      end_card_seconds: body.endCardSeconds,
    };
    ctx.body = { success: true, error: null, ...(await chat.setBrandParts(grant.workspaceId, ctx.params.id, changes)) };
  });

  doc('put', '/api/projects/:id/aesthetic/formats', 'assemble', "Choose the formats of the project's next assembly (no message): one or more of 9:16, 1:1, 4:5 and 16:9, or null for the platform's own; the chat reads and may change them", {
    body: chatFormatsBody,
    responses: { 200: chatState },
  });
  router.put('/api/projects/:id/aesthetic/formats', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, chatFormatsBody);
    const grant = await workspaceGrant(ctx, deps, 'assemble', { projectId: ctx.params.id });
    ctx.body = { success: true, error: null, ...(await chat.setFormats(grant.workspaceId, ctx.params.id, body.formats)) };
  });

  return router;
}
