import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { parseQuery } from '../validation';
import { canCreateContent, getCreditSummary, getUsageLimits, listTransactions, type CreditSummary, type TransactionListItem } from '../../services/billing/credits';
import type { CanCreateContentResult } from '../../domain/creditMath';
import type { WeeklyCreditUsage } from '../../domain/billing';
import { answers, describeRoute, errorBody, timestamp } from '../openapi/describe';
import { USAGE_WEEKS_MAX, weeklyCreditUsage } from '../../services/billing/creditUsage';

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

const count = z.number().int();
export const creditSummary = answers<CreditSummary>()(
  z
    .object({
      credits: count,
      reservedCredits: count,
      availableCredits: count,
      totalClipsUsed: count,
      totalImagesUsed: count,
      totalAssembliesUsed: count,
      totalCreditsPurchased: count,
      totalCreditsAdded: count,
    })
    .meta({ id: 'CreditSummary' }),
);
const canCreateResult = answers<CanCreateContentResult>()(
  z.object({
    canCreate: z.boolean(),
    reason: z.enum(['ok', 'insufficient_credits', 'pending_cost', 'pending_limit', 'cooldown']),
    cost: count,
    available: count,
    limit: count,
    pendingCount: count,
    pendingCost: count,
  }),
);
const transactionItem = answers<TransactionListItem>()(
  z.object({
    id: z.string(),
    amount: count,
    transactionType: z.string(),
    description: z.string(),
    referenceId: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: timestamp,
    createdByEmail: z.string(),
  }),
);
const weeklyUsage = answers<WeeklyCreditUsage>()(
  z.object({
    weekStart: z.string(),
    added: count,
    spent: z.object({ image: count, clip: count, assembly: count }),
    refunded: count,
    adjusted: z.object({ added: count, removed: count }),
    removed: count,
  }),
);
const data = <S extends z.ZodType>(schema: S) => z.object({ success: z.literal(true), data: schema });
const noProfile = { description: 'The profile is gone', schema: errorBody };

/** /api/credits/* for the signed-in user (the admin adjustment lives in routes/admin.ts). */
export function creditsRouter(deps: Pick<AppDeps, 'knex' | 'creditSummaries'>): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/summary',
    tag: 'Credits',
    summary: 'Balance, reserved and available credits, and usage totals',
    access: 'session',
    query: selfQuery,
    responses: { 200: data(creditSummary), 404: noProfile },
  });
  router.get('/api/credits/summary', auth, async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const summary = deps.creditSummaries ? deps.creditSummaries.get(deps.knex, user.id) : getCreditSummary(deps.knex, user.id);
    ctx.body = { success: true, data: await summary };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/limits',
    tag: 'Credits',
    summary: 'How many clips (credits / 4) and images (credits) the balance allows',
    access: 'session',
    query: selfQuery,
    responses: { 200: data(z.object({ clips: count, images: count })), 404: noProfile },
  });
  router.get('/api/credits/limits', auth, async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    ctx.body = { success: true, data: await getUsageLimits(deps.knex, user.id) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/can-create',
    tag: 'Credits',
    summary: 'Whether the start rule allows one more item of a type now, and why not',
    access: 'session',
    query: canCreateQuery,
    responses: { 200: data(canCreateResult), 404: noProfile },
  });
  router.get('/api/credits/can-create', auth, async (ctx) => {
    const query = parseQuery(ctx, canCreateQuery);
    const user = assertSelf(ctx, query.userId);
    ctx.body = { success: true, data: await canCreateContent(deps.knex, user.id, query.type) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/transactions',
    tag: 'Credits',
    summary: 'The credit ledger, 50 a page, newest first',
    access: 'session',
    query: transactionsQuery,
    responses: {
      200: z.object({ success: z.literal(true), data: z.array(transactionItem), page: count, pageSize: count, total: count }),
      404: noProfile,
    },
  });
  router.get('/api/credits/transactions', auth, async (ctx) => {
    const query = parseQuery(ctx, transactionsQuery);
    const user = assertSelf(ctx, query.userId);
    const { transactions, page, pageSize, total } = await listTransactions(deps.knex, user.id, query.page ?? 1);
    ctx.body = { success: true, data: transactions, page, pageSize, total };
  });

  // the Billing tab's chart: credits added and spent per week by kind
  describeRoute(router, {
    method: 'get',
    path: '/api/credits/weekly-usage',
    tag: 'Credits',
    summary: 'Credits added and spent per week (Monday, UTC) by kind, with refunds and admin corrections',
    access: 'session',
    query: weeklyUsageQuery,
    responses: { 200: data(z.array(weeklyUsage)), 404: noProfile },
  });
  router.get('/api/credits/weekly-usage', auth, async (ctx) => {
    const query = parseQuery(ctx, weeklyUsageQuery);
    const user = assertSelf(ctx, query.userId);
    ctx.body = { success: true, data: await weeklyCreditUsage(deps.knex, user.id, query.weeks) };
  });

  return router;
}
