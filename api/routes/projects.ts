import Router from '@koa/router';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { parse, parseBody, parseQuery, singleLine } from '../validation';
import { contentServicesFor } from '../../services/contentServices';
import { CONTENT_SOURCES } from '../../services/contentViews';

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
const contentQuery = z.object({ refresh: z.string().optional(), bust: z.string().optional() });
const renameBody = z.object({ name: singleLine(z.string({ error: 'Name cannot be empty' }), 'Name') });
const contentSource = z.enum(CONTENT_SOURCES, { error: 'Unknown content type' });

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

/** Projects (list, create, rename, delete, bulk delete) and their content library. */
export function projectsRouter(deps: AppDeps): Router {
  const { projects, library } = contentServicesFor(deps);
  const router = new Router();
  router.use(requireAuth(deps));

  router.get('/api/projects/list', async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, listQuery).userId);
    ctx.body = { success: true, projects: await projects.list(user.id) };
  });

  router.post('/api/projects', async (ctx) => {
    const body = parseBody(ctx, createBody);
    const user = assertSelf(ctx, body.userId);
    ctx.status = 201;
    ctx.body = { success: true, project: await projects.create(user.id, body) };
  });

  router.post('/api/projects/bulk-delete', async (ctx) => {
    const { ids } = parseBody(ctx, bulkDeleteBody);
    const deleted = await projects.remove(currentUser(ctx).id, ids);
    ids.forEach((id) => library.invalidate(id));
    ctx.body = { success: true, deleted };
  });

  router.get('/api/projects/:id', async (ctx) => {
    ctx.body = { success: true, project: await projects.get(currentUser(ctx).id, ctx.params.id) };
  });

  router.patch('/api/projects/:id', async (ctx) => {
    ctx.body = { success: true, project: await projects.update(currentUser(ctx).id, ctx.params.id, parseBody(ctx, updateBody)) };
  });

  router.delete('/api/projects/:id', async (ctx) => {
    await projects.remove(currentUser(ctx).id, [ctx.params.id]);
    library.invalidate(ctx.params.id);
    ctx.body = { success: true };
  });

  router.get('/api/projects/:id/content', async (ctx) => {
    const { refresh, bust } = parseQuery(ctx, contentQuery);
    const body = await library.listingJson(currentUser(ctx).id, ctx.params.id, refresh !== undefined || bust !== undefined);
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

  router.delete('/api/projects/:id/compiled-videos/:videoId', async (ctx) => {
    await library.remove(currentUser(ctx).id, ctx.params.id, 'compiled_videos', ctx.params.videoId);
    ctx.body = { success: true };
  });

  router.delete('/api/projects/:id/content/:source/:itemId', async (ctx) => {
    const source = parse(contentSource, ctx.params.source);
    await library.remove(currentUser(ctx).id, ctx.params.id, source, ctx.params.itemId);
    ctx.body = { success: true };
  });

  router.patch('/api/projects/:id/content/:source/:itemId', async (ctx) => {
    const source = parse(contentSource, ctx.params.source);
    const { name } = parseBody(ctx, renameBody);
    ctx.body = { success: true, item: await library.rename(currentUser(ctx).id, ctx.params.id, source, ctx.params.itemId, name) };
  });

  return router;
}
