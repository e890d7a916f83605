/**
 * Workspaces (DESIGN.md "Teams (workspaces)"): the ones a user belongs to, creating a team workspace, renaming and
 * deleting one. The account is the workspace: each has a `profiles` row with its id that holds its credits, and the
 * content tables' owning column names it, so a new team workspace starts empty with 0 credits.
 *
 * Who may do what is decided by services/workspaces/access.ts; the functions here that change a workspace take the
 * workspace row's lock first and re-check the caller's grant under it, so they serialise with member changes.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { DomainError } from '../../domain/errors';
import { WORKSPACE_MSG, type WorkspaceRole } from '../../domain/workspaceRoles';
import { APPROVAL_POLICY_CODES, APPROVAL_POLICY_MSG, type ApprovalPolicy } from '../../domain/approvalPolicy';
import { approverIdsColumn, policyOfRow, storeApprovalPolicy, workspaceApprovers } from './approvalPolicy';
import { listUserFiles, userFolders } from '../accounts/userData';
import { publishEvent } from '../platform/events';
import type { Bucket, Storage } from '../../storage';
import { authorize, WorkspaceNotFoundError } from './access';
import { notifyMembershipChanged } from './members';
import { PERSONAL_WORKSPACE_NAME } from './personalWorkspace';
import { TEAM_CODES } from './messages';
import { cancelRuns, runningWorkflowIds, terminateRun } from './workspaceJobs';

type Db = Knex | Knex.Transaction;

export interface WorkspaceSummary {
  id: string;
  name: string;
  /** the caller's own personal workspace (one per user, made at sign-up; goes only with their account) */
  personal: boolean;
  /** the caller's role in it */
  role: WorkspaceRole;
  memberCount: number;
  /** the most clips its members may have pending or processing together; null: no cap beyond the credits */
  maxClipsInFlight: number | null;
  /** who must approve a generated item (domain/approvalPolicy.ts); items already pending keep the one they started with */
  approvalPolicy: ApprovalPolicy;
  /** its owners require two-factor sign-in of every member (./twoFactorPolicy.ts) */
  twoFactorRequired: boolean;
}

interface SummaryRow {
  id: string;
  name: string;
  personal_user_id: string | null;
  role: WorkspaceRole;
  member_count: number;
  max_clips_in_flight: number | null;
  approval_policy: string;
  approval_count: number | null;
  approver_ids: string[] | null;
  two_factor_required: boolean;
  owner_name: string | null;
  owner_email: string | null;
  created_at: Date | string;
}

/**
 * The name a user sees: the stored one, except that someone else's personal workspace still called 'Personal' is
 * shown as "<its owner>'s workspace" (a member invited into it would otherwise see two workspaces called Personal).
 */
export function shownWorkspaceName(
  row: { name: string; personal_user_id: string | null; owner_name?: string | null; owner_email?: string | null },
  viewerId: string | null,
): string {
  if (row.personal_user_id === null || row.personal_user_id === viewerId || row.name !== PERSONAL_WORKSPACE_NAME) return row.name;
  const owner = row.owner_name || row.owner_email;
  return owner ? `${owner}'s workspace` : row.name;
}

function toSummary(row: SummaryRow, viewerId: string): WorkspaceSummary {
  return {
    id: row.id,
    name: shownWorkspaceName(row, viewerId),
    // personal: the caller's own personal workspace (one per user, made at sign-up; goes only with their account)
    personal: row.personal_user_id === viewerId,
    role: row.role,
    memberCount: Number(row.member_count),
    maxClipsInFlight: row.max_clips_in_flight === null ? null : Number(row.max_clips_in_flight),
    approvalPolicy: policyOfRow(row),
    twoFactorRequired: row.two_factor_required === true,
  };
}

/** Joins what shownWorkspaceName needs: the personal workspace's owner (`w` is the workspaces row). */
export function withOwnerOf<Q extends Knex.QueryBuilder>(query: Q): Q {
  return query
    .leftJoin('profiles as owner_profile', 'owner_profile.id', 'w.personal_user_id')
    .leftJoin('users as owner_user', 'owner_user.id', 'w.personal_user_id')
    .select('owner_profile.name as owner_name', 'owner_user.email as owner_email') as Q;
}

function summaryQuery(db: Db, userId: string) {
  return withOwnerOf(
    db('workspace_members as m')
      .join('workspaces as w', 'w.id', 'm.workspace_id')
      .where('m.user_id', userId)
      .select('w.id', 'w.name', 'w.personal_user_id', 'w.created_at', 'w.max_clips_in_flight', 'w.approval_policy', 'w.approval_count', 'w.two_factor_required', 'm.role', approverIdsColumn(db), db.raw('(select count(*) from workspace_members c where c.workspace_id = w.id)::int as member_count')),
  );
}

/** The user's workspaces: their own personal workspace first, then the others by the name they see. */
export async function listWorkspaces(db: Db, userId: string): Promise<WorkspaceSummary[]> {
  const rows = (await summaryQuery(db, userId)) as SummaryRow[];
  const own = (r: SummaryRow) => (r.personal_user_id === userId ? 0 : 1);
  return rows
    .map((row) => ({ row, summary: toSummary(row, userId) }))
    .sort(
      (a, b) =>
        own(a.row) - own(b.row) ||
        a.summary.name.localeCompare(b.summary.name, undefined, { sensitivity: 'base' }) ||
        new Date(a.row.created_at).getTime() - new Date(b.row.created_at).getTime() ||
        a.row.id.localeCompare(b.row.id),
    )
    .map((x) => x.summary);
}

/** One of the user's workspaces as the list shows it. */
export async function workspaceSummary(db: Db, workspaceId: string, userId: string): Promise<WorkspaceSummary> {
  const row = (await summaryQuery(db, userId).andWhere('w.id', workspaceId).first()) as SummaryRow | undefined;
  if (!row) throw new WorkspaceNotFoundError();
  return toSummary(row, userId);
}

/** A new team workspace: the creator is its owner; its account starts with 0 credits (DESIGN.md). */
export async function createWorkspace(knex: Knex, creator: { id: string; email: string }, name: string): Promise<WorkspaceSummary> {
  return knex.transaction(async (trx) => {
    const id = randomUUID();
    await trx('workspaces').insert({ id, name, personal_user_id: null, created_by: creator.id });
    await trx('workspace_members').insert({ workspace_id: id, user_id: creator.id, role: 'owner' });
    await trx('profiles').insert({ id, email: creator.email, name, credits: 0 });
    return workspaceSummary(trx, id, creator.id);
  });
}

/** Locks the workspace row (every change of a workspace's members or settings takes it first) and returns it. */
export async function lockWorkspace(trx: Knex.Transaction, workspaceId: string): Promise<{ id: string; name: string; personal_user_id: string | null }> {
  const row = (await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id', 'name', 'personal_user_id')) as
    | { id: string; name: string; personal_user_id: string | null }
    | undefined;
  if (!row) throw new WorkspaceNotFoundError();
  return row;
}

/** The workspace's name as someone who is not its personal owner sees it (invitations, e-mails). */
export async function workspaceNameForOthers(db: Db, workspaceId: string): Promise<string> {
  const row = (await withOwnerOf(db('workspaces as w').where('w.id', workspaceId).select('w.name', 'w.personal_user_id')).first()) as
    | { name: string; personal_user_id: string | null; owner_name: string | null; owner_email: string | null }
    | undefined;
  if (!row) throw new WorkspaceNotFoundError();
  return shownWorkspaceName(row, null);
}

/** Renames the workspace (owner). A team workspace's account carries the name too; a personal one keeps its user's. */
export async function renameWorkspace(knex: Knex, input: { workspaceId: string; userId: string; name: string }): Promise<WorkspaceSummary> {
  return knex.transaction(async (trx) => {
    const row = await lockWorkspace(trx, input.workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId: input.workspaceId, action: 'own' });
    await trx('workspaces').where({ id: row.id }).update({ name: input.name, updated_at: trx.fn.now() });
    if (row.personal_user_id === null) await trx('profiles').where({ id: row.id }).update({ name: input.name, updated_at: trx.fn.now() });
    await publishEvent(trx, row.id, { kind: 'workspace', change: 'renamed', workspaceId: row.id });
    return workspaceSummary(trx, row.id, input.userId);
  });
}

/**
 * Sets or clears (null) the workspace's cap on clips in flight (owners and admins, who manage its spending). A
 * lower cap than the clips already running stops none of them; it refuses new starts until they are under it.
 */
export async function setClipCap(knex: Knex, input: { workspaceId: string; userId: string; maxClipsInFlight: number | null }): Promise<WorkspaceSummary> {
  return knex.transaction(async (trx) => {
    const row = await lockWorkspace(trx, input.workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId: input.workspaceId, action: 'billing' });
    await trx('workspaces').where({ id: row.id }).update({ max_clips_in_flight: input.maxClipsInFlight, updated_at: trx.fn.now() });
    await publishEvent(trx, row.id, { kind: 'workspace', change: 'settings', workspaceId: row.id });
    return workspaceSummary(trx, row.id, input.userId);
  });
}

/**
 * Sets who must approve the workspace's generated items (owners and admins, who manage its spending). Named
 * approvers must be members who may approve; N approvals needs at least N of them. Items already pending keep the
 * policy they started with.
 */
export async function setApprovalPolicy(knex: Knex, input: { workspaceId: string; userId: string; policy: ApprovalPolicy }): Promise<WorkspaceSummary> {
  return knex.transaction(async (trx) => {
    const row = await lockWorkspace(trx, input.workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId: input.workspaceId, action: 'billing' });
    const approvers = await workspaceApprovers(trx, row.id);
    const { policy } = input;
    if (policy.kind === 'named' && policy.userIds.some((id) => !approvers.has(id))) {
      throw new DomainError(400, APPROVAL_POLICY_CODES.policyInvalid, APPROVAL_POLICY_MSG.approverNotMember);
    }
    if (policy.kind === 'count' && approvers.size < policy.count) {
      throw new DomainError(409, APPROVAL_POLICY_CODES.policyInvalid, APPROVAL_POLICY_MSG.tooFewApprovers(policy.count, approvers.size));
    }
    await storeApprovalPolicy(trx, row.id, policy.kind === 'named' ? { kind: 'named', userIds: [...new Set(policy.userIds)] } : policy);
    await publishEvent(trx, row.id, { kind: 'workspace', change: 'settings', workspaceId: row.id });
    return workspaceSummary(trx, row.id, input.userId);
  });
}

export interface WorkspaceDeletionDeps {
  knex: Knex;
  storage: Storage;
  client: () => Promise<Client>;
  logger: Logger;
  /** how long to wait for cancelled runs to close before they are terminated */
  cancelWaitMs?: number;
}

export interface WorkspaceDeletionResult {
  cancelledWorkflows: number;
  removedFiles: number;
}

const DELETION_REASON = 'workspace deleted';

/**
 * Deletes a team workspace (owner; a personal workspace goes only with its account: 409), in the order account
 * deletion uses (activities/accountDeletion.ts), each step safe to run again:
 * 1. under the workspace's lock, the other members are removed (their access and event streams end at once); the
 *    owner stays a member until the end, so a deletion cut short can simply be asked for again;
 * 2. the workspace's running jobs are cancelled and waited for (their clean-up releases reservations and working
 *    files); one that does not close in time is terminated; pending approvals' workflows are terminated;
 * 3. every stored file its rows name and its folders are removed;
 * 4. the workspace row goes; its account, content, jobs, approvals, ledger and invitations cascade with it.
 */
export async function deleteWorkspace(deps: WorkspaceDeletionDeps, input: { workspaceId: string; userId: string }): Promise<WorkspaceDeletionResult> {
  const { knex, logger } = deps;
  const workspaceId = input.workspaceId.toLowerCase();
  const found = (await knex('workspaces').where({ id: workspaceId }).first('personal_user_id')) as { personal_user_id: string | null } | undefined;
  if (!found) throw new WorkspaceNotFoundError();
  if (found.personal_user_id !== null) throw new DomainError(409, TEAM_CODES.personalNotDeletable, WORKSPACE_MSG.personalNotDeletable);
  // Temporal first when something runs: without it no run could be cancelled, so nothing is changed and the owner
  // is asked to try again (a workspace with nothing running needs no Temporal)
  let connected: Client | null = null;
  const client = async (): Promise<Client> => (connected ??= await deps.client());
  const pendingApprovals = () => knex('pending_approvals').where({ workspace_id: workspaceId, status: 'pending' }).pluck('workflow_id') as Promise<string[]>;
  if ((await runningWorkflowIds(knex, workspaceId)).length > 0 || (await pendingApprovals()).length > 0) {
    try {
      await client();
    } catch (err) {
      logger.error({ err, workspaceId }, 'temporal unavailable: workspace not deleted');
      throw new DomainError(503, 'WORKSPACE_DELETE_UNAVAILABLE', 'The workspace cannot be deleted right now. Try again in a minute.');
    }
  }
  await knex.transaction(async (trx) => {
    const row = await lockWorkspace(trx, workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId, action: 'own' });
    if (row.personal_user_id !== null) throw new DomainError(409, TEAM_CODES.personalNotDeletable, WORKSPACE_MSG.personalNotDeletable);
    const others = (await trx('workspace_members').where({ workspace_id: workspaceId }).whereNot({ user_id: input.userId }).delete().returning('user_id')) as Array<{ user_id: string }>;
    for (const other of others) await notifyMembershipChanged(trx, workspaceId, other.user_id);
    await trx('workspace_invitations').where({ workspace_id: workspaceId }).whereNull('accepted_at').whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
  });

  let cancelled = 0;
  const seen = new Set<string>();
  // passes repeat while new runs appear (one admitted just before the members went)
  for (let pass = 0; pass < 3; pass += 1) {
    const fresh = (await runningWorkflowIds(knex, workspaceId)).filter((id) => !seen.has(id));
    if (fresh.length === 0) break;
    for (const id of fresh) seen.add(id);
    const result = await cancelRuns(await client(), fresh, { waitMs: deps.cancelWaitMs, logger });
    cancelled += result.cancelled.length;
    if (!result.closed) for (const id of result.cancelled) await terminateRun(await client(), id, DELETION_REASON);
  }
  for (const id of await pendingApprovals()) await terminateRun(await client(), id, DELETION_REASON);

  const files = await listUserFiles(knex, workspaceId, { includeExports: true, approvals: 'all' });
  const byBucket = new Map<Bucket, string[]>();
  for (const file of files) byBucket.set(file.bucket, [...(byBucket.get(file.bucket) ?? []), file.path]);
  for (const [bucket, paths] of byBucket) await deps.storage.objects.remove(bucket, paths);
  for (const folder of await userFolders(knex, workspaceId)) await deps.storage.objects.removePrefix(folder.bucket, folder.prefix);

  await knex.transaction(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId, action: 'own' });
    // the ledger rows of the workspace go with it; notes for the last member's streams go with the commit
    await notifyMembershipChanged(trx, workspaceId, input.userId);
    await trx('workspaces').where({ id: workspaceId }).delete();
  });
  logger.info({ workspaceId, by: input.userId, cancelled, removedFiles: files.length }, 'workspace deleted');
  return { cancelledWorkflows: cancelled, removedFiles: files.length };
}
