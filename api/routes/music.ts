import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { MUSIC_CODES, MUSIC_FORMATS, MUSIC_MAX_BYTES, MUSIC_MAX_SECONDS, MUSIC_MSG, MUSIC_NAME_MAX_LENGTH, type MusicFormat } from '../../domain/music';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import { addMusicTrack, deleteMusicTrack, listMusicTracks, renameMusicTrack } from '../../services/content/musicTracks';
import type { AppDeps } from '../deps';
import { describeRoute, errorBody, timestamp } from '../openapi/describe';
import { requireAuth } from '../middleware/auth';
import { parse, parseBody, parseQuery, RequestError } from '../validation';
import { workspaceGrant } from '../workspace';
import { createStorage } from '../../storage';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Music';

const workspaceParams = z.object({ id: z.string() });
const trackParams = z.object({ id: z.string(), trackId: z.string() });
const uploadQuery = z.object({
  name: z.string().max(1000).optional().meta({ description: "The track's name (the file's name: its audio extension is dropped); 'Untitled track' without one" }),
});
const renameBody = z.object({
  name: z
    .string({ error: MUSIC_MSG.nameRequired })
    .max(MUSIC_NAME_MAX_LENGTH * 2, { error: MUSIC_MSG.nameTooLong })
    .refine((v) => v.trim().length > 0, { error: MUSIC_MSG.nameRequired })
    .refine((v) => v.trim().length <= MUSIC_NAME_MAX_LENGTH, { error: MUSIC_MSG.nameTooLong }),
});
const trackView = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    format: z.enum(MUSIC_FORMATS as unknown as [MusicFormat, ...MusicFormat[]]),
    mime: z.string(),
    durationSeconds: z.number(),
    sizeBytes: z.number(),
    channels: z.number(),
    sampleRate: z.number(),
    url: z.string().meta({ description: 'A signed link to the stored file' }),
    createdAt: timestamp,
    createdBy: z.string().nullable(),
  })
  .meta({ id: 'MusicTrack' });
const trackAnswer = z.object({ success: z.literal(true), track: trackView });
const listAnswer = z.object({ success: z.literal(true), tracks: z.array(trackView) });
const notFound = { description: 'Not a member of the workspace, or no such track in it (MUSIC_TRACK_NOT_FOUND)', schema: errorBody };

function workspaceIdOf(ctx: Context): string {
  const { id } = parse(workspaceParams, { id: ctx.params.id });
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  return id.toLowerCase();
}

async function grantFor(ctx: Context, deps: AppDeps, action: Parameters<typeof workspaceGrant>[2]) {
  ctx.query = { ...ctx.query, workspaceId: workspaceIdOf(ctx) };
  return workspaceGrant(ctx, deps, action);
}

/**
 * The 413 for a body over the limit. The connection closes after the answer: a client still sending the rest of the
 * body (a browser streams it whatever the answer) leaves the socket unfit for another request.
 */
function tooLarge(ctx: Context): RequestError {
  ctx.set('Connection', 'close');
  ctx.req.resume();
  return new RequestError(413, MUSIC_MSG.tooLarge, MUSIC_CODES.tooLarge);
}

/**
 * Streams the request body into `file`, at most `max` bytes: 413 as soon as it is longer (the rest of the body is
 * drained, the connection kept for the answer). Answers the byte count.
 */
async function saveLimitedBody(ctx: Context, file: string, max: number): Promise<number> {
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > max) throw tooLarge(ctx);
  let size = 0;
  const out = createWriteStream(file);
  try {
    for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw tooLarge(ctx);
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await finished(out).catch(() => undefined);
  }
  return size;
}

/**
 * /api/workspaces/:id/music: the workspace's music tracks (issue 44 item 3). Every member lists and plays them;
 * members and above add, rename and delete them (the `edit` action). A track is the raw request body, accepted by
 * what ffprobe finds in it, never by its name.
 */
export function musicRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const storage = createStorage(deps.config);

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/music',
    tag: TAG,
    summary: "The workspace's music tracks, newest first, each with a signed link to play it",
    access: 'session',
    workspace: 'read',
    params: workspaceParams,
    responses: { 200: listAnswer, 404: notFound },
  });
  router.get('/api/workspaces/:id/music', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, tracks: await listMusicTracks(deps.knex, storage, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/music',
    tag: TAG,
    summary: 'Add a music track: the audio file is the request body (members and above)',
    description:
      `MP3, WAV, M4A (AAC or ALAC), AAC or FLAC, told by probing the content with ffprobe and decoding it: at most ${MUSIC_MAX_BYTES} bytes ` +
      `(413 MUSIC_TOO_LARGE) and ${MUSIC_MAX_SECONDS / 60} minutes (400 MUSIC_TOO_LONG). A file that is not readable audio is 400 MUSIC_NOT_AUDIO, ` +
      'other audio 400 MUSIC_UNSUPPORTED_FORMAT, an empty body 400 MUSIC_EMPTY. Nothing is stored on a refusal.',
    access: 'session',
    workspace: 'edit',
    params: workspaceParams,
    query: uploadQuery,
    body: { contentType: 'application/octet-stream', schema: z.string().meta({ format: 'binary' }) },
    responses: { 201: trackAnswer, 404: notFound, 413: { description: 'The file is larger than 20 MB (MUSIC_TOO_LARGE)', schema: errorBody } },
  });
  router.post('/api/workspaces/:id/music', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'edit');
    const { name } = parseQuery(ctx, uploadQuery);
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'music-upload-'));
    try {
      const file = path.join(scratch, 'track');
      const sizeBytes = await saveLimitedBody(ctx, file, MUSIC_MAX_BYTES);
      const track = await addMusicTrack(deps.knex, storage, { workspaceId: grant.workspaceId, userId: grant.userId, localPath: file, sizeBytes, name });
      ctx.status = 201;
      ctx.body = { success: true, track };
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/workspaces/:id/music/:trackId',
    tag: TAG,
    summary: 'Rename a music track (members and above)',
    access: 'session',
    workspace: 'edit',
    params: trackParams,
    body: renameBody,
    responses: { 200: trackAnswer, 404: notFound },
  });
  router.patch('/api/workspaces/:id/music/:trackId', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'edit');
    const { name } = parseBody(ctx, renameBody);
    ctx.body = { success: true, track: await renameMusicTrack(deps.knex, storage, { workspaceId: grant.workspaceId, trackId: String(ctx.params.trackId), name }) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/music/:trackId',
    tag: TAG,
    summary: 'Delete a music track and its file (members and above); projects that chose it go back to no music',
    access: 'session',
    workspace: 'edit',
    params: trackParams,
    responses: {
      200: z.object({ success: z.literal(true) }),
      404: notFound,
      409: { description: 'An assembly that plays the track is still rendering (MUSIC_TRACK_IN_USE)', schema: errorBody },
    },
  });
  router.delete('/api/workspaces/:id/music/:trackId', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'edit');
    await deleteMusicTrack(deps.knex, storage, { workspaceId: grant.workspaceId, trackId: String(ctx.params.trackId) });
    ctx.body = { success: true };
  });

  return router;
}
