/**
 * A workspace's approval policy as stored (workspaces.approval_policy, approval_count and the workspace_approvers
 * rows) and who may approve in it now: what the workspace list shows, what a new pending item copies, and what
 * the approval activity checks a decision against (domain/approvalPolicy.ts has the rules).
 */
import type { Knex } from 'knex';
import { ANY_MEMBER_POLICY, APPROVAL_COUNTS, type ApprovalCount, type ApprovalPolicy } from '../../domain/approvalPolicy';
import { WORKSPACE_ACTIONS, WORKSPACE_ROLES, roleRank } from '../../domain/workspaceRoles';

type Db = Knex | Knex.Transaction;

/** The roles that may approve (domain/workspaceRoles.ts `approve`). */
export const APPROVING_ROLES = WORKSPACE_ROLES.filter((role) => roleRank(role) >= roleRank(WORKSPACE_ACTIONS.approve));

interface PolicyColumns {
  approval_policy: string;
  approval_count: number | null;
  approver_ids: string[] | null;
}

/** The named approvers of workspace `w` who are still its members, in the order they were named, as the column `approver_ids`. */
export function approverIdsColumn(db: Db): Knex.Raw {
  return db.raw(
    `(select coalesce(array_agg(a.user_id order by a.created_at, a.user_id), array[]::uuid[])
        from workspace_approvers a join workspace_members m on m.workspace_id = a.workspace_id and m.user_id = a.user_id
       where a.workspace_id = w.id) as approver_ids`,
  );
}

export function policyOfRow(row: PolicyColumns): ApprovalPolicy {
  if (row.approval_policy === 'count' && (APPROVAL_COUNTS as readonly number[]).includes(Number(row.approval_count))) {
    return { kind: 'count', count: Number(row.approval_count) as ApprovalCount };
  }
  if (row.approval_policy === 'named') return { kind: 'named', userIds: [...(row.approver_ids ?? [])] };
  return ANY_MEMBER_POLICY;
}

/** The workspace's policy now (what a new pending item copies). */
export async function workspaceApprovalPolicy(db: Db, workspaceId: string): Promise<ApprovalPolicy> {
  const row = (await db('workspaces as w').where('w.id', workspaceId).first('w.approval_policy', 'w.approval_count', approverIdsColumn(db))) as PolicyColumns | undefined;
  return row ? policyOfRow(row) : ANY_MEMBER_POLICY;
}

/** The members who may approve in the workspace now. */
export async function workspaceApprovers(db: Db, workspaceId: string): Promise<Set<string>> {
  const ids = (await db('workspace_members').where({ workspace_id: workspaceId }).whereIn('role', APPROVING_ROLES).pluck('user_id')) as string[];
  return new Set(ids);
}

/** Stores the policy (the caller holds the workspace's lock and has checked the grant and the members). */
export async function storeApprovalPolicy(trx: Knex.Transaction, workspaceId: string, policy: ApprovalPolicy): Promise<void> {
  await trx('workspaces')
    .where({ id: workspaceId })
    .update({ approval_policy: policy.kind, approval_count: policy.kind === 'count' ? policy.count : null, updated_at: trx.fn.now() });
  await trx('workspace_approvers').where({ workspace_id: workspaceId }).delete();
  if (policy.kind === 'named') {
    // created_at keeps the order they were named in
    const base = Date.now();
    await trx('workspace_approvers').insert(policy.userIds.map((userId, i) => ({ workspace_id: workspaceId, user_id: userId, created_at: new Date(base + i) })));
  }
}
