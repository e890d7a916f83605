import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { currentUser, requireAdmin, requireAuth } from '../middleware/auth';
import { parse, parseBody, parseQuery } from '../validation';
import {
  ADMIN_ADJUST_MAX,
  ADMIN_REASON_MAX_LENGTH,
  ADMIN_SEARCH_DEFAULT_LIMIT,
  ADMIN_SEARCH_MAX_LIMIT,
  type AdminAdjustResult,
  type AdminUserDetail,
  type AdminUserListItem,
  type AdminWorkspaceMatch,
} from '../../domain/admin';
import { WORKSPACE_ROLES } from '../../domain/workspaceRoles';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { creditSummary } from './credits';
import { adjustTargetProblem, adjustUserCredits, getUserForAdmin, searchUsersByEmail, searchWorkspacesByName } from '../../services/accounts/admin';

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

const workspaceSearchQuery = z
  .object({
    name: z
      .string({ message: 'name is required' })
      .trim()
      .min(1, { message: 'name is required' })
      .max(100, { message: 'name is too long' }),
    limit: searchQuery.shape.limit,
  })
  .strict();

const adjustBody = z
  .object({
    // the workspace, one way (DESIGN.md "Teams (workspaces)": credits belong to the workspace; domain/admin.ts)
    workspaceId: z.uuid({ message: 'Not a valid workspace id' }).optional(),
    userId: userId.optional(),
    email: z.string({ message: 'email must be text' }).trim().min(1, { message: 'email must not be blank' }).max(254, { message: 'email is too long' }).optional(),
    workspace: z.string({ message: 'workspace must be text' }).trim().min(1, { message: 'workspace must not be blank' }).max(100, { message: 'workspace is too long' }).optional(),
    amount: z
      .number({ message: 'amount must be a whole number' })
      .int({ message: 'amount must be a whole number' })
      .refine((n) => n !== 0, { message: 'amount must not be zero' })
      .refine((n) => Math.abs(n) <= ADMIN_ADJUST_MAX, { message: 'amount is too large' }),
    reason: z.string({ message: 'reason is required' }).trim().min(1, { message: 'reason is required' }).max(ADMIN_REASON_MAX_LENGTH, { message: 'reason is too long' }),
    idempotencyKey: idempotencyKey.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const problem = adjustTargetProblem(body);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const role = z.enum(['user', 'admin']);
const userListItem = answers<AdminUserListItem>()(
  z.object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role,
    credits: z.number().int(),
    reservedCredits: z.number().int(),
    availableCredits: z.number().int(),
    createdAt: z.string(),
  }),
);
const workspaceSummary = {
  id: z.string(),
  name: z.string(),
  personal: z.boolean(),
  memberCount: z.number().int(),
  credits: z.number().int(),
  reservedCredits: z.number().int(),
  availableCredits: z.number().int(),
};
const workspaceMatch = answers<AdminWorkspaceMatch>()(z.object({ ...workspaceSummary, owners: z.array(z.object({ id: z.string(), email: z.string() })) }));
const userDetail = answers<AdminUserDetail>()(
  z.object({
    user: z.object({ id: z.string(), email: z.string(), name: z.string(), role, createdAt: z.string() }),
    credits: creditSummary,
    purchases: z.array(
      z.object({
        id: z.string(),
        packageId: z.string(),
        credits: z.number().int(),
        amountCents: z.number().int(),
        currency: z.string(),
        status: z.string(),
        createdAt: z.string(),
        completedAt: z.string().nullable(),
      }),
    ),
    transactions: z.array(
      z.object({
        id: z.string(),
        amount: z.number().int(),
        transactionType: z.string(),
        description: z.string(),
        referenceId: z.string().nullable(),
        createdAt: z.string(),
        createdByEmail: z.string(),
      }),
    ),
    transactionsTotal: z.number().int(),
    ledger: z.object({ ok: z.boolean(), ledgerSum: z.number(), activeReservationsSum: z.number() }),
    workspaces: z.array(z.object({ ...workspaceSummary, role: z.enum(WORKSPACE_ROLES) })),
  }),
);
const adjustResult = answers<AdminAdjustResult>()(
  z.object({
    id: z.string(),
    userId: z.string(),
    workspace: z.object({ id: z.string(), name: z.string(), personal: z.boolean() }),
    amount: z.number().int(),
    balanceAfter: z.number().int(),
    transactionType: z.string(),
    description: z.string(),
    createdByEmail: z.string(),
    createdAt: z.string(),
    replayed: z.boolean(),
    credits: creditSummary,
  }),
);
const adjustAnswer = z.object({ success: z.literal(true), data: adjustResult });
const idempotencyHeader = z.object({ 'idempotency-key': idempotencyKey.optional() });

/** /api/admin/*: every route needs a session (401) and the admin role (403), checked before the input is read. */
export function adminRouter(deps: Pick<AppDeps, 'knex'>): Router {
  const router = new Router();
  const adminOnly = [requireAuth(deps), requireAdmin] as const;

  describeRoute(router, {
    method: 'get',
    path: '/api/admin/users',
    tag: 'Admin',
    summary: 'Find users by e-mail (admins only)',
    access: 'admin',
    workspace: 'self',
    query: searchQuery,
    responses: { 200: z.object({ success: z.literal(true), data: z.array(userListItem), hasMore: z.boolean(), limit: z.number().int() }) },
  });
  router.get('/api/admin/users', ...adminOnly, async (ctx) => {
    const query = parseQuery(ctx, searchQuery);
    const limit = query.limit ?? ADMIN_SEARCH_DEFAULT_LIMIT;
    const { users, hasMore } = await searchUsersByEmail(deps.knex, query.email, limit);
    ctx.body = { success: true, data: users, hasMore, limit };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/admin/users/:id',
    tag: 'Admin',
    summary: "A user's credits, purchases, newest ledger rows, ledger check and workspaces with role, members and balance (admins only)",
    access: 'admin',
    workspace: 'self',
    params: userParams,
    responses: { 200: z.object({ success: z.literal(true), data: userDetail }) },
  });
  router.get('/api/admin/users/:id', ...adminOnly, async (ctx) => {
    const { id } = parse(userParams, ctx.params);
    ctx.body = { success: true, data: await getUserForAdmin(deps.knex, id) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/admin/workspaces',
    tag: 'Admin',
    summary: 'Find workspaces by name (case aside), with their owners, members and balance (admins only)',
    access: 'admin',
    workspace: 'self',
    query: workspaceSearchQuery,
    responses: { 200: z.object({ success: z.literal(true), data: z.array(workspaceMatch), hasMore: z.boolean(), limit: z.number().int() }) },
  });
  router.get('/api/admin/workspaces', ...adminOnly, async (ctx) => {
    const query = parseQuery(ctx, workspaceSearchQuery);
    const limit = query.limit ?? ADMIN_SEARCH_DEFAULT_LIMIT;
    const { workspaces, hasMore } = await searchWorkspacesByName(deps.knex, query.name, limit);
    ctx.body = { success: true, data: workspaces, hasMore, limit };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/admin/credits/adjust',
    tag: 'Admin',
    summary: "Add or take a workspace's credits with a reason (admins only); idempotent by key",
    description:
      "The workspace is named one way: workspaceId; userId (that user's personal workspace); email (a member's personal workspace) " +
      'with workspace (a name) for another of theirs; or workspace alone when exactly one workspace has that name (409 lists them otherwise). ' +
      'The ledger row records the admin as the acting user.',
    access: 'admin',
    workspace: 'self',
    headers: idempotencyHeader,
    body: adjustBody,
    responses: {
      201: adjustAnswer,
      200: { description: 'The key was used before: nothing changed, the earlier result', schema: adjustAnswer },
      404: { description: 'No such user or workspace', schema: errorBody },
      409: { description: 'The key was used for a different change, or the workspace name is ambiguous (the message lists the matches)', schema: errorBody },
    },
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
      { workspaceId: body.workspaceId, userId: body.userId, email: body.email, workspace: body.workspace, amount: body.amount, reason: body.reason, idempotencyKey: key },
    );
    ctx.status = result.replayed ? 200 : 201;
    ctx.body = { success: true, data: result };
  });

  return router;
}
