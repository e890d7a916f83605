import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { TASK_QUEUES } from '../workers/taskQueues';
import {
  onboardingStateQuery,
  onboardingWorkflowId,
  tryItOnboardingWorkflow,
  type OnboardingState,
  type TryItOnboardingInput,
  type TryItOnboardingResult,
} from '../workflows/tryItOnboarding';

/**
 * Runs try-it onboarding for a user who just signed up and waits for its result (a few database writes).
 * A repeated call while a run is open joins it; a later call re-runs it and gets the same project back.
 */
export async function runTryItOnboarding(
  client: Client,
  input: TryItOnboardingInput,
  taskQueue: string = TASK_QUEUES.onboarding,
): Promise<TryItOnboardingResult> {
  const handle = await client.workflow.start(tryItOnboardingWorkflow, {
    taskQueue,
    workflowId: onboardingWorkflowId(input.userId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
  });
  return handle.result();
}

/** The latest onboarding run's state for a user, or null when there never was one. */
export async function getOnboardingState(client: Client, userId: string): Promise<OnboardingState | null> {
  try {
    return await client.workflow.getHandle(onboardingWorkflowId(userId)).query(onboardingStateQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
