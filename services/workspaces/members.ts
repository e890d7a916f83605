/**
 * A workspace's members: the list, role changes, removal (and leaving), and ownership transfer.
 *
 * Every change takes the workspace row's lock first (`select ... for update` on `workspaces`) and re-checks the
 * caller's grant under it with the access module, so changes of one workspace's members run one after another:
 * two owners demoting each other (or themselves) at once can never leave it without an owner, and an owner
 * demoted a moment ago cannot act as one. The owner rules live here, not in the routes: only an owner makes or
 * unmakes an owner, and the last owner can be neither demoted nor removed (409).
 *
 * A removed member loses access with the commit: the access check reads the membership on every request (or the
 * API's cache of it, dropped by the membership table's note), and their event streams of the workspace re-check on
 * the same note (rs_members_changed, also sent here so it does not depend on the trigger) and end. Their running
 * jobs in the workspace are then cancelled, and the jobs' own clean-up gives their reservations back.
 */
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { DomainError } from '../../domain/errors';
import { isWorkspaceRole, roleRank, WORKSPACE_MSG, type WorkspaceRole } from '../../domain/workspaceRoles';
import { MEMBERS_CHANGED_CHANNEL, publishEvent } from '../platform/events';
import { authorize } from './access';
import { TEAM_CODES, TEAM_MSG } from './messages';
import { cancelRuns, runningWorkflowIds } from './workspaceJobs';

type Db = Knex | Knex.Transaction;

export interface WorkspaceMemberView {
  userId: string;
  email: string;
  name: string;
  role: WorkspaceRole;
  joinedAt: string;
}

interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  role: string;
  created_at: Date | string;
}

function toView(row: MemberRow): WorkspaceMemberView {
  return {
    userId: row.user_id,
    email: row.email,
    name: row.name ?? '',
    role: isWorkspaceRole(row.role) ? row.role : 'viewer',
    joinedAt: new Date(row.created_at).toISOString(),
  };
}

function memberQuery(db: Db, workspaceId: string) {
  return db('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    // a user's name is their personal account's (profiles.id = user id)
    .leftJoin('profiles as p', 'p.id', 'm.user_id')
    .where('m.workspace_id', workspaceId)
    .select('m.user_id', 'u.email', 'p.name', 'm.role', 'm.created_at');
}

/** The members, owners first (then admins, members, viewers), each group by name and e-mail. */
export async function listMembers(db: Db, workspaceId: string): Promise<WorkspaceMemberView[]> {
  const rows = (await memberQuery(db, workspaceId)) as MemberRow[];
  return rows
    .map(toView)
    .sort((a, b) => roleRank(b.role) - roleRank(a.role) || (a.name || a.email).localeCompare(b.name || b.email) || a.email.localeCompare(b.email));
}

async function memberView(db: Db, workspaceId: string, userId: string): Promise<WorkspaceMemberView> {
  const row = (await memberQuery(db, workspaceId).andWhere('m.user_id', userId).first()) as MemberRow | undefined;
  if (!row) throw new DomainError(404, TEAM_CODES.memberNotFound, TEAM_MSG.memberNotFound);
  return toView(row);
}

/**
 * Tells the API processes, on commit, that the user's membership of the workspace ended or changed: their event
 * streams of it re-check (services/platform/events.ts), and the membership cache drops it. The table's trigger sends
 * the same note; sending it here too keeps this independent of it.
 */
export async function notifyMembershipChanged(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<void> {
  await trx.raw('select pg_notify(?, ?)', [MEMBERS_CHANGED_CHANNEL, `${workspaceId.toLowerCase()}:${userId.toLowerCase()}`]);
}

async function lockWorkspaceRow(trx: Knex.Transaction, workspaceId: string): Promise<void> {
  // the lock every change of the workspace's members takes first (services/workspaces/workspaces.ts lockWorkspace)
  await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
}

async function targetRole(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<WorkspaceRole> {
  const row = (await trx('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first('role')) as { role: string } | undefined;
  if (!row || !isWorkspaceRole(row.role)) throw new DomainError(404, TEAM_CODES.memberNotFound, TEAM_MSG.memberNotFound);
  return row.role;
}

async function ownerCount(trx: Knex.Transaction, workspaceId: string): Promise<number> {
  const row = (await trx('workspace_members').where({ workspace_id: workspaceId, role: 'owner' }).count<{ n: string }[]>('* as n'))[0];
  return Number(row?.n ?? 0);
}

function lastOwner(): DomainError {
  return new DomainError(409, TEAM_CODES.lastOwner, WORKSPACE_MSG.lastOwner);
}

function ownerOnly(): DomainError {
  return new DomainError(403, TEAM_CODES.ownerOnly, TEAM_MSG.ownerOnly);
}

/** Changes a member's role (manageMembers; owner changes need an owner; never the last owner away). */
export async function changeMemberRole(
  knex: Knex,
  input: { workspaceId: string; actorId: string; userId: string; role: WorkspaceRole },
): Promise<WorkspaceMemberView> {
  const workspaceId = input.workspaceId.toLowerCase();
  return knex.transaction(async (trx) => {
    await lockWorkspaceRow(trx, workspaceId);
    const actor = await authorize(trx, { userId: input.actorId, workspaceId, action: 'manageMembers' });
    const current = await targetRole(trx, workspaceId, input.userId);
    if (current === input.role) return memberView(trx, workspaceId, input.userId);
    if ((current === 'owner' || input.role === 'owner') && actor.role !== 'owner') throw ownerOnly();
    if (current === 'owner' && (await ownerCount(trx, workspaceId)) <= 1) throw lastOwner();
    await trx('workspace_members').where({ workspace_id: workspaceId, user_id: input.userId }).update({ role: input.role, updated_at: trx.fn.now() });
    await notifyMembershipChanged(trx, workspaceId, input.userId);
    await publishEvent(trx, workspaceId, { kind: 'workspace', change: 'members', workspaceId });
    return memberView(trx, workspaceId, input.userId);
  });
}

export interface MemberRemovalDeps {
  knex: Knex;
  client: () => Promise<Client>;
  logger: Logger;
  cancelWaitMs?: number;
}

/**
 * Removes a member (manageMembers; removing an owner needs an owner), or lets a member leave (any role may remove
 * themselves). The last owner can do neither (409). Then cancels the jobs the removed member started in the
 * workspace and waits (bounded) for them to close, so their reservations are back in the workspace's balance.
 */
export async function removeMember(
  deps: MemberRemovalDeps,
  input: { workspaceId: string; actorId: string; userId: string },
): Promise<{ cancelledJobs: number }> {
  const { knex, logger } = deps;
  const workspaceId = input.workspaceId.toLowerCase();
  const leaving = input.actorId === input.userId;
  await knex.transaction(async (trx) => {
    await lockWorkspaceRow(trx, workspaceId);
    const actor = await authorize(trx, { userId: input.actorId, workspaceId, action: leaving ? 'read' : 'manageMembers' });
    const current = await targetRole(trx, workspaceId, input.userId);
    if (current === 'owner') {
      if (actor.role !== 'owner') throw ownerOnly();
      if ((await ownerCount(trx, workspaceId)) <= 1) throw lastOwner();
    }
    await trx('workspace_members').where({ workspace_id: workspaceId, user_id: input.userId }).delete();
    await notifyMembershipChanged(trx, workspaceId, input.userId);
    await publishEvent(trx, workspaceId, { kind: 'workspace', change: 'members', workspaceId });
  });

  // the member is gone: nothing new of theirs can start here; what runs is cancelled (its clean-up releases its credits)
  const running = await runningWorkflowIds(knex, workspaceId, input.userId);
  if (running.length === 0) return { cancelledJobs: 0 };
  try {
    const client = await deps.client();
    const { cancelled, closed } = await cancelRuns(client, running, { waitMs: deps.cancelWaitMs, logger });
    if (!closed) logger.warn({ workspaceId, userId: input.userId, cancelled }, 'a removed member’s cancelled jobs are still closing');
    logger.info({ workspaceId, userId: input.userId, cancelled: cancelled.length }, 'removed member’s jobs cancelled');
    return { cancelledJobs: cancelled.length };
  } catch (err) {
    logger.error({ err, workspaceId, userId: input.userId, running }, 'could not cancel a removed member’s jobs');
    return { cancelledJobs: 0 };
  }
}

/** Makes `userId` an owner and the calling owner an admin (own). */
export async function transferOwnership(knex: Knex, input: { workspaceId: string; actorId: string; userId: string }): Promise<void> {
  const workspaceId = input.workspaceId.toLowerCase();
  await knex.transaction(async (trx) => {
    await lockWorkspaceRow(trx, workspaceId);
    await authorize(trx, { userId: input.actorId, workspaceId, action: 'own' });
    if (input.userId === input.actorId) throw new DomainError(409, TEAM_CODES.transferToSelf, TEAM_MSG.transferToSelf);
    await targetRole(trx, workspaceId, input.userId);
    await trx('workspace_members').where({ workspace_id: workspaceId, user_id: input.userId }).update({ role: 'owner', updated_at: trx.fn.now() });
    await trx('workspace_members').where({ workspace_id: workspaceId, user_id: input.actorId }).update({ role: 'admin', updated_at: trx.fn.now() });
    await notifyMembershipChanged(trx, workspaceId, input.userId);
    await notifyMembershipChanged(trx, workspaceId, input.actorId);
    await publishEvent(trx, workspaceId, { kind: 'workspace', change: 'members', workspaceId });
  });
}
