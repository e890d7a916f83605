import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import {
  BRAND_CALL_TO_ACTION_MAX_LENGTH,
  BRAND_CONTACT_MAX_LENGTH,
  BRAND_FONT_FAMILIES,
  BRAND_KIT_CODES,
  BRAND_KIT_MSG,
  BRAND_LOGO_MAX_BYTES,
  cleanBrandLine,
  isBrandFont,
  type BrandFont,
} from '../../domain/brandKit';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import { getBrandKit, removeBrandLogo, replaceBrandLogo, saveBrandKit } from '../../services/workspaces/brandKit';
import type { AppDeps } from '../deps';
import { describeRoute, errorBody } from '../openapi/describe';
import { requireAuth } from '../middleware/auth';
import { parse, parseBody, RequestError } from '../validation';
import { workspaceGrant } from '../workspace';
import { createStorage } from '../../storage';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Brand kit';

const workspaceParams = z.object({ id: z.string() });
const color = z.string({ error: BRAND_KIT_MSG.colorInvalid }).regex(/^#[0-9A-Fa-f]{6}$/, { error: BRAND_KIT_MSG.colorInvalid });
const line = (max: number, message: string) =>
  z
    .string()
    .max(max * 2, { error: message })
    .transform(cleanBrandLine)
    .refine((v) => v.length <= max, { error: message });
const brandKitBody = z.object({
  primaryColor: color,
  secondaryColor: color,
  font: z
    .string({ error: BRAND_KIT_MSG.fontRequired })
    .refine((v): v is BrandFont => isBrandFont(v), { error: BRAND_KIT_MSG.fontRequired })
    .meta({ enum: [...BRAND_FONT_FAMILIES] }),
  contact: z.object({
    company: line(BRAND_CONTACT_MAX_LENGTH, BRAND_KIT_MSG.contactTooLong).default(''),
    phone: line(BRAND_CONTACT_MAX_LENGTH, BRAND_KIT_MSG.contactTooLong).default(''),
    website: line(BRAND_CONTACT_MAX_LENGTH, BRAND_KIT_MSG.contactTooLong).default(''),
  }),
  callToAction: line(BRAND_CALL_TO_ACTION_MAX_LENGTH, `The call to action is at most ${BRAND_CALL_TO_ACTION_MAX_LENGTH} characters`).default(''),
});
const brandKitView = z
  .object({
    workspaceId: z.string(),
    primaryColor: z.string(),
    secondaryColor: z.string(),
    font: z.enum(BRAND_FONT_FAMILIES as [BrandFont, ...BrandFont[]]),
    contact: z.object({ company: z.string(), phone: z.string(), website: z.string() }),
    callToAction: z.string(),
    logoUrl: z.string().nullable(),
    logoWidth: z.number().nullable(),
    logoHeight: z.number().nullable(),
    updatedAt: z.string().nullable(),
    updatedBy: z.string().nullable(),
  })
  .meta({ id: 'BrandKit' });
const answer = z.object({ success: z.literal(true), brandKit: brandKitView });
const notFound = { description: 'Not a member of the workspace (or no such workspace)', schema: errorBody };

function workspaceIdOf(ctx: Context): string {
  const { id } = parse(workspaceParams, ctx.params);
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  return id.toLowerCase();
}

async function grantFor(ctx: Context, deps: AppDeps, action: Parameters<typeof workspaceGrant>[2]) {
  ctx.query = { ...ctx.query, workspaceId: workspaceIdOf(ctx) };
  return workspaceGrant(ctx, deps, action);
}

/** The request body, at most `max` bytes: 413 as soon as it is longer (the rest is drained, nothing kept). */
async function readLimitedBody(ctx: Context, max: number): Promise<Buffer> {
  const tooLarge = () => new RequestError(413, BRAND_KIT_MSG.logoTooLarge, BRAND_KIT_CODES.logoTooLarge);
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    ctx.req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      ctx.req.resume();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * /api/workspaces/:id/brand-kit: the workspace's brand kit (issue 44). Every member reads it; admins and owners
 * change it (the `brand` action, never with an access token). The logo is the raw request body.
 */
export function brandKitRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const storage = createStorage(deps.config);

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/brand-kit',
    tag: TAG,
    summary: "The workspace's brand kit (the default kit when none was saved)",
    access: 'session',
    workspace: 'read',
    params: workspaceParams,
    responses: { 200: answer, 404: notFound },
  });
  router.get('/api/workspaces/:id/brand-kit', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, brandKit: await getBrandKit(deps.knex, storage, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/brand-kit',
    tag: TAG,
    summary: "Save the brand kit's colours, font, contact lines and call to action (owners and admins)",
    description: `Colours as #RRGGBB; the font one of ${BRAND_FONT_FAMILIES.join(', ')}. New assemblies use the kit.`,
    access: 'session',
    workspace: 'brand',
    params: workspaceParams,
    body: brandKitBody,
    responses: { 200: answer, 404: notFound },
  });
  router.put('/api/workspaces/:id/brand-kit', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'brand');
    const fields = parseBody(ctx, brandKitBody);
    ctx.body = { success: true, brandKit: await saveBrandKit(deps.knex, storage, { workspaceId: grant.workspaceId, userId: grant.userId, fields }) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/brand-kit/logo',
    tag: TAG,
    summary: 'Replace the logo: the file is the request body (owners and admins)',
    description:
      'PNG, JPEG, WebP or SVG, told by the content; stored as a PNG (transparency kept) that fits 1024x1024. An SVG with scripts, event handlers, ' +
      'foreignObject or references to other files is refused (400 BRAND_LOGO_UNSAFE_SVG); anything else unreadable is 400 BRAND_LOGO_INVALID; ' +
      `more than ${BRAND_LOGO_MAX_BYTES} bytes is 413 BRAND_LOGO_TOO_LARGE. Nothing is stored on a refusal.`,
    access: 'session',
    workspace: 'brand',
    params: workspaceParams,
    body: { contentType: 'application/octet-stream', schema: z.string().meta({ format: 'binary' }) },
    responses: { 200: answer, 404: notFound, 413: { description: 'The logo is larger than 5 MB (BRAND_LOGO_TOO_LARGE)', schema: errorBody } },
  });
  router.put('/api/workspaces/:id/brand-kit/logo', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'brand');
    const file = await readLimitedBody(ctx, BRAND_LOGO_MAX_BYTES);
    ctx.body = { success: true, brandKit: await replaceBrandLogo(deps.knex, storage, { workspaceId: grant.workspaceId, userId: grant.userId, file }) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/brand-kit/logo',
    tag: TAG,
    summary: 'Remove the logo (owners and admins)',
    access: 'session',
    workspace: 'brand',
    params: workspaceParams,
    responses: { 200: answer, 404: notFound },
  });
  router.delete('/api/workspaces/:id/brand-kit/logo', auth, async (ctx) => {
    const grant = await grantFor(ctx, deps, 'brand');
    ctx.body = { success: true, brandKit: await removeBrandLogo(deps.knex, storage, { workspaceId: grant.workspaceId, userId: grant.userId }) };
  });

  return router;
}
