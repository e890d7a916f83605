import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { INVITABLE_ROLES, WORKSPACE_MSG, WORKSPACE_ROLES } from '../../domain/workspaceRoles';
import { MAX_CLIPS_IN_FLIGHT_CAP } from '../../domain/clipGeneration';
import { APPROVAL_POLICY_MSG, MAX_NAMED_APPROVERS } from '../../domain/approvalPolicy';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { contentServicesFor } from '../../services/content/contentServices';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import { acceptInvitation, createInvitation, invitationLink, listInvitations, lookupInvitation, revokeInvitation } from '../../services/workspaces/invitations';
import { sendInvitationMail } from '../../services/workspaces/invitationMail';
import { requestCredits } from '../../services/workspaces/creditRequests';
import { changeMemberRole, listMembers, removeMember, transferOwnership } from '../../services/workspaces/members';
import { TEAM_CODES, TEAM_MSG } from '../../services/workspaces/messages';
import { createWorkspace, deleteWorkspace, listWorkspaces, renameWorkspace, setApprovalPolicy, setClipCap } from '../../services/workspaces/workspaces';
import type { AppDeps } from '../deps';
import { actionLimited, describeRoute, errorBody, okBody } from '../openapi/describe';
import { ActionLimiter } from '../../services/platform/actionLimiter';
import { currentUser, lookupSession, requireAuth } from '../middleware/auth';
import { parse, parseBody, requiredString, RequestError, singleLine } from '../validation';
import { workspaceGrant } from '../workspace';
import { setTwoFactorRequired } from '../../services/workspaces/twoFactorPolicy';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Workspaces';

const workspaceName = singleLine(z.string({ error: WORKSPACE_MSG.nameRequired }).trim(), 'Workspace name')
  .min(1, { error: WORKSPACE_MSG.nameRequired })
  .max(100, { error: WORKSPACE_MSG.nameTooLong });
const nameBody = z.object({ name: workspaceName });
const CLIP_CAP_MSG = `maxClipsInFlight must be a whole number from 1 to ${MAX_CLIPS_IN_FLIGHT_CAP}, or null for no cap`;
const clipCapBody = z.object({
  maxClipsInFlight: z
    .number({ error: CLIP_CAP_MSG })
    .int({ error: CLIP_CAP_MSG })
    .min(1, { error: CLIP_CAP_MSG })
    .max(MAX_CLIPS_IN_FLIGHT_CAP, { error: CLIP_CAP_MSG })
    .nullable(),
});
const approvalPolicyBody = z.object({
  approvalPolicy: z.discriminatedUnion(
    'kind',
    [
      z.object({ kind: z.literal('any') }),
      z.object({ kind: z.literal('count'), count: z.union([z.literal(2), z.literal(3)], { error: APPROVAL_POLICY_MSG.policyInvalid }) }),
      z.object({
        kind: z.literal('named'),
        userIds: z
          .array(z.string().regex(UUID, { error: APPROVAL_POLICY_MSG.approverNotMember }).transform((id) => id.toLowerCase()), { error: APPROVAL_POLICY_MSG.policyInvalid })
          .min(1, { error: APPROVAL_POLICY_MSG.policyInvalid })
          .max(MAX_NAMED_APPROVERS, { error: APPROVAL_POLICY_MSG.policyInvalid }),
      }),
    ],
    { error: APPROVAL_POLICY_MSG.policyInvalid },
  ),
});
const twoFactorPolicyBody = z.object({ required: z.boolean({ error: 'required must be true or false' }) });
const roleBody = z.object({ role: z.enum(WORKSPACE_ROLES, { error: TEAM_MSG.memberRoleInvalid }) });
const transferBody = z.object({ userId: requiredString('userId') });
const inviteBody = z.object({
  email: singleLine(requiredString('E-mail').trim(), 'E-mail')
    .min(1, { error: TEAM_MSG.emailRequired })
    .max(254)
    .pipe(z.email({ error: TEAM_MSG.emailInvalid })),
  role: z.enum(INVITABLE_ROLES, { error: TEAM_MSG.roleInvalid }),
});

const workspaceParams = z.object({ id: z.string() });
const memberParams = z.object({ id: z.string(), userId: z.string() });
const invitationParams = z.object({ id: z.string(), invitationId: z.string() });
const tokenParams = z.object({ token: z.string() });

const roleSchema = z.enum(WORKSPACE_ROLES);
const approvalPolicyView = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('any') }),
    z.object({ kind: z.literal('count'), count: z.union([z.literal(2), z.literal(3)]) }),
    z.object({ kind: z.literal('named'), userIds: z.array(z.string()) }),
  ])
  .meta({ id: 'ApprovalPolicy' });
const workspaceView = z
  .object({
    id: z.string(),
    name: z.string(),
    personal: z.boolean(),
    role: roleSchema,
    memberCount: z.number().int(),
    approvalPolicy: approvalPolicyView,
    maxClipsInFlight: z.number().int().nullable().meta({ description: 'The most clips its members may have pending or processing together; null: no cap beyond the credits' }),
    twoFactorRequired: z.boolean().meta({ description: 'Its owners require two-factor sign-in of every member' }),
  })
  .meta({ id: 'Workspace' });
const memberView = z
  .object({ userId: z.string(), email: z.string(), name: z.string(), role: roleSchema, joinedAt: z.string() })
  .meta({ id: 'WorkspaceMember' });
const invitationView = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(INVITABLE_ROLES),
    invitedBy: z.object({ name: z.string(), email: z.string() }).nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  })
  .meta({ id: 'WorkspaceInvitation' });
const workspaceAnswer = z.object({ success: z.literal(true), workspace: workspaceView });
const notFound = { description: 'Not a member of the workspace (or no such workspace, member or invitation)', schema: errorBody };
const lastOwner = { description: 'The workspace would be left without an owner (LAST_OWNER), or the personal workspace cannot be deleted', schema: errorBody };
const gone = { description: 'The invitation expired, was withdrawn or was already used (INVITATION_EXPIRED, INVITATION_REVOKED, INVITATION_USED)', schema: errorBody };

/** The `:id` of a workspace route: anything that is not a workspace id is a workspace that does not exist (404). */
function workspaceIdOf(ctx: Context): string {
  const { id } = parse(workspaceParams, ctx.params);
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  return id.toLowerCase();
}

function memberIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new RequestError(404, TEAM_MSG.memberNotFound, TEAM_CODES.memberNotFound);
  return raw.toLowerCase();
}

/** The grant for `action` in the workspace the path names (the `workspaceId` the access module reads). */
async function grantFor(ctx: Context, deps: AppDeps, workspaceId: string, action: Parameters<typeof workspaceGrant>[2], target: { leaving?: boolean } = {}) {
  ctx.query = { ...ctx.query, workspaceId };
  return workspaceGrant(ctx, deps, action, target);
}

/**
 * /api/workspaces: the user's workspaces, creating, renaming and deleting one, its members (roles, removal, leaving,
 * ownership transfer) and invitations; /api/invitations/:token: what an invitation is for (public) and accepting it.
 * Every decision is the access module's (services/workspaces/access.ts); the owner rules are the members service's,
 * under the workspace's lock.
 */
export function workspacesRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const client = () => getTemporalClient(deps.config);
  const limiter = new ActionLimiter(deps.knex, deps.actionLimits);

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces',
    tag: TAG,
    summary: "The user's workspaces: the personal one first, then the others by name, with the user's role in each",
    access: 'session',
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), workspaces: z.array(workspaceView) }) },
  });
  router.get('/api/workspaces', auth, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, workspaces: await listWorkspaces(deps.knex, currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces',
    tag: TAG,
    summary: 'Create a team workspace (the caller is its owner; it starts with 0 credits)',
    access: 'session',
    workspace: 'self',
    body: nameBody,
    responses: { 201: workspaceAnswer, 429: actionLimited },
  });
  router.post('/api/workspaces', auth, async (ctx) => {
    const { name } = parseBody(ctx, nameBody);
    const user = currentUser(ctx);
    await limiter.take('workspaceCreate', { person: user.id });
    const workspace = await createWorkspace(deps.knex, { id: user.id, email: user.email }, name);
    ctx.status = 201;
    ctx.body = { success: true, workspace };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/workspaces/:id',
    tag: TAG,
    summary: 'Rename the workspace (owner)',
    access: 'session',
    workspace: 'own',
    params: workspaceParams,
    body: nameBody,
    responses: { 200: workspaceAnswer, 404: notFound },
  });
  router.patch('/api/workspaces/:id', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { name } = parseBody(ctx, nameBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'own');
    ctx.body = { success: true, workspace: await renameWorkspace(deps.knex, { workspaceId: grant.workspaceId, userId: grant.userId, name }) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/clip-cap',
    tag: TAG,
    summary: "Set or clear the workspace's cap on clips in flight (owners and admins)",
    description:
      'One clip at a time is per member (the specs); with a cap, a start that would make more than `maxClipsInFlight` clips pending or processing in the workspace is refused with 409 WORKSPACE_CLIP_CAP. Running clips are never stopped by a lower cap.',
    access: 'session',
    workspace: 'billing',
    params: workspaceParams,
    body: clipCapBody,
    responses: { 200: workspaceAnswer, 404: notFound },
  });
  router.put('/api/workspaces/:id/clip-cap', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { maxClipsInFlight } = parseBody(ctx, clipCapBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'billing');
    ctx.body = { success: true, workspace: await setClipCap(deps.knex, { workspaceId: grant.workspaceId, userId: grant.userId, maxClipsInFlight }) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/approval-policy',
    tag: TAG,
    summary: 'Set who must approve generated items (owners and admins)',
    description:
      '`any`: any member who may approve (the default, the specs\' behaviour); `count`: 2 or 3 different members; `named`: each listed member (members, admins or owners of the workspace). Items already pending keep the policy they started with. 400 APPROVAL_POLICY_INVALID for a named approver who may not approve here, 409 when fewer members may approve than `count`.',
    access: 'session',
    workspace: 'billing',
    params: workspaceParams,
    body: approvalPolicyBody,
    responses: { 200: workspaceAnswer, 404: notFound, 409: { description: 'Fewer members may approve than the policy needs (APPROVAL_POLICY_INVALID)', schema: errorBody } },
  });
  router.put('/api/workspaces/:id/approval-policy', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { approvalPolicy } = parseBody(ctx, approvalPolicyBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'billing');
    ctx.body = { success: true, workspace: await setApprovalPolicy(deps.knex, { workspaceId: grant.workspaceId, userId: grant.userId, policy: approvalPolicy }) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/two-factor-policy',
    tag: TAG,
    summary: 'Require two-factor sign-in of every member, or stop requiring it (owners)',
    description:
      'While it is required, a member without two-factor sign-in is refused in this workspace with 403 TWO_FACTOR_REQUIRED until they set it up (they may still leave). The owner turning it on needs it first (409 OWNER_NEEDS_TWO_FACTOR); a personal workspace has no such setting (400 PERSONAL_WORKSPACE).',
    access: 'session',
    workspace: 'own',
    params: workspaceParams,
    body: twoFactorPolicyBody,
    responses: {
      200: workspaceAnswer,
      400: { description: 'A personal workspace (PERSONAL_WORKSPACE)', schema: errorBody },
      404: notFound,
      409: { description: 'The owner has no two-factor sign-in yet (OWNER_NEEDS_TWO_FACTOR)', schema: errorBody },
    },
  });
  router.put('/api/workspaces/:id/two-factor-policy', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { required } = parseBody(ctx, twoFactorPolicyBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'own');
    ctx.body = { success: true, workspace: await setTwoFactorRequired(deps.knex, { workspaceId: grant.workspaceId, userId: grant.userId, required }) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id',
    tag: TAG,
    summary: 'Delete a team workspace (owner): its running jobs are cancelled, its files and rows removed',
    description: 'The personal workspace goes only with its account (409).',
    access: 'session',
    workspace: 'own',
    params: workspaceParams,
    responses: { 200: okBody, 404: notFound, 409: lastOwner },
  });
  router.delete('/api/workspaces/:id', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const grant = await grantFor(ctx, deps, workspaceId, 'own');
    await deleteWorkspace({ knex: deps.knex, storage: contentServicesFor(deps).storage, client, logger: ctx.state.log ?? deps.logger }, { workspaceId: grant.workspaceId, userId: grant.userId });
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/members',
    tag: TAG,
    summary: "The workspace's members with their roles, owners first",
    access: 'session',
    workspace: 'read',
    params: workspaceParams,
    responses: { 200: z.object({ success: z.literal(true), members: z.array(memberView) }), 404: notFound },
  });
  router.get('/api/workspaces/:id/members', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const grant = await grantFor(ctx, deps, workspaceId, 'read');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, members: await listMembers(deps.knex, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/credit-requests',
    tag: TAG,
    summary: "Ask the workspace's owners and admins for credits (a member who cannot buy): told in their open apps and, with SMTP set up, by e-mail",
    access: 'session',
    workspace: 'read',
    params: workspaceParams,
    responses: {
      200: z.object({ success: z.literal(true), askedOf: z.array(z.object({ name: z.string(), role: z.enum(WORKSPACE_ROLES) })), emailed: z.boolean(), message: z.string() }),
      404: notFound,
      409: { description: 'The caller can buy credits here themselves (CAN_BUY_YOURSELF)', schema: errorBody },
      429: actionLimited,
    },
  });
  router.post('/api/workspaces/:id/credit-requests', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const grant = await grantFor(ctx, deps, workspaceId, 'read');
    const user = currentUser(ctx);
    await limiter.take('creditRequest', { person: user.id });
    const workspace = (await deps.knex('workspaces').where({ id: grant.workspaceId }).first('name')) as { name: string };
    const answer = await requestCredits(
      { knex: deps.knex, config: deps.config, logger: ctx.state.log ?? deps.logger },
      { workspaceId: grant.workspaceId, workspaceName: workspace.name, requester: { id: user.id, name: user.name, email: user.email } },
    );
    ctx.body = { success: true, ...answer, message: WORKSPACE_MSG.buyersAsked(answer.askedOf.map((a) => a.name), answer.emailed) };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/workspaces/:id/members/:userId',
    tag: TAG,
    summary: "Change a member's role (admins and owners; only an owner makes or unmakes an owner)",
    description: 'A workspace always keeps at least one owner: demoting the last one is refused with 409 LAST_OWNER.',
    access: 'session',
    workspace: 'manageMembers',
    params: memberParams,
    body: roleBody,
    responses: { 200: z.object({ success: z.literal(true), member: memberView }), 404: notFound, 409: lastOwner },
  });
  router.patch('/api/workspaces/:id/members/:userId', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { role } = parseBody(ctx, roleBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'manageMembers');
    const userId = memberIdOf(parse(memberParams, ctx.params).userId);
    ctx.body = { success: true, member: await changeMemberRole(deps.knex, { workspaceId: grant.workspaceId, actorId: grant.userId, userId, role }) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/members/:userId',
    tag: TAG,
    summary: 'Remove a member (admins and owners), or leave the workspace (any member, their own id)',
    description:
      "The removed member's running jobs in the workspace are cancelled (their reservations go back to the balance) and their live update streams of it end at once. The last owner can be neither removed nor leave (409 LAST_OWNER).",
    access: 'session',
    workspace: 'manageMembers',
    params: memberParams,
    responses: { 200: okBody, 404: notFound, 409: lastOwner },
  });
  router.delete('/api/workspaces/:id/members/:userId', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const user = currentUser(ctx);
    const userId = memberIdOf(parse(memberParams, ctx.params).userId);
    // leaving needs only membership; removing someone else needs manageMembers
    const grant = await grantFor(ctx, deps, workspaceId, userId === user.id ? 'read' : 'manageMembers', { leaving: userId === user.id });
    await removeMember({ knex: deps.knex, client, logger: ctx.state.log ?? deps.logger }, { workspaceId: grant.workspaceId, actorId: grant.userId, userId });
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/transfer',
    tag: TAG,
    summary: 'Transfer ownership (owner): the member becomes an owner, the caller an admin',
    access: 'session',
    workspace: 'own',
    params: workspaceParams,
    body: transferBody,
    responses: { 200: okBody, 404: notFound, 409: { description: 'Transfer to oneself', schema: errorBody } },
  });
  router.post('/api/workspaces/:id/transfer', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const body = parseBody(ctx, transferBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'own');
    await transferOwnership(deps.knex, { workspaceId: grant.workspaceId, actorId: grant.userId, userId: memberIdOf(body.userId) });
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/invitations',
    tag: TAG,
    summary: "The workspace's invitations, newest first, with their status",
    access: 'session',
    workspace: 'manageMembers',
    params: workspaceParams,
    responses: { 200: z.object({ success: z.literal(true), invitations: z.array(invitationView) }), 404: notFound },
  });
  router.get('/api/workspaces/:id/invitations', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const grant = await grantFor(ctx, deps, workspaceId, 'manageMembers');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, invitations: await listInvitations(deps.knex, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/invitations',
    tag: TAG,
    summary: 'Invite someone by e-mail with a role (admins and owners): the link to copy, e-mailed when SMTP_URL is set',
    description:
      'The link works once, for 7 days, for a session with the invited e-mail. Inviting an address that has a pending invitation replaces it (the old link stops working). `emailed` says whether the e-mail was sent; a failed send never fails the invitation.',
    access: 'session',
    workspace: 'manageMembers',
    params: workspaceParams,
    body: inviteBody,
    responses: {
      201: z.object({ success: z.literal(true), invitation: invitationView, link: z.string(), emailed: z.boolean() }),
      404: notFound,
      409: { description: 'The address is already a member (ALREADY_MEMBER)', schema: errorBody },
      429: actionLimited,
    },
  });
  router.post('/api/workspaces/:id/invitations', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const body = parseBody(ctx, inviteBody);
    const grant = await grantFor(ctx, deps, workspaceId, 'manageMembers');
    await limiter.take('invite', { person: grant.userId, workspace: grant.workspaceId });
    const created = await createInvitation(deps.knex, { workspaceId: grant.workspaceId, actorId: grant.userId, email: body.email, role: body.role });
    const link = invitationLink(deps.config.publicUrl, created.token);
    const emailed = await sendInvitationMail(
      deps.config,
      { to: created.invitation.email, workspaceName: created.workspaceName, inviterName: created.inviterName, role: created.invitation.role, link, expiresAt: created.invitation.expiresAt },
      ctx.state.log ?? deps.logger,
    );
    ctx.status = 201;
    ctx.body = { success: true, invitation: created.invitation, link, emailed };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/invitations/:invitationId',
    tag: TAG,
    summary: 'Withdraw a pending invitation (admins and owners): its link stops working',
    access: 'session',
    workspace: 'manageMembers',
    params: invitationParams,
    responses: { 200: okBody, 404: notFound, 409: { description: 'The invitation is no longer pending', schema: errorBody } },
  });
  router.delete('/api/workspaces/:id/invitations/:invitationId', auth, async (ctx) => {
    const workspaceId = workspaceIdOf(ctx);
    const { invitationId } = parse(invitationParams, ctx.params);
    const grant = await grantFor(ctx, deps, workspaceId, 'manageMembers');
    if (!UUID.test(invitationId)) throw new RequestError(404, TEAM_MSG.invitationNotFound, TEAM_CODES.invitationNotFound);
    await revokeInvitation(deps.knex, { workspaceId: grant.workspaceId, actorId: grant.userId, invitationId });
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/invitations/:token',
    tag: TAG,
    summary: 'What an invitation link is for: workspace, invited e-mail, role, inviter and expiry (no session needed)',
    description:
      'With the session of the account that accepted it (and is still a member), a used invitation answers 200 with `joinedWorkspaceId`, the workspace to open; ' +
      'for anyone else it is 410 INVITATION_USED.',
    access: 'public',
    params: tokenParams,
    responses: {
      200: z.object({
        success: z.literal(true),
        invitation: z.object({
          workspaceName: z.string(),
          email: z.string(),
          role: z.enum(INVITABLE_ROLES),
          inviterName: z.string(),
          expiresAt: z.string(),
          joinedWorkspaceId: z
            .string()
            .nullable()
            .meta({ description: 'set when the signed-in user already accepted this invitation and is a member: the workspace joined' }),
        }),
      }),
      404: { description: 'No such invitation', schema: errorBody },
      410: gone,
      429: actionLimited,
    },
  });
  router.get('/api/invitations/:token', async (ctx) => {
    const { token } = parse(tokenParams, ctx.params);
    ctx.set('Cache-Control', 'no-store');
    await limiter.take('invitationLookup', { address: ctx.ip || 'unknown' });
    // public, but a signed-in visitor who accepted it already is told so (the answer varies by session: no-store)
    const viewer = await lookupSession(deps, ctx);
    ctx.body = { success: true, invitation: await lookupInvitation(deps.knex, token, viewer?.id ?? null) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/invitations/:token/accept',
    tag: TAG,
    summary: 'Accept an invitation: the signed-in user (with the invited e-mail) joins the workspace with the invited role',
    access: 'session',
    workspace: 'self',
    params: tokenParams,
    responses: {
      200: z.object({ success: z.literal(true), workspaceId: z.string() }),
      403: { description: "The session's e-mail is not the invited one (INVITATION_WRONG_EMAIL); the text names the invited address", schema: errorBody },
      404: { description: 'No such invitation', schema: errorBody },
      410: gone,
      429: actionLimited,
    },
  });
  router.post('/api/invitations/:token/accept', auth, async (ctx) => {
    const { token } = parse(tokenParams, ctx.params);
    const user = currentUser(ctx);
    await limiter.take('invitationAccept', { person: user.id });
    const accepted = await acceptInvitation(deps.knex, { token, user: { id: user.id, email: user.email } });
    ctx.body = { success: true, workspaceId: accepted.workspaceId };
  });

  return router;
}
