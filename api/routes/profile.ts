import Router from '@koa/router';
import { z } from 'zod';
import { changePassword, getProfile, updateProfileName } from '../../services/accounts';
import type { AppDeps } from '../deps';
import { currentSessionId, currentUser, requireAuth } from '../middleware/auth';
import { parseBody, requiredString, singleLine } from '../validation';

const nameBody = z.strictObject({ name: singleLine(requiredString('Name'), 'Name').max(1000) });

const passwordBody = z.strictObject({
  currentPassword: requiredString('Current password').max(1024),
  newPassword: requiredString('New password').max(1024),
  confirmPassword: requiredString('Password confirmation').max(1024),
});

export function profileRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  router.get('/api/profile', auth, async (ctx) => {
    ctx.body = { success: true, profile: await getProfile(deps.knex, currentUser(ctx).id) };
  });

  router.patch('/api/profile', auth, async (ctx) => {
    const { name } = parseBody(ctx, nameBody);
    ctx.body = { success: true, profile: await updateProfileName(deps.knex, currentUser(ctx).id, name) };
  });

  router.post('/api/profile/password', auth, async (ctx) => {
    const input = parseBody(ctx, passwordBody);
    const { endedSessions } = await changePassword(deps.knex, { userId: currentUser(ctx).id, sessionId: currentSessionId(ctx) }, input);
    ctx.body = { success: true, endedSessions };
  });

  return router;
}
