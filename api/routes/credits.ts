import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { parseQuery } from '../validation';
import { canCreateContent, getCreditSummary, getUsageLimits, listTransactions } from '../../services/credits';
import { USAGE_WEEKS_MAX, weeklyCreditUsage } from '../../services/creditUsage';

// the specs' calls may carry the user's own id; any other id is refused by assertSelf
const selfQuery = z.object({ userId: z.string().optional() }).strict();

const canCreateQuery = z
  .object({
    type: z.enum(['clip', 'image', 'assembly'], { message: 'type must be clip, image or assembly' }),
    userId: z.string().optional(),
  })
  .strict();

const transactionsQuery = z
  .object({
    page: z
      .string()
      .regex(/^\d{1,6}$/, { message: 'page must be a whole number from 1' })
      .transform(Number)
      .refine((n) => n >= 1, { message: 'page must be a whole number from 1' })
      .optional(),
    userId: z.string().optional(),
  })
  .strict();

const weeklyUsageQuery = z
  .object({
    weeks: z
      .string()
      .regex(/^\d{1,2}$/, { message: `weeks must be a whole number from 1 to ${USAGE_WEEKS_MAX}` })
      .transform(Number)
      .refine((n) => n >= 1 && n <= USAGE_WEEKS_MAX, { message: `weeks must be a whole number from 1 to ${USAGE_WEEKS_MAX}` })
      .optional(),
    userId: z.string().optional(),
  })
  .strict();

/** /api/credits/* for the signed-in user (the admin adjustment lives in routes/admin.ts). */
export function creditsRouter(deps: Pick<AppDeps, 'knex'>): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  router.get('/api/credits/summary', auth, async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    ctx.body = { success: true, data: await getCreditSummary(deps.knex, user.id) };
  });

  router.get('/api/credits/limits', auth, async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    ctx.body = { success: true, data: await getUsageLimits(deps.knex, user.id) };
  });

  router.get('/api/credits/can-create', auth, async (ctx) => {
    const query = parseQuery(ctx, canCreateQuery);
    const user = assertSelf(ctx, query.userId);
    ctx.body = { success: true, data: await canCreateContent(deps.knex, user.id, query.type) };
  });

  router.get('/api/credits/transactions', auth, async (ctx) => {
    const query = parseQuery(ctx, transactionsQuery);
    const user = assertSelf(ctx, query.userId);
    const { transactions, page, pageSize, total } = await listTransactions(deps.knex, user.id, query.page ?? 1);
    ctx.body = { success: true, data: transactions, page, pageSize, total };
  });

  // the Billing tab's chart: credits added and spent per week by kind
  router.get('/api/credits/weekly-usage', auth, async (ctx) => {
    const query = parseQuery(ctx, weeklyUsageQuery);
    const user = assertSelf(ctx, query.userId);
    ctx.body = { success: true, data: await weeklyCreditUsage(deps.knex, user.id, query.weeks) };
  });

  return router;
}
