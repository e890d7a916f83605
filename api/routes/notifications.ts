import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';
import { workspaceGrant } from '../workspace';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { NOTIFICATION_EMAIL_CHOICES, NOTIFICATION_KINDS, type NotificationEmailChoice, type NotificationView } from '../../domain/notifications';
import { listNotifications, markNotificationsRead } from '../../services/review/notifications';
import { validUnsubscribe } from '../../services/review/notificationMail';

const TAG = 'Notifications';
const CHOICE_MSG = `email must be one of ${NOTIFICATION_EMAIL_CHOICES.join(', ')}`;

const notificationView = answers<NotificationView>()(
  z
    .object({
      id: z.string(),
      kind: z.enum(NOTIFICATION_KINDS),
      text: z.string(),
      item: z.object({ kind: z.string(), id: z.string() }).nullable(),
      project_id: z.string().nullable(),
      by: z.object({ user_id: z.string(), name: z.string() }).nullable(),
      created_at: z.string(),
      read: z.boolean(),
    })
    .meta({ id: 'Notification' }),
);
const listAnswer = z.object({ success: z.literal(true), notifications: z.array(notificationView), unread: z.number().int() });
const readBody = z.object({ ids: z.array(z.string(), { error: 'ids must be a list of notification ids' }).max(200).optional() });
const settingsBody = z.object({ email: z.enum(NOTIFICATION_EMAIL_CHOICES, { error: CHOICE_MSG }) });
const settingsAnswer = z.object({ success: z.literal(true), email: z.enum(NOTIFICATION_EMAIL_CHOICES) });

/**
 * /api/notifications: the signed-in member's notifications in the request's workspace (the bell), marking them read,
 * and their choice of e-mail for notifications (DESIGN.md "Review").
 */
export function notificationsRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  describeRoute(router, {
    method: 'get',
    path: '/api/notifications',
    tag: TAG,
    summary: 'Your newest notifications in the workspace (at most 50) and how many are unread',
    access: 'session',
    workspace: 'read',
    responses: { 200: listAnswer },
  });
  router.get('/api/notifications', auth, async (ctx) => {
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await listNotifications(deps.knex, grant.workspaceId, grant.userId)) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/notifications/read',
    tag: TAG,
    summary: 'Mark your notifications in the workspace read: the ones named in `ids`, or all',
    access: 'session',
    workspace: 'read',
    body: readBody,
    responses: { 200: z.object({ success: z.literal(true), marked: z.number().int() }), 400: { description: 'A malformed body', schema: errorBody } },
  });
  router.post('/api/notifications/read', auth, async (ctx) => {
    const { ids } = parseBody(ctx, readBody);
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, marked: await markNotificationsRead(deps.knex, grant.workspaceId, grant.userId, ids) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/profile/notifications',
    tag: TAG,
    summary: 'Your choice of e-mail for notifications: each, a daily digest, or none',
    access: 'session',
    workspace: 'self',
    responses: { 200: settingsAnswer },
  });
  router.get('/api/profile/notifications', auth, async (ctx) => {
    const user = currentUser(ctx);
    const row = (await deps.knex('users').where({ id: user.id }).first('notification_email')) as { notification_email: NotificationEmailChoice } | undefined;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, email: row?.notification_email ?? 'each' };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/profile/notifications',
    tag: TAG,
    summary: 'Set your choice of e-mail for notifications',
    access: 'session',
    workspace: 'self',
    body: settingsBody,
    responses: { 200: settingsAnswer, 400: { description: 'Not one of the choices', schema: errorBody } },
  });
  router.put('/api/profile/notifications', auth, async (ctx) => {
    const { email } = parseBody(ctx, settingsBody);
    const user = currentUser(ctx);
    await deps.knex('users').where({ id: user.id }).update({ notification_email: email });
    ctx.body = { success: true, email };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/notifications/unsubscribe',
    tag: TAG,
    summary: 'Turn notification e-mails off from the link in one (no sign-in: the link is signed for its person)',
    access: 'public',
    query: unsubscribeQuery,
    responses: {
      200: { description: 'A page saying the e-mails are off', schema: z.string(), contentType: 'text/html' },
      400: { description: 'A link that was not signed here', schema: z.string(), contentType: 'text/html' },
    },
  });
  router.get('/api/notifications/unsubscribe', async (ctx) => {
    const { user, sig } = unsubscribeQuery.parse({ user: String(ctx.query.user ?? ''), sig: String(ctx.query.sig ?? '') });
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    if (!UUID.test(user) || !validUnsubscribe(deps.config.signingSecret, user.toLowerCase(), sig)) {
      ctx.status = 400;
      ctx.body = page('This link is not valid', 'Open Render Studio and choose your notification e-mails in Account settings.');
      return;
    }
    await deps.knex('users').where({ id: user.toLowerCase() }).update({ notification_email: 'none' });
    ctx.body = page('You will get no more notification e-mails', 'The bell in Render Studio still shows your notifications. You can turn e-mails on again in Account settings.');
  });

  return router;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const unsubscribeQuery = z.object({ user: z.string(), sig: z.string() });

/** A minimal page for a link opened from an e-mail (no app, no sign-in). Fixed texts only: nothing from the request. */
function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Render Studio</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5"><h1 style="font-size:1.4rem">${title}</h1><p>${text}</p><p><a href="/?view=account&amp;tab=settings">Open Render Studio</a></p></body></html>`;
}
