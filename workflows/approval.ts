/**
 * One workflow per pending item (id `approval-<approvalId>`): it holds the item until a member of its workspace
 * approves or rejects it (Temporal Updates, validated) or the approval window ends.
 * Approve consumes the reservation and saves the original into the project; reject and expiry release it.
 */
import { ApplicationFailure, allHandlersFinished, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { APPROVAL_NOT_OWNER, APPROVAL_NOT_PENDING, type ApprovalDecision, type ApprovalDecisionResult, type ApprovalStatus, type ApprovalWorkflowInput, approvalStatusQuery, decisionWorkspaceId, approveUpdate, rejectUpdate } from '../domain/workflowContracts/approval';
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
export * from '../domain/workflowContracts/approval';

// a decision has a user waiting on it: a few attempts, then the item is pending again and may be decided anew
const { approvePendingItem, rejectPendingItem } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['REJECTION_REQUIRES_PURCHASE', APPROVAL_NOT_PENDING],
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

  const validate = (decision: ApprovalDecision): void => {
    // the item must belong to the workspace the request acts in (the route checked the caller's role there)
    if (decisionWorkspaceId(decision) !== workspaceId) throw ApplicationFailure.create({ message: 'Not found', type: APPROVAL_NOT_OWNER, nonRetryable: true });
    if (status !== 'pending') throw ApplicationFailure.create({ message: 'This item is no longer pending', type: APPROVAL_NOT_PENDING, nonRetryable: true });
  };

  const currentStatus = (): ApprovalStatus => status;
  setHandler(approvalStatusQuery, currentStatus);

  setHandler(
    approveUpdate,
    async (decision?: ApprovalDecision): Promise<ApprovalDecisionResult> => {
      status = 'approving';
      try {
        // the approver is the actor of the consume ledger row
        const { contentId } = await approvePendingItem({ approvalId: input.approvalId, actorId: decision?.userId ?? null });
        status = 'approved';
        return { status: 'approved', contentId, warning: null, code: null };
      } catch (err) {
        status = 'pending';
        throw err;
      }
    },
    { validator: validate },
  );

  setHandler(
    rejectUpdate,
    async (decision?: ApprovalDecision): Promise<ApprovalDecisionResult> => {
      status = 'rejecting';
      try {
        const { warning, code } = await rejectPendingItem({ approvalId: input.approvalId, actorId: decision?.userId ?? null });
        status = 'rejected';
        return { status: 'rejected', contentId: null, warning, code };
      } catch (err) {
        status = 'pending';
        throw err;
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
