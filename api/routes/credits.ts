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
import { spendByMember, type MemberSpend } from '../../services/billing/spendByMember';
import { workspaceGrant } from '../workspace';

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
    /** The `nextCursor` of the page before: the next 50 by keyset (no offset), with the first page's total. */
    cursor: z.string().max(200).optional(),
    userId: z.string().optional(),
  })
  .strict()
  .refine((q) => q.page === undefined || q.cursor === undefined, { message: 'give page or cursor, not both' });

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
const memberSpend = answers<MemberSpend>()(
  z.object({
    userId: z.string().nullable().meta({ description: "null for the line gathering deleted accounts' spending" }),
    name: z.string(),
    email: z.string().nullable(),
    generated: count.meta({ description: 'Credits charged in the workspace for the items this user generated (started)' }),
    approved: count.meta({ description: 'Credits charged on the approvals this user made in the workspace' }),
    spent: count.meta({ description: 'The same as approved (kept for older clients)' }),
    deleted: z.boolean().meta({ description: "true for the one 'deleted account' line" }),
    member: z.boolean().meta({ description: 'Whether the user is a member of the workspace now (former members who generated or approved are listed too)' }),
  }),
);
const data = <S extends z.ZodType>(schema: S) => z.object({ success: z.literal(true), data: schema });
const noProfile = { description: 'The profile is gone', schema: errorBody };

/**
 * /api/credits/* for the request's workspace (the account is the workspace; the admin adjustment lives in
 * routes/admin.ts). Which action each route needs (DESIGN.md "Teams (workspaces)", domain/workspaceRoles.ts):
 * - 'read' (every member, viewers too): the summary (the balance the sidebar shows), the limits and the start
 *   rule's answer (what the generate controls show), the ledger and the weekly chart. The balance is shared, so
 *   every member sees where it went; none of these shows what was paid.
 * - 'billing' (admins and owners): spend per member, which compares colleagues, beside purchases (routes/stripe.ts).
 */
export function creditsRouter(deps: Pick<AppDeps, 'knex' | 'creditSummaries' | 'projectOwners'>): Router {
  const router = new Router();
  const auth = requireAuth(deps);

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/summary',
    workspace: 'read',
    tag: 'Credits',
    summary: 'Balance, reserved and available credits, and usage totals',
    access: 'session',
    query: selfQuery,
    responses: { 200: data(creditSummary), 404: noProfile },
  });
  router.get('/api/credits/summary', auth, async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    const summary = deps.creditSummaries ? deps.creditSummaries.get(deps.knex, workspaceId) : getCreditSummary(deps.knex, workspaceId);
    ctx.body = { success: true, data: await summary };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/limits',
    workspace: 'read',
    tag: 'Credits',
    summary: 'How many clips (credits / 4) and images (credits) the balance allows',
    access: 'session',
    query: selfQuery,
    responses: { 200: data(z.object({ clips: count, images: count })), 404: noProfile },
  });
  router.get('/api/credits/limits', auth, async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, data: await getUsageLimits(deps.knex, workspaceId) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/can-create',
    workspace: 'read',
    tag: 'Credits',
    summary: 'Whether the start rule allows one more item of a type now, and why not',
    access: 'session',
    query: canCreateQuery,
    responses: { 200: data(canCreateResult), 404: noProfile },
  });
  router.get('/api/credits/can-create', auth, async (ctx) => {
    const query = parseQuery(ctx, canCreateQuery);
    assertSelf(ctx, query.userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, data: await canCreateContent(deps.knex, workspaceId, query.type) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/credits/transactions',
    workspace: 'read',
    tag: 'Credits',
    summary: 'The credit ledger, 50 a page, newest first',
    access: 'session',
    query: transactionsQuery,
    responses: {
      200: z.object({ success: z.literal(true), data: z.array(transactionItem), page: count, pageSize: count, total: count, nextCursor: z.string().nullable() }),
      404: noProfile,
    },
  });
  router.get('/api/credits/transactions', auth, async (ctx) => {
    const query = parseQuery(ctx, transactionsQuery);
    assertSelf(ctx, query.userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    const { transactions, page, pageSize, total, nextCursor } = await listTransactions(deps.knex, workspaceId, query.cursor !== undefined ? { cursor: query.cursor } : (query.page ?? 1));
    ctx.body = { success: true, data: transactions, page, pageSize, total, nextCursor };
  });

  // the Billing tab's chart: credits added and spent per week by kind
  describeRoute(router, {
    method: 'get',
    path: '/api/credits/weekly-usage',
    workspace: 'read',
    tag: 'Credits',
    summary: 'Credits added and spent per week (Monday, UTC) by kind, with refunds and admin corrections',
    access: 'session',
    query: weeklyUsageQuery,
    responses: { 200: data(z.array(weeklyUsage)), 404: noProfile },
  });
  router.get('/api/credits/weekly-usage', auth, async (ctx) => {
    const query = parseQuery(ctx, weeklyUsageQuery);
    assertSelf(ctx, query.userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    ctx.body = { success: true, data: await weeklyCreditUsage(deps.knex, workspaceId, query.weeks) };
  });

  // the Billing tab's spend per member: billing, since it compares colleagues (admins and owners)
  describeRoute(router, {
    method: 'get',
    path: '/api/credits/spend-by-member',
    tag: 'Credits',
    summary: 'Credits charged per member of the workspace, by who generated and by who approved each item; former members kept, deleted accounts as one line',
    access: 'session',
    workspace: 'billing',
    query: selfQuery,
    responses: {
      200: z.object({ success: z.literal(true), members: z.array(memberSpend) }),
      403: { description: 'Only admins and owners read spend per member', schema: errorBody },
      404: noProfile,
    },
  });
  router.get('/api/credits/spend-by-member', auth, async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'billing');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, members: await spendByMember(deps.knex, workspaceId) };
  });

  return router;
}
