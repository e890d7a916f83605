/**
 * One workflow per pending item (id `approval-<approvalId>`): it holds the item until a member of its workspace
 * approves or rejects it (Temporal Updates, validated) or the approval window ends.
 * Approve consumes the reservation and saves the original into the project once the item's approval policy is met
 * (several approvals may be needed: each is recorded, one per person); reject and expiry release it.
 */
import { ApplicationFailure, allHandlersFinished, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { APPROVAL_NOT_OWNER, APPROVAL_NOT_PENDING, type ApprovalDecision, type ApprovalDecisionResult, type ApprovalStatus, type ApprovalWorkflowInput, approvalStatusQuery, approverKey, decisionWorkspaceId, approveUpdate, rejectUpdate } from '../domain/workflowContracts/approval';
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
import { APPROVAL_POLICY_CODES, APPROVAL_POLICY_MSG } from '../domain/approvalPolicy';
export * from '../domain/workflowContracts/approval';

// a decision has a user waiting on it: a few attempts, then the item is pending again and may be decided anew
const { approvePendingItem, rejectPendingItem } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['REJECTION_REQUIRES_PURCHASE', APPROVAL_NOT_PENDING, APPROVAL_POLICY_CODES.notAnApprover],
  },
});

// expiry gives credits back and nobody waits on it: retried until it succeeds
const { expirePendingItem } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function approvalWorkflow(input: ApprovalWorkflowInput): Promise<ApprovalStatus> {
  const workspaceId = workspaceIdOf(input);
  let status: ApprovalStatus = 'pending';
  // a decision's activity is running: the next one waits for it (two approvers at the same moment are taken in turn)
  let busy = false;
  // who has approved an item that waits for more approvals (its policy: activities/approvals.ts)
  const approvedBy = new Set<string>();

  const ended = (): boolean => status === 'approved' || status === 'rejected' || status === 'expired';
  const notPending = () => ApplicationFailure.create({ message: 'This item is no longer pending', type: APPROVAL_NOT_PENDING, nonRetryable: true });
  const validate = (decision: ApprovalDecision): void => {
    // the item must belong to the workspace the request acts in (the route checked the caller's role there)
    if (decisionWorkspaceId(decision) !== workspaceId) throw ApplicationFailure.create({ message: 'Not found', type: APPROVAL_NOT_OWNER, nonRetryable: true });
    // no decision after the end
    if (ended()) throw notPending();
  };
  const validateApproval = (decision: ApprovalDecision): void => {
    validate(decision);
    // one approval per person (a review link's guests count as one)
    if (decision?.userId && approvedBy.has(approverKey(decision))) throw ApplicationFailure.create({ message: APPROVAL_POLICY_MSG.alreadyApproved, type: APPROVAL_POLICY_CODES.alreadyApproved, nonRetryable: true });
  };
  /**
   * Waits for a decision under way, then holds the turn: the check and the taking run with no await between them,
   * so two waiting decisions never both take it. Throws when the item was decided meanwhile.
   */
  const takeTurn = async (next: 'approving' | 'rejecting'): Promise<void> => {
    while (busy) await condition(() => !busy);
    if (status !== 'pending') throw notPending();
    busy = true;
    // at once, in the same step: the deadline never finds the item pending while its decision is under way
    status = next;
  };

  const currentStatus = (): ApprovalStatus => status;
  setHandler(approvalStatusQuery, currentStatus);

  setHandler(
    approveUpdate,
    async (decision?: ApprovalDecision): Promise<ApprovalDecisionResult> => {
      await takeTurn('approving');
      try {
        // the approver is the actor of the consume ledger row
        const result = await approvePendingItem({ approvalId: input.approvalId, actorId: decision?.userId ?? null, ...(decision?.guest ? { guest: decision.guest } : {}) });
        if (result.status === 'pending') {
          // the policy waits for more approvals
          if (decision?.userId) approvedBy.add(approverKey(decision));
          status = 'pending';
          return { status: 'pending', contentId: null, warning: null, code: null };
        }
        status = 'approved';
        return { status: 'approved', contentId: result.contentId, warning: null, code: null };
      } catch (err) {
        status = 'pending';
        throw err;
      } finally {
        busy = false;
      }
    },
    { validator: validateApproval },
  );

  setHandler(
    rejectUpdate,
    async (decision?: ApprovalDecision): Promise<ApprovalDecisionResult> => {
      await takeTurn('rejecting');
      try {
        const { warning, code } = await rejectPendingItem({
          approvalId: input.approvalId,
          actorId: decision?.userId ?? null,
          keepPreview: decision?.keepPreview === true,
          ...(decision?.guest ? { guest: decision.guest } : {}),
        });
        status = 'rejected';
        return { status: 'rejected', contentId: null, warning, code };
      } catch (err) {
        status = 'pending';
        throw err;
      } finally {
        busy = false;
      }
    },
    { validator: validate },
  );

  const deadline = Date.now() + input.windowMs; // workflow time: deterministic on replay
  for (;;) {
    const remaining = deadline - Date.now();
    const decided = remaining > 0 && (await condition(() => status !== 'pending', remaining));
    if (!decided && status === 'pending') {
      status = 'expired';
      await expirePendingItem({ approvalId: input.approvalId });
      break;
    }
    await condition(() => status !== 'approving' && status !== 'rejecting');
    // read through a function: TypeScript narrows `status` as if handlers could not have changed it
    const settled = currentStatus();
    if (settled === 'approved' || settled === 'rejected') break;
    // the decision failed (e.g. rejection needs a purchase): the item waits for the rest of its window
  }
  await condition(allHandlersFinished);
  return status;
}
