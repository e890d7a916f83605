import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';
import { workspaceGrant } from '../workspace';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import {
  REVIEW_LINK_DEFAULT_DAYS,
  REVIEW_LINK_MAX_DAYS,
  REVIEW_LINK_MAX_ITEMS,
  REVIEW_LINK_MAX_RECIPIENTS,
  REVIEW_LINK_MESSAGE_MAX,
  REVIEW_LINK_MSG,
  REVIEW_LINK_PASSWORD_MAX,
  REVIEW_LINK_PASSWORD_MIN,
  REVIEW_LINK_TITLE_MAX,
  guestEmailProblem,
  type ReviewLinkView,
  type ShareableItemView,
} from '../../domain/reviewLinks';
import { personName } from '../../services/review/notifications';
import { ReviewLinkService } from '../../services/review/reviewLinks';

const days = z
  .number({ error: REVIEW_LINK_MSG.expiryInvalid })
  .int(REVIEW_LINK_MSG.expiryInvalid)
  .min(1, REVIEW_LINK_MSG.expiryInvalid)
  .max(REVIEW_LINK_MAX_DAYS, REVIEW_LINK_MSG.expiryInvalid);

const createBody = z
  .object({
    title: z.string({ error: REVIEW_LINK_MSG.titleRequired }).trim().min(1, REVIEW_LINK_MSG.titleRequired).max(REVIEW_LINK_TITLE_MAX, REVIEW_LINK_MSG.titleTooLong),
    message: z.string().max(REVIEW_LINK_MESSAGE_MAX, REVIEW_LINK_MSG.messageTooLong).optional().meta({ description: 'Shown to the guest above the items; plain text' }),
    itemIds: z
      .array(z.string())
      .max(REVIEW_LINK_MAX_ITEMS, REVIEW_LINK_MSG.itemsTooMany)
      .optional()
      .meta({ description: 'Pending items (their approval id) or approved items (the saved item\'s id) of the workspace: images, clips, videos' }),
    projectId: z.string().optional().meta({ description: "Share this project's whole queue (its items waiting for approval now) instead of chosen items" }),
    expiresInDays: days.optional().meta({ description: `Days the link works, 1 to ${REVIEW_LINK_MAX_DAYS}; ${REVIEW_LINK_DEFAULT_DAYS} when absent` }),
    password: z
      .string()
      .min(REVIEW_LINK_PASSWORD_MIN, REVIEW_LINK_MSG.passwordTooShort)
      .max(REVIEW_LINK_PASSWORD_MAX, REVIEW_LINK_MSG.passwordTooLong)
      .nullable()
      .optional()
      .meta({ description: 'Optional: the guest must enter it (stored as an scrypt hash)' }),
    canDecide: z.boolean().optional().meta({ description: 'Guests may also approve and request changes (default: comment only)' }),
    canDownload: z.boolean().optional().meta({ description: 'Guests may download items once approved (default: no)' }),
  })
  .strict()
  .refine((b) => Boolean(b.projectId) || (b.itemIds?.length ?? 0) > 0, REVIEW_LINK_MSG.itemsRequired);
const extendBody = z.object({ expiresInDays: days }).strict();
const emailBody = z
  .object({
    token: z.string().min(1).max(100).meta({ description: 'The link\'s token, as the answer that made it gave it (the server keeps only its hash)' }),
    to: z
      .array(z.string().refine((v) => guestEmailProblem(v) === null, REVIEW_LINK_MSG.recipientsInvalid))
      .min(1, REVIEW_LINK_MSG.recipientsInvalid)
      .max(REVIEW_LINK_MAX_RECIPIENTS, REVIEW_LINK_MSG.recipientsInvalid),
  })
  .strict();

const linkView = answers<ReviewLinkView>()(
  z
    .object({
      id: z.string(),
      title: z.string(),
      message: z.string(),
      state: z.enum(['active', 'expired', 'revoked']),
      expiresAt: z.string(),
      revokedAt: z.string().nullable(),
      createdAt: z.string(),
      createdBy: z.object({ userId: z.string().nullable(), name: z.string() }),
      hasPassword: z.boolean(),
      canDecide: z.boolean(),
      canDownload: z.boolean(),
      projectId: z.string().nullable(),
      items: z.array(z.object({ id: z.string(), name: z.string(), kind: z.string(), status: z.string() })),
      visits: z.array(z.object({ at: z.string(), guestName: z.string().nullable(), guestEmail: z.string().nullable() })).meta({ description: 'The last visits, newest first' }),
      visitCount: z.number().int(),
    })
    .meta({ id: 'ReviewLink' }),
);
const linkAnswer = z.object({ success: z.literal(true), link: linkView });
const notFound = { 404: { description: 'No such review link in the workspace, or the caller is not a member of it', schema: errorBody } };

/**
 * /api/review-links: a workspace's review links (issue 43 item 1, DESIGN.md "Client review (guest links)"). Reading
 * them is 'read' (every member sees what was shared and who came); making, e-mailing, extending and revoking one is
 * 'approve' (member and up): a link lets guests see pending items and, where it allows, decide on them.
 */
export function reviewLinksRouter(deps: AppDeps): Router {
  const service = new ReviewLinkService({ knex: deps.knex, publicUrl: deps.config.publicUrl, mail: deps.config, logger: deps.logger });
  const router = new Router();
  router.use(requireAuth(deps));
  const ofLink = (linkId: string) => ({ jobWorkspace: () => service.workspaceOf(linkId) });

  describeRoute(router, {
    method: 'get',
    path: '/api/review-links',
    tag: 'Review links',
    summary: "The workspace's review links, newest first, with their state and last visits",
    access: 'session',
    workspace: 'read',
    responses: { 200: z.object({ success: z.literal(true), links: z.array(linkView) }) },
  });
  router.get('/api/review-links', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, links: await service.list(grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/shareable-items',
    tag: 'Review links',
    summary: 'What a review link may hold: the items waiting for approval, and the newest approved ones',
    description: 'Each id is the item\'s approval id, which `POST /api/review-links` takes in `itemIds`.',
    access: 'session',
    workspace: 'read',
    responses: {
      200: z.object({
        success: z.literal(true),
        items: z.array(
          answers<ShareableItemView>()(
            z.object({
              id: z.string(),
              name: z.string(),
              kind: z.enum(['image', 'clip', 'assembly']),
              status: z.enum(['pending', 'approved']),
              projectId: z.string(),
              projectName: z.string().nullable(),
              createdAt: z.string(),
            }),
          ),
        ),
      }),
    },
  });
  router.get('/api/shareable-items', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, items: await service.shareable(grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/review-links',
    tag: 'Review links',
    summary: 'Make a review link for chosen items or a project\'s queue',
    description:
      'Answers the link\'s token and address once: only its sha256 is stored. Guests open it without an account and see watermarked previews only until an item is approved.',
    access: 'session',
    workspace: 'approve',
    body: createBody,
    responses: {
      201: z.object({ success: z.literal(true), link: linkView, token: z.string().meta({ description: '32 random bytes, base64url: shown this once' }), url: z.string() }),
      400: { description: 'A missing title, too long a text, an expiry outside 1 to 90 days, a short password, or items that are not the workspace\'s pending or approved items', schema: errorBody },
      ...notFound,
    },
  });
  router.post('/api/review-links', async (ctx) => {
    const body = parseBody(ctx, createBody);
    const grant = await workspaceGrant(ctx, deps, 'approve', { projectId: body.projectId ?? null });
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await service.create(grant, body)) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/review-links/:linkId',
    tag: 'Review links',
    summary: 'One review link, with its items and last visits',
    access: 'session',
    workspace: 'read',
    responses: { 200: linkAnswer, ...notFound },
  });
  router.get('/api/review-links/:linkId', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read', ofLink(ctx.params.linkId));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, link: await service.get(grant.workspaceId, ctx.params.linkId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/review-links/:linkId/extend',
    tag: 'Review links',
    summary: 'Make the link work for this many days from now (1 to 90)',
    access: 'session',
    workspace: 'approve',
    body: extendBody,
    responses: { 200: linkAnswer, ...notFound, 409: { description: 'The link is revoked', schema: errorBody } },
  });
  router.post('/api/review-links/:linkId/extend', async (ctx) => {
    const body = parseBody(ctx, extendBody);
    const grant = await workspaceGrant(ctx, deps, 'approve', ofLink(ctx.params.linkId));
    ctx.body = { success: true, link: await service.extend(grant.workspaceId, ctx.params.linkId, body.expiresInDays) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/review-links/:linkId/revoke',
    tag: 'Review links',
    summary: 'Turn the link off at once: its page answers 410 and its guest sessions end',
    access: 'session',
    workspace: 'approve',
    responses: { 200: linkAnswer, ...notFound },
  });
  router.post('/api/review-links/:linkId/revoke', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'approve', ofLink(ctx.params.linkId));
    ctx.body = { success: true, link: await service.revoke(grant.workspaceId, ctx.params.linkId, grant.userId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/review-links/:linkId/email',
    tag: 'Review links',
    summary: 'E-mail the link to one or more addresses (SMTP_URL)',
    access: 'session',
    workspace: 'approve',
    body: emailBody,
    responses: {
      200: z.object({ success: z.literal(true), sent: z.boolean().meta({ description: 'The mail server accepted the message' }) }),
      ...notFound,
      410: { description: 'The link is revoked or expired', schema: errorBody },
      503: { description: 'E-mail is not set up on this server (MAIL_UNAVAILABLE): copy the link instead', schema: errorBody },
    },
  });
  router.post('/api/review-links/:linkId/email', async (ctx) => {
    const body = parseBody(ctx, emailBody);
    const grant = await workspaceGrant(ctx, deps, 'approve', ofLink(ctx.params.linkId));
    ctx.body = { success: true, ...(await service.email(grant.workspaceId, ctx.params.linkId, { token: body.token, to: body.to, senderName: await personName(deps.knex, grant.userId) })) };
  });

  return router;
}
