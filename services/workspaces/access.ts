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
 * (one primary-key look-up), so a removed member or a changed role takes effect on their very next request.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { roleAllows, WORKSPACE_MSG, type WorkspaceAction, type WorkspaceRole, isWorkspaceRole } from '../../domain/workspaceRoles';

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
  const row = await db('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first<{ role: string } | undefined>('role');
  return row && isWorkspaceRole(row.role) ? row.role : null;
}

/**
 * The grant for `userId` to do `action` in `workspaceId`, or WorkspaceNotFoundError (404) for a non-member and
 * WorkspaceForbiddenError (403) for a role that does not allow it. Inside a transaction, `forUpdate` locks the
 * membership row so a concurrent removal waits for the action to commit (or the action waits for the removal).
 */
export async function authorize(
  db: Db,
  input: { userId: string; workspaceId: string; action: WorkspaceAction },
  options: { forShare?: boolean } = {},
): Promise<WorkspaceGrant> {
  const { userId, workspaceId, action } = input;
  if (!UUID.test(workspaceId)) throw new WorkspaceNotFoundError();
  const query = db('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first<{ role: string } | undefined>('role');
  const row = await (options.forShare ? query.forShare() : query);
  if (!row || !isWorkspaceRole(row.role)) throw new WorkspaceNotFoundError();
  if (!roleAllows(row.role, action)) throw new WorkspaceForbiddenError(row.role, action);
  return { workspaceId: workspaceId.toLowerCase(), userId, role: row.role };
}
