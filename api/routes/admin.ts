import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAdmin, requireAuth } from '../middleware/auth';
import { parse, parseBody, parseQuery } from '../validation';
import { ADMIN_ADJUST_MAX, ADMIN_REASON_MAX_LENGTH, ADMIN_SEARCH_DEFAULT_LIMIT, ADMIN_SEARCH_MAX_LIMIT } from '../../domain/admin';
import { adjustUserCredits, getUserForAdmin, searchUsersByEmail } from '../../services/admin';

const searchQuery = z
  .object({
    email: z
      .string({ message: 'email is required' })
      .trim()
      .min(1, { message: 'email is required' })
      .max(254, { message: 'email is too long' }),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, { message: `limit must be a whole number from 1 to ${ADMIN_SEARCH_MAX_LIMIT}` })
      .transform(Number)
      .refine((n) => n >= 1 && n <= ADMIN_SEARCH_MAX_LIMIT, { message: `limit must be a whole number from 1 to ${ADMIN_SEARCH_MAX_LIMIT}` })
      .optional(),
  })
  .strict();

const userId = z.uuid({ message: 'Not a valid user id' });

const userParams = z.object({ id: userId });

const idempotencyKey = z
  .string({ message: 'idempotencyKey must be a string' })
  .trim()
  .min(1, { message: 'idempotencyKey must not be blank' })
  .max(200, { message: 'idempotencyKey is too long' });

const adjustBody = z
  .object({
    userId,
    amount: z
      .number({ message: 'amount must be a whole number' })
      .int({ message: 'amount must be a whole number' })
      .refine((n) => n !== 0, { message: 'amount must not be zero' })
      .refine((n) => Math.abs(n) <= ADMIN_ADJUST_MAX, { message: 'amount is too large' }),
    reason: z.string({ message: 'reason is required' }).trim().min(1, { message: 'reason is required' }).max(ADMIN_REASON_MAX_LENGTH, { message: 'reason is too long' }),
    idempotencyKey: idempotencyKey.optional(),
  })
  .strict();

/** /api/admin/*: every route needs a session (401) and the admin role (403), checked before the input is read. */
export function adminRouter(deps: Pick<AppDeps, 'knex'>): Router {
  const router = new Router();
  const adminOnly = [requireAuth(deps), requireAdmin] as const;

  router.get('/api/admin/users', ...adminOnly, async (ctx) => {
    const query = parseQuery(ctx, searchQuery);
    const limit = query.limit ?? ADMIN_SEARCH_DEFAULT_LIMIT;
    const { users, hasMore } = await searchUsersByEmail(deps.knex, query.email, limit);
    ctx.body = { success: true, data: users, hasMore, limit };
  });

  router.get('/api/admin/users/:id', ...adminOnly, async (ctx) => {
    const { id } = parse(userParams, ctx.params);
    ctx.body = { success: true, data: await getUserForAdmin(deps.knex, id) };
  });

  router.post('/api/admin/credits/adjust', ...adminOnly, async (ctx) => {
    const body = parseBody(ctx, adjustBody);
    const header = ctx.get('idempotency-key');
    // a client retrying the same adjustment sends the same key (body or Idempotency-Key header)
    const key = body.idempotencyKey ?? (header ? parse(idempotencyKey, header) : randomUUID());
    const admin = currentUser(ctx);
    const result = await adjustUserCredits(
      deps.knex,
      { id: admin.id, email: admin.email },
      { userId: body.userId, amount: body.amount, reason: body.reason, idempotencyKey: key },
    );
    ctx.status = result.replayed ? 200 : 201;
    ctx.body = { success: true, data: result };
  });

  return router;
}
