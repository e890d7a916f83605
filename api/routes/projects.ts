import Router from '@koa/router';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
import { parse, parseBody, parseQuery, singleLine } from '../validation';
import { contentServicesFor } from '../../services/content/contentServices';
import { CONTENT_SOURCES, type ContentItem } from '../../services/content/contentViews';
import type { ProjectView } from '../../domain/projects';
import { LIBRARY_PAGE_DEFAULT, LIBRARY_PAGE_MAX } from '../../domain/constants';
import { decodeContentCursor } from '../../services/content/contentCursor';
import { answers, describeRoute, errorBody, okBody } from '../openapi/describe';

const listQuery = z.object({ userId: z.string().optional() });
const projectName = singleLine(z.string({ error: 'Project name is required' }), 'Project name');
const projectAddress = singleLine(z.string(), 'Address');
const createBody = z.object({
  name: projectName,
  address: projectAddress.nullable().optional(),
  userId: z.string().optional(),
});
const updateBody = z.object({ name: projectName.optional(), address: projectAddress.nullable().optional() });
const bulkDeleteBody = z.object({ ids: z.array(z.string()).min(1, 'Select at least one project').max(500) });
const pageLimitMessage = `limit must be a whole number from 1 to ${LIBRARY_PAGE_MAX}`;
const contentQuery = z.object({
  refresh: z.string().optional(),
  bust: z.string().optional(),
  limit: z
    .string({ error: pageLimitMessage })
    .regex(/^\d{1,3}$/, { message: pageLimitMessage })
    .transform(Number)
    .refine((n) => n >= 1 && n <= LIBRARY_PAGE_MAX, { message: pageLimitMessage })
    .optional()
    .meta({ description: `Page size (1 to ${LIBRARY_PAGE_MAX}, default ${LIBRARY_PAGE_DEFAULT}); asks for the paged answer` }),
  cursor: z
    .string({ error: 'cursor must be the nextCursor of the previous page' })
    .transform((text, ctx) => {
      const key = decodeContentCursor(text);
      if (!key) {
        ctx.addIssue({ code: 'custom', message: 'cursor must be the nextCursor of the previous page' });
        return z.NEVER;
      }
      return key;
    })
    .optional()
    .meta({ description: 'The nextCursor of the previous page; asks for the paged answer' }),
});
const renameBody = z.object({ name: singleLine(z.string({ error: 'Name cannot be empty' }), 'Name') });
const contentSource = z.enum(CONTENT_SOURCES, { error: 'Unknown content type' });
const contentItemParams = z.object({ id: z.string(), source: contentSource, itemId: z.string() });

export const projectView = answers<ProjectView>()(
  z
    .object({
      id: z.string(),
      user_id: z.string(),
      name: z.string(),
      address: z.string().nullable(),
      created_at: z.string(),
      updated_at: z.string(),
      thumbnail: z.string().nullable().meta({ description: "A signed link to the oldest render's thumbnail (or preview, or the original while it is at most 4 MB)" }),
    })
    .meta({ id: 'Project' }),
);
export const contentItem = answers<ContentItem>()(
  z
    .object({
      type: z.enum(['render', 'clip', 'compiled_video', 'ai_image', 'generated_image']),
      source: contentSource,
      data: z.looseObject({
        id: z.string(),
        project_id: z.string(),
        name: z.string(),
        file_url: z.string(),
        file_name: z.string(),
        created_at: z.string(),
        thumbnail_url: z.string().nullable(),
        preview_url: z.string().nullable().meta({
          description: "A signed link to a render's preview (at most 2048 px each way, WebP): what the item dialog shows. Null for other items and until it is made; signed_url stays the original",
        }),
        aspect_ratio: z.string().nullable(),
      }),
      signed_url: z.string().nullable(),
    })
    .meta({ id: 'ContentItem' }),
);
const contentListing = z.object({ success: z.literal(true), error: z.null(), content: z.array(contentItem) });
const contentPage = z.object({
  success: z.literal(true),
  error: z.null(),
  content: z.array(contentItem),
  nextCursor: z.string().nullable().meta({ description: 'Pass back as cursor for the next page; null on the last page' }),
});
const projectAnswer = z.object({ success: z.literal(true), project: projectView });
const noProject = { description: 'No such project in this workspace (or not a member of its workspace)', schema: errorBody };

const gzipAsync = promisify(gzip);
/** A listing reused from the library's cache is compressed once (keyed by the very buffer), not per request. */
const gzipped = new WeakMap<Buffer, Promise<Buffer>>();

function gzipOnce(body: Buffer): Promise<Buffer> {
  let compressed = gzipped.get(body);
  if (!compressed) {
    compressed = gzipAsync(body, { level: 6 });
    gzipped.set(body, compressed);
  }
  return compressed;
}

/**
 * Projects (list, create, rename, delete, bulk delete) and their content library, in a workspace (DESIGN.md "Teams
 * (workspaces)"): every route asks api/workspace.ts for its grant first; the services are scoped to the workspace
 * (the account that owns the rows), so a project of a workspace the user is not a member of is not found.
 */
export function projectsRouter(deps: AppDeps): Router {
  const { projects, library } = contentServicesFor(deps);
  const router = new Router();
  router.use(requireAuth(deps));

  describeRoute(router, {
    method: 'get',
    path: '/api/projects/list',
    tag: 'Projects',
    summary: "The workspace's projects (the request's workspace: workspaceId, X-Workspace-Id, else the personal one), newest first, with a thumbnail link",
    access: 'session',
    workspace: 'read',
    query: listQuery,
    responses: { 200: z.object({ success: z.literal(true), projects: z.array(projectView) }) },
  });
  router.get('/api/projects/list', async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, listQuery).userId);
    // the projects of the request's workspace (parameter, header, else the personal one)
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, projects: await projects.list(grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/projects',
    tag: 'Projects',
    summary: 'Create a project',
    access: 'session',
    workspace: 'edit',
    body: createBody,
    responses: { 201: projectAnswer },
  });
  router.post('/api/projects', async (ctx) => {
    const body = parseBody(ctx, createBody);
    assertSelf(ctx, body.userId);
    // created in the request's workspace: its workspace_id is the workspace (the account), not the member who made it
    const grant = await workspaceGrant(ctx, deps, 'edit');
    ctx.status = 201;
    ctx.body = { success: true, project: await projects.create(grant.workspaceId, body) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/projects/bulk-delete',
    tag: 'Projects',
    summary: 'Delete several projects with their content and files',
    access: 'session',
    workspace: 'edit',
    body: bulkDeleteBody,
    responses: { 200: z.object({ success: z.literal(true), deleted: z.number().int() }), 404: noProject },
  });
  router.post('/api/projects/bulk-delete', async (ctx) => {
    const { ids } = parseBody(ctx, bulkDeleteBody);
    // the first project names the workspace; every other one must be of the same workspace (else 404, nothing deleted)
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ids[0] });
    const deleted = await projects.remove(grant.workspaceId, ids, { actorId: grant.userId });
    ids.forEach((id) => library.invalidate(id));
    ctx.body = { success: true, deleted };
  });

  describeRoute(router, { method: 'get', path: '/api/projects/:id', tag: 'Projects', summary: 'One project', access: 'session', workspace: 'read', responses: { 200: projectAnswer } });
  router.get('/api/projects/:id', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read', { projectId: ctx.params.id });
    ctx.body = { success: true, project: await projects.get(grant.workspaceId, ctx.params.id) };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/projects/:id',
    tag: 'Projects',
    summary: 'Rename a project or change its address',
    access: 'session',
    workspace: 'edit',
    body: updateBody,
    responses: { 200: projectAnswer },
  });
  router.patch('/api/projects/:id', async (ctx) => {
    const changes = parseBody(ctx, updateBody);
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ctx.params.id });
    ctx.body = { success: true, project: await projects.update(grant.workspaceId, ctx.params.id, changes) };
  });

  describeRoute(router, { method: 'delete', path: '/api/projects/:id', tag: 'Projects', summary: 'Delete a project with its content and files', access: 'session', workspace: 'edit', responses: { 200: okBody } });
  router.delete('/api/projects/:id', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ctx.params.id });
    await projects.remove(grant.workspaceId, [ctx.params.id], { actorId: grant.userId });
    library.invalidate(ctx.params.id);
    ctx.body = { success: true };
  });

  // The paged listing is a query form of this same call rather than a sibling route: spec 001 section 7 lists the
  // content library as the one call GET /api/projects/{id}/content with optional query (refresh=1, bust=), so limit and
  // cursor join them. Without limit or cursor the answer is exactly the whole listing the specs describe.
  describeRoute(router, {
    method: 'get',
    path: '/api/projects/:id/content',
    tag: 'Projects',
    summary: "The project's renders, images, clips and videos with signed links (refresh=1 or bust= reloads)",
    description:
      'Without limit or cursor: the whole listing, the 1000 newest items (500 newest per table), newest first. ' +
      'With limit and/or cursor: one page of the same order, `{ success, content, nextCursor }`; pass nextCursor back as cursor ' +
      'for the next page until it is null. Pages are keyset-paged (items added or deleted meanwhile neither repeat nor skip ' +
      'the others) and reach every item, past the whole listing\'s 1000-item cut.',
    access: 'session',
    workspace: 'read',
    query: contentQuery,
    responses: {
      200: {
        description: 'The whole listing, or one page when limit or cursor is given',
        schema: z.union([contentListing, contentPage]),
      },
    },
  });
  router.get('/api/projects/:id/content', async (ctx) => {
    const { refresh, bust, limit, cursor } = parseQuery(ctx, contentQuery);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read', { projectId: ctx.params.id });
    const fresh = refresh !== undefined || bust !== undefined;
    const body =
      limit === undefined && cursor === undefined
        ? await library.listingJson(workspaceId, ctx.params.id, fresh)
        : await library.pageJson(workspaceId, ctx.params.id, { limit: limit ?? LIBRARY_PAGE_DEFAULT, after: cursor ?? null, fresh });
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Accept-Encoding');
    // a 1000-item listing is about 800 KB of JSON and a tenth of that compressed
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = await gzipOnce(body);
    } else {
      ctx.body = body;
    }
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/projects/:id/compiled-videos/:videoId',
    tag: 'Projects',
    summary: 'Delete an assembled video of the project',
    access: 'session',
    workspace: 'edit',
    responses: { 200: okBody },
  });
  router.delete('/api/projects/:id/compiled-videos/:videoId', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ctx.params.id });
    await library.remove(grant.workspaceId, ctx.params.id, 'compiled_videos', ctx.params.videoId);
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/projects/:id/content/:source/:itemId',
    tag: 'Projects',
    summary: 'Delete one content item (render, image, clip, video) and its files',
    access: 'session',
    workspace: 'edit',
    params: contentItemParams,
    responses: { 200: okBody },
  });
  router.delete('/api/projects/:id/content/:source/:itemId', async (ctx) => {
    const { source } = parse(contentItemParams, ctx.params);
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ctx.params.id });
    await library.remove(grant.workspaceId, ctx.params.id, source, ctx.params.itemId);
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/projects/:id/content/:source/:itemId',
    tag: 'Projects',
    summary: 'Rename one content item',
    access: 'session',
    workspace: 'edit',
    params: contentItemParams,
    body: renameBody,
    responses: { 200: z.object({ success: z.literal(true), item: contentItem }) },
  });
  router.patch('/api/projects/:id/content/:source/:itemId', async (ctx) => {
    const { source } = parse(contentItemParams, ctx.params);
    const { name } = parseBody(ctx, renameBody);
    const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: ctx.params.id });
    ctx.body = { success: true, item: await library.rename(grant.workspaceId, ctx.params.id, source, ctx.params.itemId, name) };
  });

  return router;
}
