import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { parseBody, parseQuery } from '../validation';
import type { ApprovalDecisionResponse, ApprovalListItem, ApprovalStats } from '../../domain/approvals';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { workspaceGrant } from '../workspace';
import { approvalServiceFor } from '../generationServices';

// the specs' calls may carry the user's own id; any other id is refused by assertSelf
const selfQuery = z.object({ userId: z.string().optional() }).strict();
const decisionBody = z.object({
  approvalId: z.string({ error: 'approvalId is required' }).trim().min(1, 'approvalId is required'),
  userId: z.string().optional(),
});

const person = z.object({ user_id: z.string(), name: z.string() });
const approvalProgress = z
  .object({
    policy: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('any') }),
      z.object({ kind: z.literal('count'), count: z.union([z.literal(2), z.literal(3)]) }),
      z.object({ kind: z.literal('named'), userIds: z.array(z.string()) }),
    ]),
    needed: z.number().int().meta({ description: 'Approvals the policy needs in all (1 for any member)' }),
    approved_by: z.array(person.extend({ at: z.string() })),
    awaiting: z.array(person).meta({ description: 'Named approvers still awaited' }),
    you_approved: z.boolean(),
    you_may_approve: z.boolean().meta({ description: "The item's policy lets the caller approve it (their role aside)" }),
  })
  .meta({ id: 'ApprovalProgress', description: 'Who must approve the item (the policy it started with) and who has' });

const approvalItem = answers<ApprovalListItem>()(
  z.object({
    id: z.string(),
    user_id: z.string(),
    project_id: z.string(),
    project_name: z.string().nullable(),
    content_type: z.enum(['image', 'clip', 'assembly']),
    status: z.literal('pending'),
    aspect_ratio: z.string().nullable(),
    file_name: z.string(),
    original_file_url: z.null().meta({
      description: 'Always null while the item is pending (pay on approval): the queue shows the watermarked preview; the original is linked from the library once approved',
    }),
    watermarked_file_url: z.string().nullable(),
    approval_deadline: z.string(),
    cost: z.number(),
    remaining_cost: z.number(),
    created_at: z.string(),
    prompt: z.string().nullable(),
    approvals: approvalProgress,
    version: z.number().int().meta({ description: '1, or the next version of an item rejected with a request for changes' }),
    previous_approval_id: z.string().nullable().meta({ description: 'The version before it (rejected with a request for changes)' }),
    clip_settings: z.object({ effect: z.string(), platform: z.string() }).nullable().meta({ description: "A clip's effect and platform" }),
  }),
);
const approvalStats = answers<ApprovalStats>()(
  z.object({
    pending_count: z.number().int().meta({ description: 'Items waiting in the approval queue (what GET /api/approvals/list holds)' }),
    limit: z.number().int(),
    total_pending_cost: z.number().meta({ description: "The queue's remaining cost" }),
    in_progress_count: z.number().int().meta({ description: 'Generations still running, which the pending cap counts too' }),
    in_progress_cost: z.number().meta({ description: 'Credits those running generations hold' }),
  }),
);
const decisionAnswer = answers<ApprovalDecisionResponse>()(
  z.object({
    success: z.literal(true),
    error: z.null(),
    code: z.string().nullable(),
    contentId: z.string().nullable().meta({ description: 'The saved item; null after a rejection, or while the item waits for more approvals' }),
    warning: z.string().nullable(),
    approvals: approvalProgress.optional().meta({ description: 'An approval under a policy of several approvals: where the item stands now' }),
  }),
);
const decisionRefusals = {
  403: {
    description: "The caller's role in the workspace does not allow approving or rejecting (viewer), or the item's policy names other approvers (APPROVAL_NOT_AN_APPROVER): nothing changes",
    schema: errorBody,
  },
  404: { description: 'No pending approval with this id in this workspace, or the caller is not a member of the workspace', schema: errorBody },
  409: { description: 'The item is no longer pending, or the caller has already approved it (APPROVAL_ALREADY_APPROVED)', schema: errorBody },
};

/**
 * /api/approvals/*: the workspace's queue, its stats, and approve / reject (DESIGN.md "Teams (workspaces)").
 * List and stats are 'read' (every member, viewers too, sees the queue); approve and reject are 'approve' (member and
 * up), decided for the workspace of the item's project when the caller is a member there, else the request's.
 */
export function approvalsRouter(deps: AppDeps): Router {
  const service = approvalServiceFor(deps);
  const router = new Router();
  router.use(requireAuth(deps));

  describeRoute(router, {
    method: 'get',
    path: '/api/approvals/list',
    tag: 'Approvals',
    summary: "The workspace's pending items, with preview links",
    description:
      'Each item links its watermarked preview only: `original_file_url` stays null until the item is approved, and no file route serves the original of an item that is not approved.',
    access: 'session',
    workspace: 'read',
    query: selfQuery,
    responses: { 200: z.object({ success: z.literal(true), data: z.array(approvalItem), error: z.null() }) },
  });
  router.get('/api/approvals/list', async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: await service.list(grant.workspaceId, grant.userId), error: null };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/approvals/stats',
    tag: 'Approvals',
    summary: 'Pending count and limit (what the start rule counts)',
    access: 'session',
    workspace: 'read',
    query: selfQuery,
    responses: { 200: z.object({ success: z.literal(true), data: approvalStats }) },
  });
  router.get('/api/approvals/stats', async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    const grant = await workspaceGrant(ctx, deps, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: await service.stats(grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/approvals/approve',
    tag: 'Approvals',
    summary: 'Approve a pending item: once its approval policy is met, its credits are charged and it is saved into the project',
    access: 'session',
    workspace: 'approve',
    body: decisionBody,
    responses: { 200: decisionAnswer, ...decisionRefusals },
  });
  router.post('/api/approvals/approve', async (ctx) => {
    const body = parseBody(ctx, decisionBody);
    assertSelf(ctx, body.userId);
    const grant = await workspaceGrant(ctx, deps, 'approve', { projectId: await service.projectOf(body.approvalId) });
    ctx.body = await service.approve(grant.workspaceId, body.approvalId, grant.userId);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/approvals/reject',
    tag: 'Approvals',
    summary: 'Reject a pending item: its credits are released (needs a past purchase)',
    access: 'session',
    workspace: 'approve',
    body: decisionBody,
    responses: { 200: decisionAnswer, ...decisionRefusals, 429: { description: 'Rejections paused (REJECTION_STREAK_COOLDOWN)', schema: errorBody } },
  });
  router.post('/api/approvals/reject', async (ctx) => {
    const body = parseBody(ctx, decisionBody);
    assertSelf(ctx, body.userId);
    const grant = await workspaceGrant(ctx, deps, 'approve', { projectId: await service.projectOf(body.approvalId) });
    ctx.body = await service.reject(grant.workspaceId, body.approvalId, grant.userId);
  });

  return router;
}
