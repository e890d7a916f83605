/**
 * A deliberately incompatible edit of workflows/tryItOnboarding.ts (a timer now runs before the activity),
 * used to show that replaying a recorded history catches a change that would break running workflows.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createActivities } from '../../../activities';
import type { TryItOnboardingInput, TryItOnboardingResult } from '../../../workflows';

const { createOnboardingProject } = proxyActivities<ReturnType<typeof createActivities>>({ startToCloseTimeout: '30 seconds' });

export async function tryItOnboardingWorkflow(input: TryItOnboardingInput): Promise<TryItOnboardingResult> {
  await sleep('1 second');
  const { projectId, projectName } = await createOnboardingProject({ userId: input.userId, fileName: input.fileName });
  return { success: true, projectId, projectName, error: null };
}
