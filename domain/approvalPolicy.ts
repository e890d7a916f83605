/**
 * Who must approve a generated item before it is saved and charged (issue 42, DESIGN.md "Review"). Set per workspace
 * by its owners and admins; each pending item keeps a copy of the policy it started with.
 *
 * - `any`: any member who may approve (member, admin, owner) approves alone: the specs' behaviour, the default.
 * - `count`: that many different members must approve (2 or 3).
 * - `named`: each of the listed members must approve. A listed member who has left the workspace (or may no longer
 *   approve) is not waited for; when none of them is left, any member may approve, so no item is stuck.
 *
 * Any rejection ends the item whatever the policy (the specs' rejection, by anyone who may approve). Pure: shared by
 * the activity that records decisions, the API and the front end.
 */

export const APPROVAL_COUNTS = [2, 3] as const;
export type ApprovalCount = (typeof APPROVAL_COUNTS)[number];

export type ApprovalPolicy = { kind: 'any' } | { kind: 'count'; count: ApprovalCount } | { kind: 'named'; userIds: string[] };
export type ApprovalPolicyKind = ApprovalPolicy['kind'];

export const ANY_MEMBER_POLICY: ApprovalPolicy = { kind: 'any' };

/** Where a pending item stands against its policy. */
export interface ApprovalProgress {
  /** the approvals the policy needs in all (1 for `any`) */
  needed: number;
  /** who has approved, in order */
  approvedBy: string[];
  /** the named approvers still awaited (empty for `any` and `count`) */
  awaiting: string[];
  /** the policy is met: the item is saved and charged */
  met: boolean;
}

/** A stored policy (a pending item's jsonb copy; null on items from before policies): `any` when it is not one. */
export function readApprovalPolicy(stored: unknown): ApprovalPolicy {
  if (!stored || typeof stored !== 'object') return ANY_MEMBER_POLICY;
  const policy = stored as { kind?: unknown; count?: unknown; userIds?: unknown };
  if (policy.kind === 'count' && (APPROVAL_COUNTS as readonly unknown[]).includes(policy.count)) return { kind: 'count', count: policy.count as ApprovalCount };
  if (policy.kind === 'named' && Array.isArray(policy.userIds) && policy.userIds.every((id) => typeof id === 'string')) {
    return { kind: 'named', userIds: [...(policy.userIds as string[])] };
  }
  return ANY_MEMBER_POLICY;
}

/** The named approvers who can still approve (`approvers`: the members who may approve now). */
function namedStillThere(policy: Extract<ApprovalPolicy, { kind: 'named' }>, approvers: ReadonlySet<string>): string[] {
  return policy.userIds.filter((id) => approvers.has(id));
}

/**
 * The item's progress: `approvedBy` the members who approved it (in order), `approvers` the members who may approve
 * in its workspace now (for `named`, who is still awaited).
 */
export function approvalProgress(policy: ApprovalPolicy, approvedBy: readonly string[], approvers: ReadonlySet<string>): ApprovalProgress {
  const distinct = [...new Set(approvedBy)];
  if (policy.kind === 'count') return { needed: policy.count, approvedBy: distinct, awaiting: [], met: distinct.length >= policy.count };
  if (policy.kind === 'named') {
    const named = namedStillThere(policy, approvers);
    if (named.length > 0) {
      const awaiting = named.filter((id) => !distinct.includes(id));
      return { needed: named.length, approvedBy: distinct, awaiting, met: awaiting.length === 0 };
    }
  }
  return { needed: 1, approvedBy: distinct, awaiting: [], met: distinct.length >= 1 };
}

/** Whether `userId` (who may approve in the workspace) may approve an item with this policy. */
export function mayApproveUnder(policy: ApprovalPolicy, userId: string, approvers: ReadonlySet<string>): boolean {
  if (policy.kind !== 'named') return true;
  const named = namedStillThere(policy, approvers);
  return named.length === 0 || named.includes(userId);
}

/** "1 of 2": what the item shows while it waits for more approvals. */
export function progressText(progress: Pick<ApprovalProgress, 'needed' | 'approvedBy'>): string {
  return `${Math.min(progress.approvedBy.length, progress.needed)} of ${progress.needed} approvals`;
}

/** How the policy reads in a sentence ("Needs 2 approvals"). */
export function policyText(policy: ApprovalPolicy, nameOf: (userId: string) => string): string {
  if (policy.kind === 'count') return `Needs ${policy.count} approvals from different members`;
  if (policy.kind === 'named') return `Needs approval from ${policy.userIds.map(nameOf).join(', ')}`;
  return 'Any member may approve';
}

export const APPROVAL_POLICY_CODES = {
  alreadyApproved: 'APPROVAL_ALREADY_APPROVED',
  notAnApprover: 'APPROVAL_NOT_AN_APPROVER',
  policyInvalid: 'APPROVAL_POLICY_INVALID',
} as const;

export const APPROVAL_POLICY_MSG = {
  alreadyApproved: 'You have already approved this item. It is waiting for the other approvals.',
  notAnApprover: 'Only the approvers this item names can approve it. You can still reject it or comment.',
  policyInvalid: 'approvalPolicy must be { kind: "any" }, { kind: "count", count: 2 or 3 } or { kind: "named", userIds: [...] } with 1 to 10 members',
  approverNotMember: 'Every named approver must be a member of this workspace who may approve (member, admin or owner).',
  tooFewApprovers: (count: number, available: number) =>
    `This workspace has ${available} ${available === 1 ? 'member' : 'members'} who may approve: it needs at least ${count} for ${count} approvals. Invite more members first.`,
} as const;

/** At most this many named approvers. */
export const MAX_NAMED_APPROVERS = 10;
