import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps';
import { workspaceGrant } from '../workspace';
import { contentServicesFor } from '../../services/content/contentServices';
import { ResumableUploads, TUS_PATH } from '../../services/content/resumableUploads';
import { z } from 'zod';
import { describeRoute, errorBody, type ResponseDoc, type RouteDoc } from '../openapi/describe';
import { parseQuery, uuid } from '../validation';

const TUS_VERSION = '1.0.0';
const tusVersion = z.literal(TUS_VERSION).meta({ description: 'The tus protocol version' });
const creationHeaders = z.object({
  'tus-resumable': tusVersion,
  'upload-length': z.string().meta({ description: 'The file size in bytes (at most 150 MB)' }),
  'upload-metadata': z.string().optional().meta({ description: 'tus metadata: `filename`, `filetype` and `projectId`, each base64' }),
});
const patchHeaders = z.object({
  'tus-resumable': tusVersion,
  'upload-offset': z.string().meta({ description: 'Bytes the server has (HEAD tells)' }),
});
const tusOnly = z.object({ 'tus-resumable': tusVersion });
/** tus answers carry their facts in headers; refusals are short texts. */
const tusRefusals: Record<number, ResponseDoc> = {
  400: { description: 'A header or the metadata is refused (Upload-Length, projectId, filename ...)' },
  403: { description: "The user's role in the workspace does not allow uploads (a viewer): refused before any upload exists" },
  404: { description: 'No such upload (or project) in this workspace' },
  410: { description: 'The upload has completed or is no longer available' },
  412: { description: 'Tus-Resumable missing or not 1.0.0 (Tus-Version names the version this server speaks)' },
  503: { description: 'Storage or the database is unavailable' },
};
const tusDoc = (method: RouteDoc['method'], path: string, summary: string, rest: Partial<RouteDoc> & Pick<RouteDoc, 'responses'>): Omit<RouteDoc, 'omit'> & { omit: number[] } => ({
  method,
  path,
  summary,
  tag: 'Projects',
  access: 'session',
  // uploading is editing the workspace's library; an upload is resumed or cancelled by the members who may edit it
  workspace: 'edit',
  ...rest,
  responses: { ...tusRefusals, ...rest.responses },
  // tus refuses in plain text, not with the API's JSON error body
  omit: [400, 403, 404, 410, 413, 503],
});

const unfinishedQuery = z.object({ projectId: uuid.optional() }).strict();
const unfinishedUpload = z.object({
  id: z.string(),
  projectId: z.string(),
  projectName: z.string(),
  fileName: z.string(),
  size: z.number().int(),
  received: z.number().int().meta({ description: 'Bytes the server holds' }),
  startedAt: z.string(),
  expiresAt: z.string().meta({ description: 'After this the upload and its bytes are removed' }),
});

const perApp = new WeakMap<object, ResumableUploads>();

/** The projectId of a creation's Upload-Metadata, if it names one (the tus server refuses a malformed header itself). */
function metadataProjectId(header: string): string | undefined {
  // `key base64,key base64`
  for (const pair of header.split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (key === 'projectId' && value) return Buffer.from(value, 'base64').toString('utf8');
  }
  return undefined;
}

/** One tus server per app (its store, locks and sweep timer), shared by every router built from the same deps. */
export function resumableUploadsFor(deps: AppDeps): ResumableUploads {
  let uploads = perApp.get(deps);
  if (!uploads) {
    uploads = new ResumableUploads({ config: deps.config, knex: deps.knex, services: contentServicesFor(deps), logger: deps.logger });
    if (deps.background) {
      uploads.startSweeping();
      const opened = uploads;
      deps.background.onClose(() => opened.stopSweeping());
    }
    perApp.set(deps, uploads);
  }
  return uploads;
}

/**
 * /api/uploads/tus: the tus protocol (creation, HEAD for the offset, PATCH to append, DELETE to cancel) handled by
 * @tus/server on Node's request and response. The app-wide session guard has already required a session. GET is
 * not offered: a stored render is read through its file link.
 */
export function resumableUploadsRouter(deps: AppDeps): Router {
  // the tus store (a folder under STORAGE_DIR, or the S3 client) is opened on first use, not when the app is built:
  // building the app must not touch storage (the readiness check reports storage problems instead)
  const uploads = (): ResumableUploads => resumableUploadsFor(deps);
  // the hourly sweep of abandoned uploads also starts without a first upload, a minute after start-up
  if (deps.background) {
    const opening = setTimeout(() => {
      try {
        uploads();
      } catch (err) {
        deps.logger.warn({ err }, 'could not open the resumable upload store');
      }
    }, 60_000);
    opening.unref();
    deps.background.onClose(async () => clearTimeout(opening));
  }
  const router = new Router();
  const handle = async (ctx: Context) => {
    // the protocol's answer to a version it does not speak is 412 with the versions it does (@tus/server says 400)
    const version = ctx.get('tus-resumable');
    if (version && version !== TUS_VERSION) {
      ctx.status = 412;
      ctx.set('Tus-Resumable', TUS_VERSION);
      ctx.set('Tus-Version', TUS_VERSION);
      ctx.type = 'text/plain';
      ctx.body = `Tus-Resumable ${version.slice(0, 20)} is not supported: this server speaks ${TUS_VERSION}\n`;
      return;
    }
    const tus = uploads();
    // the workspace and the role are decided before the tus server sees the request, so a refused creation leaves
    // neither an upload slot (row) nor a file: a new upload names its project in Upload-Metadata, an existing one
    // is the project's it was created for
    const projectId = ctx.method === 'POST' ? metadataProjectId(ctx.get('upload-metadata')) : await tus.projectOf(String(ctx.params.id ?? ''));
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId });
    ctx.respond = false;
    await tus.handle(ctx.req, ctx.res, grant.workspaceId);
  };
  const item = `${TUS_PATH}/:id`;
  describeRoute(router, tusDoc('post', TUS_PATH, 'Start a resumable (tus) upload of a render into a project', {
    headers: creationHeaders,
    body: { contentType: 'application/offset+octet-stream', schema: z.string().meta({ format: 'binary' }), required: false, description: 'Optionally the first bytes (creation-with-upload)' },
    responses: {
      201: { description: 'Created: its address in Location' },
      413: { description: 'File too large: <n>MB. Maximum size is 150MB. Or the account\'s unfinished uploads would declare more than TUS_MAX_UNFINISHED_MB with this one (UNFINISHED_UPLOAD_BYTES)' },
      429: { description: 'The account already holds TUS_MAX_UNFINISHED_UPLOADS unfinished uploads (TOO_MANY_UNFINISHED_UPLOADS): finish or cancel one first' },
    },
  }));
  describeRoute(router, tusDoc('head', item, 'How many bytes of an upload the server has (Upload-Offset)', { headers: tusOnly, responses: { 200: { description: 'Upload-Offset and Upload-Length in headers' } } }));
  describeRoute(router, tusDoc('patch', item, 'Append bytes at Upload-Offset; the last ones store the render', {
    headers: patchHeaders,
    body: { contentType: 'application/offset+octet-stream', schema: z.string().meta({ format: 'binary' }) },
    responses: {
      204: { description: 'Appended: the new Upload-Offset in a header' },
      200: { description: 'The last bytes: the render is stored (the answer of POST /api/upload/renders)', contentType: 'application/json', schema: z.looseObject({ success: z.literal(true) }) },
      409: { description: 'Upload-Offset is not where the upload stands' },
      415: { description: 'Content-Type is not application/offset+octet-stream' },
    },
  }));
  describeRoute(router, tusDoc('delete', item, 'Cancel an unfinished upload', { headers: tusOnly, responses: { 204: { description: 'Cancelled' } } }));
  // no OPTIONS: the app's own pages are same-origin (no preflight), and the session guard lets OPTIONS through
  router.post(TUS_PATH, handle);
  for (const method of ['head', 'patch', 'delete'] as const) router[method](item, handle);

  describeRoute(router, {
    method: 'get',
    path: '/api/uploads/unfinished',
    tag: 'Projects',
    summary:
      "The workspace's unfinished resumable uploads (a closed tab or a reload mid-upload), or one project's with projectId: those that count towards TUS_MAX_UNFINISHED_UPLOADS. Resume one by picking the same file again in its project, cancel one with DELETE /api/uploads/tus/{id}",
    access: 'session',
    workspace: 'read',
    query: unfinishedQuery,
    responses: { 200: z.object({ success: z.literal(true), error: z.null(), uploads: z.array(unfinishedUpload) }), 404: { description: 'No such project in this workspace', schema: errorBody } },
  });
  router.get('/api/uploads/unfinished', async (ctx) => {
    const { projectId } = parseQuery(ctx, unfinishedQuery);
    const grant = await workspaceGrant(ctx, deps, 'read', { projectId });
    if (projectId) await contentServicesFor(deps).projects.findOwned(grant.workspaceId, projectId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, error: null, uploads: await uploads().unfinished(grant.workspaceId, projectId) };
  });
  return router;
}
