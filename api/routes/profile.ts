import Router from '@koa/router';
import { z } from 'zod';
import { changePassword, getProfile, updateProfileName, type ProfileView } from '../../services/accounts/accounts';
import type { AppDeps } from '../deps';
import { currentSessionId, currentUser, requireAuth } from '../middleware/auth';
import { parseBody, requiredString, singleLine } from '../validation';
import { answers, describeRoute, errorBody, timestamp } from '../openapi/describe';

const nameBody = z.strictObject({ name: singleLine(requiredString('Name'), 'Name').max(1000) });

const passwordBody = z.strictObject({
  currentPassword: requiredString('Current password').max(1024),
  newPassword: requiredString('New password').max(1024),
  confirmPassword: requiredString('Password confirmation').max(1024),
});

const profileView = answers<ProfileView>()(z.object({ id: z.string(), name: z.string(), email: z.string(), createdAt: timestamp }).meta({ id: 'Profile' }));
const profileAnswer = z.object({ success: z.literal(true), profile: profileView });
const profileGone = { description: 'The profile is gone', schema: errorBody };

export function profileRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  describeRoute(router, { method: 'get', path: '/api/profile', tag: 'Profile', summary: "The signed-in user's profile", access: 'session', workspace: 'self', responses: { 200: profileAnswer, 404: profileGone } });
  router.get('/api/profile', auth, async (ctx) => {
    ctx.body = { success: true, profile: await getProfile(deps.knex, currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/profile',
    tag: 'Profile',
    summary: 'Rename the profile',
    access: 'session',
    workspace: 'self',
    body: nameBody,
    responses: { 200: profileAnswer, 404: profileGone },
  });
  router.patch('/api/profile', auth, async (ctx) => {
    const { name } = parseBody(ctx, nameBody);
    ctx.body = { success: true, profile: await updateProfileName(deps.knex, currentUser(ctx).id, name) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/profile/password',
    tag: 'Profile',
    summary: "Change the password (ends the user's other sessions)",
    access: 'session',
    workspace: 'self',
    body: passwordBody,
    responses: { 200: z.object({ success: z.literal(true), endedSessions: z.number().int() }), 404: profileGone },
  });
  router.post('/api/profile/password', auth, async (ctx) => {
    const input = parseBody(ctx, passwordBody);
    const { endedSessions } = await changePassword(deps.knex, { userId: currentUser(ctx).id, sessionId: currentSessionId(ctx) }, input);
    ctx.body = { success: true, endedSessions };
  });

  return router;
}
