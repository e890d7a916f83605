/**
 * The approval queue for the API (spec 001 sections 2, 4, 7): the account's pending items with preview links, the
 * stats behind the badge and the pending cap, and approve / reject sent as Updates to the item's approval
 * workflow (workflows/approval.ts), which holds the decision rules.
 *
 * The account is the workspace (DESIGN.md "Teams (workspaces)"): `workspaceId` scopes every read and names the
 * workspace the decision is made in; the acting member (`actorId`) is who the ledger records. The route has checked
 * the member's role (api/workspace.ts) before any of this runs.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { Knex } from 'knex';
import { PendingApproval } from '../../db/models/PendingApproval';
import type { ApprovalDecisionResponse, ApprovalListItem, ApprovalProgressView, ApprovalStats } from '../../domain/approvals';
import { APPROVAL_POLICY_CODES, APPROVAL_POLICY_MSG, approvalProgress, mayApproveUnder, readApprovalPolicy } from '../../domain/approvalPolicy';
import { listMembers } from '../workspaces/members';
import { APPROVING_ROLES, workspaceApprovers } from '../workspaces/approvalPolicy';
import { DomainError } from '../../domain/errors';
import { ERROR_CODES, MSG } from '../../domain/messages';
import { isBucket, type Storage } from '../../storage';
import { getPendingUsage } from '../billing/credits';
import { APPROVAL_NOT_OWNER, APPROVAL_NOT_PENDING, approveUpdate, rejectUpdate, type ApprovalDecisionResult, type GuestDecider } from '../../domain/workflowContracts/approval';
import { guestApprovalsOf, linkApproved } from '../review/guestDecisions';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ApprovalServiceDeps {
  knex: Knex;
  storage: Storage;
  temporal: () => Promise<Client>;
  /** Told after an item was saved into its project (the library drops its cached listing). */
  onProjectChanged?: (projectId: string) => void;
}

function notFound(): DomainError {
  return new DomainError(404, 'APPROVAL_NOT_FOUND', 'Approval not found');
}

function notPending(): DomainError {
  return new DomainError(409, APPROVAL_NOT_PENDING, 'This item is no longer pending');
}

function alreadyApproved(): DomainError {
  return new DomainError(409, APPROVAL_POLICY_CODES.alreadyApproved, APPROVAL_POLICY_MSG.alreadyApproved);
}

function notAnApprover(): DomainError {
  return new DomainError(403, APPROVAL_POLICY_CODES.notAnApprover, APPROVAL_POLICY_MSG.notAnApprover);
}

const FORMER_MEMBER = 'A former member';

function clipSettingsOf(metadata: Record<string, unknown>): { effect: string; platform: string } | null {
  return metadata.kind === 'clip' && typeof metadata.effect === 'string' && typeof metadata.platform === 'string' ? { effect: metadata.effect, platform: metadata.platform } : null;
}

/** The decision rule that refused, found inside the update's failure (the validator's, or the activity's). */
function refusalOf(err: WorkflowUpdateFailedError): DomainError | null {
  let cause: unknown = err.cause;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (!(cause instanceof ApplicationFailure)) return null;
  switch (cause.type) {
    case APPROVAL_NOT_OWNER:
    case 'APPROVAL_NOT_FOUND':
      return notFound();
    case APPROVAL_NOT_PENDING:
      return notPending();
    case APPROVAL_POLICY_CODES.alreadyApproved:
      return alreadyApproved();
    case APPROVAL_POLICY_CODES.notAnApprover:
      return notAnApprover();
    case ERROR_CODES.rejectionRequiresPurchase:
      return new DomainError(403, ERROR_CODES.rejectionRequiresPurchase, MSG.rejectionRequiresPurchase);
    default:
      return null;
  }
}

export class ApprovalService {
  constructor(private readonly deps: ApprovalServiceDeps) {}

  /**
   * Pending and not past the deadline, newest first, with a signed link to the watermarked preview. The original is
   * never linked here (pay on approval): `original_file_url` is null, and the file routes refuse the original of an
   * item that is not approved (services/content/unapprovedOriginals.ts). Not paged: the pending cap keeps it to a
   * handful (at most 2 x PENDING_LIMIT_MAX, docs/growth.md), read on the (workspace_id, status, created_at) index.
   */
  async list(workspaceId: string, viewerId: string = workspaceId): Promise<ApprovalListItem[]> {
    const rows = (await PendingApproval.query(this.deps.knex)
      .alias('a')
      .leftJoin('projects as p', 'p.id', 'a.project_id')
      .where('a.workspace_id', workspaceId)
      .where('a.status', 'pending')
      .where('a.approval_deadline', '>', this.deps.knex.fn.now())
      .orderBy([
        { column: 'a.created_at', order: 'desc' },
        { column: 'a.id', order: 'desc' },
      ])
      .select('a.*', 'p.name as project_name')) as Array<PendingApproval & { projectName: string | null }>;
    const sign = (bucket: string, path: string) => (isBucket(bucket) ? this.deps.storage.urls.sign(bucket, path) : null);
    const progressOf = await this.progressReader(workspaceId, rows.map((r) => r.id), viewerId);
    return rows.map((row) => {
      const prompt = (row.metadata as { originalPrompt?: unknown; promptUsed?: unknown }).originalPrompt ?? (row.metadata as { promptUsed?: unknown }).promptUsed;
      return {
        id: row.id,
        user_id: row.workspaceId,
        project_id: row.projectId,
        project_name: row.projectName ?? null,
        content_type: row.contentType,
        status: 'pending',
        aspect_ratio: row.aspectRatio,
        file_name: row.fileName,
        original_file_url: null,
        watermarked_file_url: sign(row.watermarkedBucket, row.watermarkedPath),
        approval_deadline: new Date(row.approvalDeadline).toISOString(),
        cost: row.cost,
        remaining_cost: row.remainingCost,
        created_at: new Date(row.createdAt).toISOString(),
        prompt: typeof prompt === 'string' ? prompt : null,
        approvals: progressOf(row),
        version: row.version ?? 1,
        previous_approval_id: row.previousApprovalId ?? null,
        clip_settings: clipSettingsOf(row.metadata),
      };
    });
  }

  /**
   * Reads what the items' progress needs in two queries (their approvals, the workspace's members) and returns how
   * each item stands for `viewerId`.
   */
  private async progressReader(workspaceId: string, approvalIds: string[], viewerId: string): Promise<(row: Pick<PendingApproval, 'id' | 'approvalPolicy'>) => ApprovalProgressView> {
    const decisions = approvalIds.length
      ? ((await this.deps.knex('approval_decisions').whereIn('approval_id', approvalIds).orderBy([{ column: 'created_at' }, { column: 'user_id' }]).select('approval_id', 'user_id', 'created_at')) as Array<{
          approval_id: string;
          user_id: string;
          created_at: Date;
        }>)
      : [];
    // guests' approvals through review links count as one approval per link ("link:<id>")
    const guests = await guestApprovalsOf(this.deps.knex, approvalIds);
    const members = await listMembers(this.deps.knex, workspaceId);
    const names = new Map(members.map((m) => [m.userId, m.name || m.email]));
    for (const g of guests) names.set(g.key, g.label);
    const approvers = new Set(members.filter((m) => APPROVING_ROLES.includes(m.role)).map((m) => m.userId));
    const person = (userId: string) => ({ user_id: userId, name: names.get(userId) ?? FORMER_MEMBER });
    return (row) => {
      const policy = readApprovalPolicy(row.approvalPolicy);
      const mine = [...decisions.filter((d) => d.approval_id === row.id), ...guests.filter((g) => g.approvalId === row.id).map((g) => ({ approval_id: g.approvalId, user_id: g.key, created_at: g.at }))].sort(
        (a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime(),
      );
      const progress = approvalProgress(policy, mine.map((d) => d.user_id), approvers);
      return {
        policy,
        needed: progress.needed,
        approved_by: mine.map((d) => ({ ...person(d.user_id), at: new Date(d.created_at).toISOString() })),
        awaiting: progress.awaiting.map(person),
        you_approved: mine.some((d) => d.user_id === viewerId),
        you_may_approve: mayApproveUnder(policy, viewerId, approvers),
      };
    };
  }

  /**
   * The queue (what the list above holds, and the badge counts) and, apart, the generations still running: the start
   * rule (services/billing/credits.ts getPendingUsage) counts both, so the cap overlay adds them up to show exactly
   * when the server would refuse a start.
   */
  async stats(workspaceId: string): Promise<ApprovalStats> {
    const usage = await getPendingUsage(this.deps.knex, workspaceId);
    return {
      pending_count: usage.queuedCount,
      limit: usage.limit,
      total_pending_cost: usage.queuedCost,
      in_progress_count: usage.pendingCount - usage.queuedCount,
      in_progress_cost: usage.pendingCost - usage.queuedCost,
    };
  }

  /** `actorId` defaults to the account: a person on their own is both (their personal workspace's id is theirs). */
  approve(workspaceId: string, approvalId: string, actorId: string = workspaceId, options: { guest?: GuestDecider } = {}): Promise<ApprovalDecisionResponse> {
    return this.decide(workspaceId, actorId, approvalId, 'approve', false, options.guest);
  }

  /**
   * `keepPreview`: a rejection with a request for changes keeps the watermarked preview to compare the next version with.
   * `guest`: a review link's guest decides (the actor is then the member who made the link).
   */
  reject(workspaceId: string, approvalId: string, actorId: string = workspaceId, options: { keepPreview?: boolean; guest?: GuestDecider } = {}): Promise<ApprovalDecisionResponse> {
    return this.decide(workspaceId, actorId, approvalId, 'reject', options.keepPreview === true, options.guest);
  }

  /** The project an approval belongs to, so the route can take its workspace from it; null for an unknown id. */
  async projectOf(approvalId: string): Promise<string | null> {
    if (!UUID.test(approvalId)) return null;
    const row = await this.deps.knex('pending_approvals').where({ id: approvalId }).first<{ project_id: string } | undefined>('project_id');
    return row?.project_id ?? null;
  }

  private async decide(workspaceId: string, actorId: string, approvalId: string, decision: 'approve' | 'reject', keepPreview = false, guest?: GuestDecider): Promise<ApprovalDecisionResponse> {
    if (!UUID.test(approvalId)) throw notFound();
    const row = await PendingApproval.query(this.deps.knex).findOne({ id: approvalId, workspace_id: workspaceId });
    if (!row) throw notFound();
    if (row.status !== 'pending') throw notPending();
    if (decision === 'approve' && guest) {
      // a link's guests give an item one approval (named approvers are still awaited: never a refusal)
      if (await linkApproved(this.deps.knex, guest.reviewLinkId, row.id)) throw alreadyApproved();
    } else if (decision === 'approve') {
      // the policy's refusals, answered without a round trip (the workflow and its activity check them again)
      const approved = await this.deps.knex('approval_decisions').where({ approval_id: row.id, user_id: actorId }).first('user_id');
      if (approved) throw alreadyApproved();
      const policy = readApprovalPolicy(row.approvalPolicy);
      if (policy.kind === 'named' && !mayApproveUnder(policy, actorId, await workspaceApprovers(this.deps.knex, workspaceId))) throw notAnApprover();
    }
    const client = await this.deps.temporal();
    const handle = client.workflow.getHandle(row.workflowId);
    let result: ApprovalDecisionResult;
    try {
      result = await handle.executeUpdate(decision === 'approve' ? approveUpdate : rejectUpdate, { args: [{ userId: actorId, workspaceId, ...(keepPreview ? { keepPreview } : {}), ...(guest ? { guest } : {}) }] });
    } catch (err) {
      // the workflow ended (decided or expired) between the read above and the update
      if (err instanceof WorkflowNotFoundError) throw notPending();
      if (err instanceof WorkflowUpdateFailedError) throw refusalOf(err) ?? err;
      throw err;
    }
    if (result.status === 'approved') this.deps.onProjectChanged?.(row.projectId);
    const answer: ApprovalDecisionResponse = { success: true, error: null, code: result.code, contentId: result.contentId, warning: result.warning };
    // under a policy of several approvals, where the item stands now; the specs' answer stays as it is otherwise
    if (decision === 'approve' && readApprovalPolicy(row.approvalPolicy).kind !== 'any') answer.approvals = (await this.progressReader(workspaceId, [row.id], actorId))(row);
    return answer;
  }
}
