import Router from '@koa/router';
import { sendNotificationMail } from '../../services/review/notificationMail';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';
import { workspaceGrant } from '../workspace';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { COMMENT_ITEM_KINDS, COMMENT_MAX_CHARS, COMMENT_MSG, type CommentThreadList, type CommentThreadView } from '../../domain/comments';
import { CommentService } from '../../services/review/comments';

// at most COMMENT_MAX_CHARS characters (code points: an emoji is one)
const text = z
  .string({ error: COMMENT_MSG.bodyRequired })
  .trim()
  .min(1, COMMENT_MSG.bodyRequired)
  .refine((s) => [...s].length <= COMMENT_MAX_CHARS, COMMENT_MSG.bodyTooLong)
  .meta({ description: `Plain text, at most ${COMMENT_MAX_CHARS} characters; never read as HTML` });
export const commentPinBody = z
  .object({
    x: z.number().optional(),
    y: z.number().optional(),
    w: z.number().optional(),
    h: z.number().optional(),
    t: z.number().optional(),
  })
  .strict()
  .meta({ description: 'A point (x, y) or rectangle (x, y, w, h) in fractions of the picture from its top left, and/or a time t in seconds (clips and videos)' });
const openBody = z.object({ body: text, pin: commentPinBody.nullable().optional() }).strict();
const replyBody = z.object({ body: text }).strict();

const personView = z.object({ userId: z.string().nullable(), name: z.string() }).nullable();
const commentView = z.object({
  id: z.string(),
  threadId: z.string(),
  author: personView,
  body: z.string(),
  mentions: z.array(z.object({ userId: z.string(), name: z.string() })),
  createdAt: z.string(),
  editedAt: z.string().nullable(),
});
const threadView = answers<CommentThreadView>()(
  z.object({
    id: z.string(),
    itemKind: z.enum(COMMENT_ITEM_KINDS),
    itemId: z.string(),
    pin: commentPinBody.nullable(),
    resolved: z.boolean(),
    resolvedAt: z.string().nullable(),
    resolvedBy: personView,
    createdAt: z.string(),
    onVersion: z.number().int().nullable().meta({ description: 'The version of the item the thread was started on, once carried over to a later version by a request for changes' }),
    changeRequest: z.boolean().meta({ description: 'Its opening comment is a request for changes' }),
    comments: z.array(commentView),
  }),
);
const threadList = answers<{ success: true } & CommentThreadList>()(
  z.object({ success: z.literal(true), item: z.object({ kind: z.enum(COMMENT_ITEM_KINDS), id: z.string() }), threads: z.array(threadView) }),
);
const threadAnswer = z.object({ success: z.literal(true), thread: threadView });
const notFound = { 404: { description: 'No such item, thread or comment in the workspace, or the caller is not a member of it', schema: errorBody } };

/**
 * Comment threads on items and renders (issue 42 item 1, DESIGN.md "Review"): /api/content/:id/comments for an item's
 * threads (the id a card or dialog shows: a pending item's approval id, a saved item's or a render's id), and
 * /api/comments/... for one thread or comment. Reading is 'read'; writing is 'comment' (viewers too); the service
 * decides the finer rules (edit: the author; delete: the author or an admin; resolve: the author or a member).
 */
export function commentsRouter(deps: AppDeps): Router {
  const service = new CommentService(deps.knex);
  // the notifications a comment made are e-mailed after it is stored (never holding the answer)
  const mailNotifications = () => void sendNotificationMail({ knex: deps.knex, config: deps.config, logger: deps.logger }).catch((err: unknown) => deps.logger.warn({ err }, 'notification e-mails not sent'));
  const router = new Router();
  router.use(requireAuth(deps));
  // a thread or comment route acts in the thread's workspace when the caller is a member there
  const ofThread = (threadId: string) => ({ jobWorkspace: () => service.workspaceOf({ threadId }) });
  const ofComment = (commentId: string) => ({ jobWorkspace: () => service.workspaceOf({ commentId }) });

  describeRoute(router, {
    method: 'get',
    path: '/api/content/:id/comments',
    tag: 'Comments',
    summary: "An item's comment threads, oldest first, each with its comments",
    description: 'The id is what the item is known by: a pending item\'s approval id (once approved, its threads are the saved item\'s), a saved image\'s, clip\'s or video\'s id, or a render\'s.',
    access: 'session',
    workspace: 'read',
    responses: { 200: threadList, ...notFound },
  });
  router.get('/api/content/:id/comments', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await service.list(grant.workspaceId, ctx.params.id)) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/content/:id/comments',
    tag: 'Comments',
    summary: 'Open a comment thread on an item, optionally pinned to a point, a rectangle or a time',
    description: `Plain text up to ${COMMENT_MAX_CHARS} characters; "@Name" mentions a member of the workspace. Viewers may comment.`,
    access: 'session',
    workspace: 'comment',
    body: openBody,
    responses: { 201: threadAnswer, ...notFound, 409: { description: 'The item holds the most threads it may', schema: errorBody } },
  });
  router.post('/api/content/:id/comments', async (ctx) => {
    const body = parseBody(ctx, openBody);
    const grant = await workspaceGrant(ctx, deps, 'comment');
    ctx.status = 201;
    ctx.body = { success: true, thread: await service.open(grant, ctx.params.id, body) };
    mailNotifications();
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/comments/threads/:threadId/replies',
    tag: 'Comments',
    summary: 'Reply in a thread (a resolved thread reopens)',
    access: 'session',
    workspace: 'comment',
    body: replyBody,
    responses: { 201: threadAnswer, ...notFound, 409: { description: 'The thread holds the most replies it may', schema: errorBody } },
  });
  router.post('/api/comments/threads/:threadId/replies', async (ctx) => {
    const body = parseBody(ctx, replyBody);
    const grant = await workspaceGrant(ctx, deps, 'comment', ofThread(ctx.params.threadId));
    ctx.status = 201;
    ctx.body = { success: true, thread: await service.reply(grant, ctx.params.threadId, body) };
    mailNotifications();
  });

  for (const [action, resolved] of [
    ['resolve', true],
    ['reopen', false],
  ] as const) {
    describeRoute(router, {
      method: 'post',
      path: `/api/comments/threads/:threadId/${action}`,
      tag: 'Comments',
      summary: resolved ? 'Resolve a thread (its author, or a member and up)' : 'Reopen a resolved thread (its author, or a member and up)',
      access: 'session',
      workspace: 'comment',
      responses: { 200: threadAnswer, ...notFound },
    });
    router.post(`/api/comments/threads/:threadId/${action}`, async (ctx) => {
      const grant = await workspaceGrant(ctx, deps, 'comment', ofThread(ctx.params.threadId));
      ctx.body = { success: true, thread: await service.setResolved(grant, ctx.params.threadId, resolved) };
    });
  }

  describeRoute(router, {
    method: 'patch',
    path: '/api/comments/:commentId',
    tag: 'Comments',
    summary: 'Change the text of your own comment',
    access: 'session',
    workspace: 'comment',
    body: replyBody,
    responses: { 200: threadAnswer, ...notFound },
  });
  router.patch('/api/comments/:commentId', async (ctx) => {
    const body = parseBody(ctx, replyBody);
    const grant = await workspaceGrant(ctx, deps, 'comment', ofComment(ctx.params.commentId));
    ctx.body = { success: true, thread: await service.edit(grant, ctx.params.commentId, body) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/comments/:commentId',
    tag: 'Comments',
    summary: "Delete a comment (its author, or an admin); a thread's opening comment takes the thread with it",
    access: 'session',
    workspace: 'comment',
    responses: { 200: z.object({ success: z.literal(true), thread: threadView.nullable() }), ...notFound },
  });
  router.delete('/api/comments/:commentId', async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'comment', ofComment(ctx.params.commentId));
    ctx.body = { success: true, thread: await service.remove(grant, ctx.params.commentId) };
  });

  return router;
}
