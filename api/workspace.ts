/**
 * Which workspace a request acts in, and whether its user may (DESIGN.md "Teams (workspaces)"). Every route that
 * touches a workspace's resources calls `workspaceGrant(ctx, deps, action, ...)` first, before it reads or writes
 * anything; the decision itself is services/workspaces/access.ts.
 *
 * The workspace is
 * - the project's, for a route that names a project the user is a member of, and the job's, for a job status route
 *   that names a job of a workspace the user is a member of (the start needed no workspace either);
 * - otherwise the `workspaceId` query parameter, else the `X-Workspace-Id` header, else the user's personal
 *   workspace (whose id is the user's id), so the specs' call shapes keep working for a person on their own.
 *
 * A project of a workspace the user is not a member of is looked for in the request's workspace instead, where it
 * is not: the route answers its usual "not found", exactly as for a project that does not exist.
 */
import type { Knex } from 'knex';
import type { Context } from 'koa';
import type { WorkspaceAction } from '../domain/workspaceRoles';
import { WORKSPACE_HEADER, WORKSPACE_PARAM } from '../domain/workspaceRoles';
import type { ProjectOwnerCache } from '../services/content/projectOwnerCache';
import { authorize, memberRole, type WorkspaceGrant } from '../services/workspaces/access';
import type { MembershipCache } from '../services/workspaces/membershipCache';
import { checkTwoFactorPolicy } from '../services/workspaces/twoFactorPolicy';
import { currentUser, type AuthUser } from './middleware/auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WorkspaceAccessDeps {
  knex: Knex;
  projectOwners?: ProjectOwnerCache;
  memberships?: MembershipCache;
}

export interface RequestGrant extends WorkspaceGrant {
  user: AuthUser;
}

/** The workspace the request names (parameter, then header), or the user's personal workspace. */
export function requestedWorkspaceId(ctx: Context): string {
  const fromQuery = ctx.query[WORKSPACE_PARAM];
  const named = (typeof fromQuery === 'string' && fromQuery) || ctx.get(WORKSPACE_HEADER) || '';
  return named.trim() || currentUser(ctx).id;
}

async function projectWorkspace(deps: WorkspaceAccessDeps, projectId: string): Promise<string | null> {
  if (!UUID.test(projectId)) return null;
  if (deps.projectOwners) return deps.projectOwners.ownerOf(deps.knex, projectId);
  const row = await deps.knex('projects').where({ id: projectId }).first<{ workspace_id: string } | undefined>('workspace_id');
  return row?.workspace_id ?? null;
}

function roleIn(deps: WorkspaceAccessDeps, workspaceId: string, userId: string) {
  return deps.memberships ? deps.memberships.roleOf(deps.knex, workspaceId, userId) : memberRole(deps.knex, workspaceId, userId);
}

/**
 * The grant for the request's user to do `action` in the request's workspace (the project's when `projectId` names
 * one of theirs). Throws 404 when the user is not a member of that workspace, 403 when their role does not allow
 * `action`, and 403 TWO_FACTOR_REQUIRED when the workspace requires two-factor sign-in and the user has none
 * (services/workspaces/twoFactorPolicy.ts; `leaving` skips that check); each before anything is changed.
 */
export async function workspaceGrant(
  ctx: Context,
  deps: WorkspaceAccessDeps,
  action: WorkspaceAction,
  target: { projectId?: string | null; jobWorkspace?: () => Promise<string | null>; leaving?: boolean } = {},
): Promise<RequestGrant> {
  const user = currentUser(ctx);
  let workspaceId = requestedWorkspaceId(ctx);
  // the named project's or job's workspace, when the user is a member of it
  const owner = target.projectId ? await projectWorkspace(deps, target.projectId) : target.jobWorkspace ? await target.jobWorkspace() : null;
  if (owner && owner !== workspaceId.toLowerCase() && (await roleIn(deps, owner, user.id))) workspaceId = owner;
  const grant = await authorize(deps.knex, { userId: user.id, workspaceId, action }, { memberships: deps.memberships });
  // a workspace that requires two-factor sign-in: a member without it sets it up first (leaving stays open)
  if (!target.leaving) await checkTwoFactorPolicy(deps.knex, grant.workspaceId, user.id);
  return { ...grant, user };
}
