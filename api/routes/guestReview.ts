import fs from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { sessionCookiePolicy } from '../middleware/auth';
import { parseBody } from '../validation';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { commentPinBody } from './comments';
import { changeRequestServices } from './changeRequests';
import { COMMENT_ITEM_KINDS, COMMENT_MAX_CHARS, COMMENT_MSG } from '../../domain/comments';
import { CHANGE_REQUEST_MSG } from '../../domain/changeRequests';
import { GUEST_NAME_MAX, REVIEW_LINK_MSG, type GuestReviewView } from '../../domain/reviewLinks';
import { contentServicesFor } from '../../services/content/contentServices';
import { sendNotificationMail } from '../../services/review/notificationMail';
import { GuestReviewService, checkedGuest } from '../../services/review/guestReview';
import { GuestSessionService, guestCookieName, type GuestLimits, type GuestSession } from '../../services/review/guestSessions';

const guestBody = z
  .object({
    name: z.string().max(GUEST_NAME_MAX * 4).meta({ description: `The guest's name, at most ${GUEST_NAME_MAX} characters` }),
    email: z.string().max(254),
  })
  .strict()
  .meta({ description: 'Who the guest is, as they said once on the page (kept in their browser for this link)' });
const text = z
  .string({ error: COMMENT_MSG.bodyRequired })
  .trim()
  .min(1, COMMENT_MSG.bodyRequired)
  .refine((s) => [...s].length <= COMMENT_MAX_CHARS, COMMENT_MSG.bodyTooLong)
  .meta({ description: `Plain text, at most ${COMMENT_MAX_CHARS} characters; never read as HTML` });
const sessionBody = z
  .object({
    token: z.string().min(1).max(200).meta({ description: 'The token of the link (the last part of its address)' }),
    password: z.string().max(200).nullable().optional(),
  })
  .strict();
const commentBody = z.object({ guest: guestBody, body: text, pin: commentPinBody.nullable().optional() }).strict();
const replyBody = z.object({ guest: guestBody, body: text }).strict();
const approveBody = z.object({ guest: guestBody }).strict();
const changesBody = z
  .object({
    guest: guestBody,
    request: z
      .string({ error: CHANGE_REQUEST_MSG.requestRequired })
      .refine((v) => v.trim() !== '', CHANGE_REQUEST_MSG.requestRequired)
      .refine((v) => v.trim().length <= COMMENT_MAX_CHARS, CHANGE_REQUEST_MSG.requestTooLong),
    pin: commentPinBody.nullable().optional(),
  })
  .strict();

const personView = z.object({ userId: z.string().nullable(), name: z.string() }).nullable();
const threadView = z.object({
  id: z.string(),
  itemKind: z.enum(COMMENT_ITEM_KINDS),
  itemId: z.string(),
  pin: commentPinBody.nullable(),
  resolved: z.boolean(),
  resolvedAt: z.string().nullable(),
  resolvedBy: personView,
  createdAt: z.string(),
  onVersion: z.number().int().nullable(),
  changeRequest: z.boolean(),
  comments: z.array(
    z.object({
      id: z.string(),
      threadId: z.string(),
      author: personView.meta({ description: 'A guest shows as "Name (guest)"; a member by name only' }),
      body: z.string(),
      mentions: z.array(z.object({ userId: z.string(), name: z.string() })),
      createdAt: z.string(),
      editedAt: z.string().nullable(),
    }),
  ),
});
const reviewView = answers<{ success: true } & GuestReviewView>()(
  z.object({
    success: z.literal(true),
    link: z.object({ id: z.string(), title: z.string(), message: z.string(), expiresAt: z.string(), canDecide: z.boolean(), canDownload: z.boolean() }),
    studio: z.object({ name: z.string() }),
    items: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(['image', 'clip', 'video']),
        name: z.string(),
        status: z.enum(['pending', 'approved', 'rejected', 'expired']),
        version: z.number().int(),
        aspectRatio: z.string().nullable(),
        previewUrl: z.string().nullable().meta({ description: 'The watermarked preview until approved; then the thumbnail (or, with downloads, the file)' }),
        downloadUrl: z.string().nullable().meta({ description: 'Only once approved, and only when the link allows downloads' }),
        canDecide: z.boolean(),
      }),
    ),
  }),
);
const decisionAnswer = z.object({
  success: z.literal(true),
  outcome: z.enum(['approved', 'approval_counted', 'changes_requested', 'studio_asked']),
  message: z.string(),
});
const threadAnswer = z.object({ success: z.literal(true), thread: threadView });

const gone = { 410: { description: 'The link was revoked or has expired (REVIEW_LINK_GONE)', schema: errorBody } };
const sessionRefusals = {
  401: { description: 'No guest session of this link (REVIEW_SESSION_MISSING): open the link again', schema: errorBody },
  404: { description: 'No such link, or the item or thread is not on it (REVIEW_ITEM_NOT_ON_LINK)', schema: errorBody },
  ...gone,
  429: { description: 'Too many requests on this link (RATE_LIMITED)', schema: errorBody },
};

/** The headers of everything a guest gets: no Referer leaves the page (it carries the token), nothing is indexed or cached. */
async function guestHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('Cache-Control', 'no-store');
  await next();
}

/** What /r/<token> answers when the built page is missing (a server started without `vite build`). */
const FALLBACK_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>Review</title></head><body><main><h1>Review</h1><p>This page is not available right now.</p></main></body></html>';

/** The statuses of the page, with a sentence the page shows even before its script runs. */
const PAGE_STATUS = { active: 200, gone: 410, missing: 404 } as const;

export interface GuestReviewRouterOptions {
  /** the limits (tests lower them) */
  limits?: GuestLimits;
}

/**
 * The guest's side of review links (issue 43 items 2-4): GET /r/<token> (the page), POST /api/guest/sessions (open a
 * session with the token, and the password when the link has one), and /api/guest/links/<linkId>/... for that link
 * only, with the session's cookie, which is scoped to that path. Public routes: the token, then the session of that
 * link, is the credential; none of them reaches anything of the workspace that is not on the link.
 */
export function guestReviewRouter(deps: AppDeps, options: GuestReviewRouterOptions = {}): Router {
  const { storage } = contentServicesFor(deps);
  const { approvals, comments, changeRequests } = changeRequestServices(deps);
  const sessions = new GuestSessionService({ knex: deps.knex, signingSecret: deps.config.signingSecret, limits: options.limits ?? deps.guestReviewLimits });
  const review = new GuestReviewService({ knex: deps.knex, storage, approvals, comments, changeRequests });
  const mailNotifications = () => void sendNotificationMail({ knex: deps.knex, config: deps.config, logger: deps.logger }).catch((err: unknown) => deps.logger.warn({ err }, 'notification e-mails not sent'));
  const cookiePolicy = sessionCookiePolicy(deps.config);
  const router = new Router();
  router.use(guestHeaders);

  const session = (ctx: Context): Promise<GuestSession> => sessions.resume(ctx.params.linkId, ctx.cookies.get(guestCookieName(ctx.params.linkId)));

  describeRoute(router, {
    method: 'get',
    path: '/r/:token',
    tag: 'Guest review',
    summary: "A review link's page (the guest's, signed out)",
    description:
      'The page of the link, with `Referrer-Policy: no-referrer` and `X-Robots-Tag: noindex`; 410 once the link is revoked or expired, 404 for a token that opens no link. The address is counted against the per-address look-up limit.',
    access: 'public',
    reviewLink: 'token',
    responses: {
      200: { description: 'The page', contentType: 'text/html', schema: z.string() },
      404: { description: 'No link has this token: the page says so', contentType: 'text/html', schema: z.string() },
      410: { description: 'The link was revoked or has expired: the page says so', contentType: 'text/html', schema: z.string() },
      429: { description: 'Too many look-ups from this address', contentType: 'text/html', schema: z.string() },
    },
    omit: [400],
  });
  router.get('/r/:token', async (ctx) => {
    let status: number;
    try {
      status = PAGE_STATUS[await sessions.pageState(ctx.params.token, ctx.ip)];
    } catch (err) {
      if ((err as { status?: number }).status !== 429) throw err;
      status = 429;
    }
    const page = await fs.readFile(path.join(path.resolve(deps.config.frontendDist), 'review.html'), 'utf8').catch(() => FALLBACK_PAGE);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/guest/sessions',
    tag: 'Guest review',
    summary: "Open a guest session of a review link (its token, and its password when it has one)",
    description:
      'Sets an httpOnly, SameSite=Lax cookie scoped to `/api/guest/links/{linkId}`: valid for that link only, at most 12 hours and never past the link\'s expiry. A wrong password 10 times locks the link for this address for an hour.',
    access: 'public',
    reviewLink: 'token',
    body: sessionBody,
    responses: {
      201: z.object({ success: z.literal(true), linkId: z.string(), expiresAt: z.string() }),
      401: { description: 'The link needs its password (REVIEW_LINK_PASSWORD_REQUIRED) or it was wrong (REVIEW_LINK_PASSWORD_WRONG)', schema: errorBody },
      404: { description: 'No link has this token (REVIEW_LINK_NOT_FOUND)', schema: errorBody },
      ...gone,
      429: { description: 'Too many look-ups from this address (RATE_LIMITED), or too many wrong passwords: the link is locked for this address for an hour (REVIEW_LINK_LOCKED)', schema: errorBody },
    },
  });
  router.post('/api/guest/sessions', async (ctx) => {
    const body = parseBody(ctx, sessionBody);
    const opened = await sessions.open(body.token, body.password ?? null, ctx.ip);
    if (cookiePolicy.secure) ctx.cookies.secure = true;
    ctx.cookies.set(guestCookieName(opened.session.link.id), opened.cookie, {
      httpOnly: true,
      sameSite: 'lax',
      secure: cookiePolicy.secure,
      path: `/api/guest/links/${opened.session.link.id}`,
      expires: opened.expiresAt,
      overwrite: true,
    });
    ctx.status = 201;
    ctx.body = { success: true, linkId: opened.session.link.id, expiresAt: opened.expiresAt.toISOString() };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/guest/links/:linkId',
    tag: 'Guest review',
    summary: "The review: the studio's name, the link's message, and its items as watermarked previews",
    description: 'No original and no link to one before an item is approved; after approval only where the link allows downloads.',
    access: 'public',
    reviewLink: 'session',
    responses: { 200: reviewView, ...sessionRefusals },
  });
  router.get('/api/guest/links/:linkId', async (ctx) => {
    const s = await session(ctx);
    await sessions.noteGuest(s, null);
    ctx.body = { success: true, ...(await review.view(s.link)) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/guest/links/:linkId/items/:itemId/comments',
    tag: 'Guest review',
    summary: "An item's comment threads, as the guest sees them",
    access: 'public',
    reviewLink: 'session',
    responses: {
      200: z.object({ success: z.literal(true), item: z.object({ kind: z.enum(COMMENT_ITEM_KINDS), id: z.string() }), threads: z.array(threadView) }),
      ...sessionRefusals,
    },
  });
  router.get('/api/guest/links/:linkId/items/:itemId/comments', async (ctx) => {
    const s = await session(ctx);
    ctx.body = { success: true, ...(await review.threads(s.link, ctx.params.itemId)) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/guest/links/:linkId/items/:itemId/comments',
    tag: 'Guest review',
    summary: 'Comment on an item of the link, optionally pinned to a point, a rectangle or a time',
    access: 'public',
    reviewLink: 'session',
    body: commentBody,
    responses: { 201: threadAnswer, 400: { description: 'No text, too long, a bad pin, or no name and e-mail', schema: errorBody }, ...sessionRefusals },
  });
  router.post('/api/guest/links/:linkId/items/:itemId/comments', async (ctx) => {
    const body = parseBody(ctx, commentBody);
    const guest = checkedGuest(body.guest);
    const s = await session(ctx);
    const thread = await review.comment(s, ctx.params.itemId, { body: body.body, pin: body.pin ?? null, guest });
    // the visit says who came only once something was done (a refused call changes nothing)
    await sessions.noteGuest(s, guest);
    ctx.status = 201;
    ctx.body = { success: true, thread };
    mailNotifications();
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/guest/links/:linkId/threads/:threadId/replies',
    tag: 'Guest review',
    summary: 'Reply in a thread on an item of the link',
    access: 'public',
    reviewLink: 'session',
    body: replyBody,
    responses: { 201: threadAnswer, 400: { description: 'No text, too long, or no name and e-mail', schema: errorBody }, ...sessionRefusals },
  });
  router.post('/api/guest/links/:linkId/threads/:threadId/replies', async (ctx) => {
    const body = parseBody(ctx, replyBody);
    const guest = checkedGuest(body.guest);
    const s = await session(ctx);
    const thread = await review.reply(s, ctx.params.threadId, { body: body.body, guest });
    await sessions.noteGuest(s, guest);
    ctx.status = 201;
    ctx.body = { success: true, thread };
    mailNotifications();
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/guest/links/:linkId/items/:itemId/approve',
    tag: 'Guest review',
    summary: "Approve an item: one approval under the workspace's approval policy (the workspace pays on the final one)",
    access: 'public',
    reviewLink: 'session',
    body: approveBody,
    responses: {
      200: decisionAnswer,
      400: { description: 'No name and e-mail', schema: errorBody },
      403: { description: 'The link lets guests comment only (REVIEW_ACTION_NOT_ALLOWED)', schema: errorBody },
      409: { description: 'The item is no longer pending, or this link has approved it already', schema: errorBody },
      ...sessionRefusals,
    },
  });
  router.post('/api/guest/links/:linkId/items/:itemId/approve', async (ctx) => {
    const body = parseBody(ctx, approveBody);
    const guest = checkedGuest(body.guest);
    const s = await session(ctx);
    const decided = await review.approve(s, ctx.params.itemId, guest);
    await sessions.noteGuest(s, guest);
    ctx.body = { success: true, ...decided };
    mailNotifications();
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/guest/links/:linkId/items/:itemId/request-changes',
    tag: 'Guest review',
    summary: 'Request changes on an item: rejected and its next version started, or, where the studio\'s rules refuse, the studio is asked',
    description: `${REVIEW_LINK_MSG.studioAsked} (outcome studio_asked): nothing is rejected or charged, the request is kept as the guest's comment and the members are notified.`,
    access: 'public',
    reviewLink: 'session',
    body: changesBody,
    responses: {
      200: decisionAnswer,
      400: { description: 'No request text, too long, a bad pin, or no name and e-mail', schema: errorBody },
      403: { description: 'The link lets guests comment only (REVIEW_ACTION_NOT_ALLOWED)', schema: errorBody },
      409: { description: 'The item is no longer pending, or is an assembled video', schema: errorBody },
      ...sessionRefusals,
    },
  });
  router.post('/api/guest/links/:linkId/items/:itemId/request-changes', async (ctx) => {
    const body = parseBody(ctx, changesBody);
    const guest = checkedGuest(body.guest);
    const s = await session(ctx);
    const decided = await review.requestChanges(s, ctx.params.itemId, { request: body.request, pin: body.pin ?? null, guest });
    await sessions.noteGuest(s, guest);
    ctx.body = { success: true, ...decided };
    mailNotifications();
  });

  return router;
}
