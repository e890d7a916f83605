/**
 * An account's place in workspaces (DESIGN.md "Teams (workspaces)"), as account deletion, the data export and the
 * site admin see it. The account is the workspace: a user's personal workspace has the user's id, and the rows of
 * everything in it name that id.
 *
 * - Deleting an account that is the only owner of a workspace with other members is refused until ownership is
 *   transferred (or the members removed): the workspace would be left without an owner.
 * - A personal workspace whose ownership was transferred to another member survives its user's deletion as a team
 *   workspace; otherwise it goes with the account, and everything in it.
 */
import type { Knex } from 'knex';
import type { SoleOwnedWorkspace } from '../../domain/accountData';
import { isWorkspaceRole, type WorkspaceRole } from '../../domain/workspaceRoles';

type Db = Knex | Knex.Transaction;

/**
 * The workspaces whose only owner is `userId` and that have other members, personal first then by name. Inside a
 * transaction, `lock` first takes the rows of the user's workspaces FOR UPDATE (in id order), the lock every change
 * of a workspace's members takes (services/workspaces/), so no accepted invitation, transfer or role change slips
 * in between this check and what the caller does next.
 */
export async function soleOwnedSharedWorkspaces(db: Db, userId: string, options: { lock?: boolean } = {}): Promise<SoleOwnedWorkspace[]> {
  if (options.lock) {
    await db('workspaces')
      .whereIn('id', db('workspace_members').where({ user_id: userId }).select('workspace_id'))
      .orderBy('id')
      .forUpdate()
      .select('id');
  }
  const rows: Array<{ id: string; name: string; personal_user_id: string | null }> = await db('workspaces as w')
    .join('workspace_members as m', function joinOwn() {
      this.on('m.workspace_id', 'w.id').andOnVal('m.user_id', userId).andOnVal('m.role', 'owner');
    })
    .whereNotExists(function otherOwner() {
      this.select(db.raw('1')).from('workspace_members as o').whereRaw('o.workspace_id = w.id').andWhere('o.role', 'owner').andWhereNot('o.user_id', userId);
    })
    .whereExists(function otherMember() {
      this.select(db.raw('1')).from('workspace_members as x').whereRaw('x.workspace_id = w.id').andWhereNot('x.user_id', userId);
    })
    .orderByRaw('(w.personal_user_id is not null) desc, lower(w.name), w.id')
    .select('w.id', 'w.name', 'w.personal_user_id');
  return rows.map((r) => ({ id: r.id, name: r.name, personal: r.personal_user_id === userId }));
}

/**
 * Whether the user's personal workspace stays when the account goes: another member owns it too (ownership was
 * transferred). Then it is handed over as a team workspace instead of being removed with its content.
 */
export async function personalWorkspaceSurvives(db: Db, userId: string): Promise<boolean> {
  const other = await db('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .where('w.personal_user_id', userId)
    .andWhere('m.role', 'owner')
    .andWhereNot('m.user_id', userId)
    .first('m.user_id');
  return Boolean(other);
}

/**
 * The workspaces a deletion removes with the account, everything in them: the personal workspace unless it survives
 * (see above), and every team workspace the user is the only member of (nobody could reach it any more). A workspace
 * with other members is never among them: the deletion is refused while the user is its only owner, and otherwise
 * it stays with its other members.
 */
export async function workspacesGoingWithAccount(db: Db, userId: string): Promise<string[]> {
  const keepPersonal = await personalWorkspaceSurvives(db, userId);
  const rows: Array<{ id: string }> = await db('workspaces as w')
    .join('workspace_members as m', function joinOwn() {
      this.on('m.workspace_id', 'w.id').andOnVal('m.user_id', userId);
    })
    .whereNotExists(function otherMember() {
      this.select(db.raw('1')).from('workspace_members as x').whereRaw('x.workspace_id = w.id').andWhereNot('x.user_id', userId);
    })
    .modify((q) => {
      if (keepPersonal) q.where((w) => w.whereNull('w.personal_user_id').orWhereNot('w.personal_user_id', userId));
    })
    .orderBy('w.id')
    .select('w.id');
  const ids = rows.map((r) => String(r.id));
  // a personal workspace without its owner's membership (not made by the app, but the user's id names its rows)
  if (!keepPersonal && !ids.includes(userId) && (await db('workspaces').where({ id: userId, personal_user_id: userId }).first('id'))) ids.push(userId);
  return ids;
}

export interface AccountMembership {
  workspaceId: string;
  name: string;
  personal: boolean;
  role: WorkspaceRole;
  memberCount: number;
  joinedAt: string;
}

/** Every workspace the user is a member of, with their role and when they joined: personal first, then by name. */
export async function accountMemberships(db: Db, userId: string): Promise<AccountMembership[]> {
  const rows: Array<{ id: string; name: string; personal_user_id: string | null; role: string; joined_at: Date; member_count: number }> = await db('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .where('m.user_id', userId)
    .orderByRaw('coalesce(w.personal_user_id = ?, false) desc, lower(w.name), w.id', [userId])
    .select(
      'w.id',
      'w.name',
      'w.personal_user_id',
      'm.role',
      'm.created_at as joined_at',
      db.raw('(select count(*)::int from workspace_members c where c.workspace_id = w.id) as member_count'),
    );
  return rows.map((r) => ({
    workspaceId: r.id,
    name: r.name,
    personal: r.personal_user_id === userId,
    role: isWorkspaceRole(r.role) ? r.role : 'viewer',
    memberCount: Number(r.member_count),
    joinedAt: new Date(r.joined_at).toISOString(),
  }));
}
