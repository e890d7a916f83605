/**
 * After signup (id `onboarding-<userId>`): turns the visitor's saved try-it choices into a first project.
 * The profile itself is created by signup; a missing one ends the run with 'Failed to create user profile'.
 * The try-it image lives only in the visitor's browser (localStorage), which no worker can read: once this run
 * answers with the project, the browser uploads the image as the project's first render through
 * POST /api/upload/renders (frontend/src/tryIt/useTryItOnboarding.ts).
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { hasTryItData, ONBOARDING_INVALID_INPUT, ONBOARDING_MESSAGES, ONBOARDING_PROFILE_MISSING, type OnboardingState, type TryItOnboardingInput, type TryItOnboardingResult, onboardingStateQuery } from '../domain/workflowContracts/tryItOnboarding';
export * from '../domain/workflowContracts/tryItOnboarding';


const { createOnboardingProject } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [ONBOARDING_PROFILE_MISSING, ONBOARDING_INVALID_INPUT] },
});

export async function tryItOnboardingWorkflow(input: TryItOnboardingInput): Promise<TryItOnboardingResult> {
  const state: OnboardingState = { status: 'pending', progress: 0, message: 'Preparing your first project', error: null, result: null };
  setHandler(onboardingStateQuery, () => state);

  const finish = (result: TryItOnboardingResult): TryItOnboardingResult => {
    state.status = result.success ? 'completed' : 'failed';
    state.progress = 100;
    state.message = result.success ? `Created ${result.projectName}` : (result.error ?? ONBOARDING_MESSAGES.projectFailed);
    state.error = result.error;
    state.result = result;
    return result;
  };
  const failure = (error: string): TryItOnboardingResult => finish({ success: false, projectId: null, projectName: null, error });

  if (!hasTryItData(input)) return failure(ONBOARDING_MESSAGES.noData);

  state.status = 'creating_project';
  state.progress = 30;
  state.message = 'Creating your first project';
  try {
    const { projectId, projectName } = await createOnboardingProject({ userId: input.userId, fileName: input.fileName });
    return finish({ success: true, projectId, projectName, error: null });
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const profileMissing = cause instanceof ApplicationFailure && cause.type === ONBOARDING_PROFILE_MISSING;
    return failure(profileMissing ? ONBOARDING_MESSAGES.profileFailed : ONBOARDING_MESSAGES.projectFailed);
  }
}
