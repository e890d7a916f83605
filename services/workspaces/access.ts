/**
 * The one place that decides what a user may do in a workspace (DESIGN.md "Teams (workspaces)"): from the user's
 * membership and role, and the action's lowest role (domain/workspaceRoles.ts).
 *
 * - not a member (or no such workspace): 404, exactly as for a resource that does not exist, so a non-member learns
 *   nothing about the workspace;
 * - a member whose role does not allow the action: 403;
 * - otherwise the role, for the caller to act with.
 *
 * It decides before anything is written, so a refused call changes nothing. Membership is read on every call
 * (one primary-key look-up, or the API's exact in-process cache of it: services/workspaces/membershipCache.ts), so a
 * removed member or a changed role takes effect on their very next request.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { roleAllows, WORKSPACE_MSG, type WorkspaceAction, type WorkspaceRole, isWorkspaceRole } from '../../domain/workspaceRoles';
import { readRole, type MembershipCache } from './membershipCache';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class WorkspaceNotFoundError extends DomainError {
  constructor() {
    super(404, 'WORKSPACE_NOT_FOUND', WORKSPACE_MSG.notFound);
  }
}

export class WorkspaceForbiddenError extends DomainError {
  constructor(
    readonly role: WorkspaceRole,
    readonly action: WorkspaceAction,
  ) {
    super(403, 'WORKSPACE_FORBIDDEN', WORKSPACE_MSG.forbidden(role, action));
  }
}

export interface WorkspaceGrant {
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
}

/** The user's role in the workspace, or null when they are not a member (or the id is not a workspace's). */
export async function memberRole(db: Db, workspaceId: string, userId: string): Promise<WorkspaceRole | null> {
  if (!UUID.test(workspaceId)) return null;
  return readRole(db, workspaceId, userId);
}

/**
 * The decision itself, from the user's role in the workspace (null: not a member): the grant, or
 * WorkspaceNotFoundError (404) for a non-member and WorkspaceForbiddenError (403) for a role that does not allow it.
 */
export function decide(input: { userId: string; workspaceId: string; action: WorkspaceAction }, role: WorkspaceRole | null): WorkspaceGrant {
  if (!role) throw new WorkspaceNotFoundError();
  if (!roleAllows(role, input.action)) throw new WorkspaceForbiddenError(role, input.action);
  return { workspaceId: input.workspaceId.toLowerCase(), userId: input.userId, role };
}

/**
 * The grant for `userId` to do `action` in `workspaceId` (see decide), reading the membership through `db`; inside a
 * transaction, `forShare` locks the membership row so a concurrent removal waits for the action to commit.
 * `memberships` (the API's in-process cache) answers instead of a read when given and `db` is no transaction.
 */
export async function authorize(
  db: Db,
  input: { userId: string; workspaceId: string; action: WorkspaceAction },
  options: { forShare?: boolean; memberships?: MembershipCache } = {},
): Promise<WorkspaceGrant> {
  const { userId, workspaceId } = input;
  if (!UUID.test(workspaceId) || !UUID.test(userId)) throw new WorkspaceNotFoundError();
  let role: WorkspaceRole | null;
  if (options.forShare) {
    const row = await db('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).forShare().first<{ role: string } | undefined>('role');
    role = row && isWorkspaceRole(row.role) ? row.role : null;
  } else if (options.memberships && !db.isTransaction) {
    role = await options.memberships.roleOf(db as Knex, workspaceId, userId);
  } else {
    role = await readRole(db, workspaceId, userId);
  }
  return decide(input, role);
}
