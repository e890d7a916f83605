import Router from '@koa/router';
import type { AppDeps } from '../deps';
import { requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
import { RequestError } from '../validation';
import { temporalRunUrl } from '../../domain/jobs';
import { contentServicesFor } from '../../services/content/contentServices';
import { getLineage, LineageItemNotFoundError, type Lineage } from '../../services/content/lineage';
import { z } from 'zod';
import { CompareItemNotFoundError, compareVersions, type CompareVersions } from '../../services/review/compareVersions';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { itemHistory } from '../../services/review/itemHistory';
import { ITEM_HISTORY_KINDS, type ItemHistoryEntry } from '../../domain/itemHistory';

const lineageKind = z.enum(['render', 'image', 'clip', 'compiled_video', 'generated', 'draft_image']);
const lineageItem = z.object({
  kind: lineageKind,
  id: z.string(),
  exists: z.boolean(),
  name: z.string().nullable(),
  project_id: z.string().nullable(),
  created_at: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  workflow_id: z.string().nullable(),
  temporal_url: z.string().nullable().optional(),
});
const lineageNode = lineageItem.extend({ depth: z.number().int(), via: z.object({ kind: lineageKind, id: z.string() }), position: z.number() });
const draftVersion = z.object({
  index: z.number().int(),
  url: z.string(),
  created_at: z.string(),
  source: z.string(),
  model_id: z.string().nullable(),
  predecessor: z.number().int().nullable(),
  workflow_id: z.string().nullable(),
  temporal_url: z.string().nullable().optional(),
});
const lineageAnswer = answers<{ success: true } & Lineage>()(
  z.object({ success: z.literal(true), item: lineageItem, ancestors: z.array(lineageNode), descendants: z.array(lineageNode), versions: z.array(draftVersion).optional() }),
);

/** GET /api/content/:id/lineage: the version chain around one of the workspace's items (up to its sources, down to what was made from it). */
export function lineageRouter(deps: AppDeps): Router {
  const { storage } = contentServicesFor(deps);
  const router = new Router();
  describeRoute(router, {
    method: 'get',
    path: '/api/content/:id/lineage',
    tag: 'Projects',
    summary: "The version chain around one of the workspace's items: its sources up, what was made from it down (a draft image also lists its versions)",
    description: "An assembly's compiled video waiting for approval is not found (nor listed in another item's chain) until it is approved: pay on approval, nothing made from its original leaves the server before.",
    access: 'session',
    workspace: 'read',
    responses: { 200: lineageAnswer, 404: { description: 'Content not found (or not approved yet)', schema: errorBody } },
  });
  router.get('/api/content/:id/lineage', requireAuth(deps), async (ctx) => {
    // the item names no project: the request's workspace (X-Workspace-Id, else the personal one) is searched
    const grant = await workspaceGrant(ctx, deps, 'read');
    const admin = grant.user.role === 'admin';
    try {
      const lineage = await getLineage(deps.knex, storage, grant.workspaceId, ctx.params.id, {
        temporalRunUrl: admin ? (workflowId) => temporalRunUrl(deps.config.temporalUiUrl, deps.config.temporalNamespace, workflowId) : undefined,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { success: true, ...lineage };
    } catch (err) {
      if (err instanceof LineageItemNotFoundError) throw new RequestError(404, err.message, err.code);
      throw err;
    }
  });

  const compareMedia = z.object({
    kind: z.string().meta({ description: 'render, image, clip, compiled_video or generated; approval for an item still pending' }),
    id: z.string(),
    name: z.string(),
    media: z.enum(['image', 'video']),
    url: z.string().nullable(),
    created_at: z.string().nullable(),
  });
  const compareAnswer = answers<{ success: true } & CompareVersions>()(
    z.object({
      success: z.literal(true),
      item: compareMedia,
      versions: z.array(compareMedia.extend({ relation: z.enum(['source', 'earlier']), depth: z.number().int() })),
    }),
  );
  describeRoute(router, {
    method: 'get',
    path: '/api/content/:id/compare',
    tag: 'Projects',
    summary: 'What an item can be compared with: the render it started from and each earlier version of its chain, with pictures to compare',
    description: "The id may be a pending item's (its watermarked preview; its source from what its generation recorded) or a saved item's or render's.",
    access: 'session',
    workspace: 'read',
    responses: { 200: compareAnswer, 404: { description: 'Content not found', schema: errorBody } },
  });
  router.get('/api/content/:id/compare', requireAuth(deps), async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    try {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { success: true, ...(await compareVersions(deps.knex, storage, grant.workspaceId, ctx.params.id)) };
    } catch (err) {
      if (err instanceof CompareItemNotFoundError) throw new RequestError(404, err.message, err.code);
      throw err;
    }
  });
  const historyAnswer = answers<{ success: true; history: ItemHistoryEntry[] }>()(
    z.object({
      success: z.literal(true),
      history: z.array(
        z.object({
          kind: z.enum(ITEM_HISTORY_KINDS),
          at: z.string(),
          by: z.object({ user_id: z.string(), name: z.string() }).nullable(),
          text: z.string().optional(),
          version: z.number().int().optional().meta({ description: 'The version of the item it happened to, once the item has several (request changes)' }),
        }),
      ),
    }),
  );
  describeRoute(router, {
    method: 'get',
    path: '/api/content/:id/history',
    tag: 'Projects',
    summary: "Who did what to an item, oldest first: generated by, each approval, the rejection or saving (or expiry), each comment, reply and resolved thread",
    description: "The id may be a pending item's (its approval id) or a saved item's or render's.",
    access: 'session',
    workspace: 'read',
    responses: { 200: historyAnswer, 404: { description: 'Content not found', schema: errorBody } },
  });
  router.get('/api/content/:id/history', requireAuth(deps), async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, history: await itemHistory(deps.knex, grant.workspaceId, ctx.params.id) };
  });
  return router;
}
