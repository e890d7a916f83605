/**
 * After signup (id `onboarding-<userId>`): turns the visitor's saved try-it choices into a first project.
 * The profile itself is created by signup; a missing one ends the run with 'Failed to create user profile'.
 * The try-it image lives only in the visitor's browser (localStorage), which no worker can read: once this run
 * answers with the project, the browser uploads the image as the project's first render through
 * POST /api/upload/renders (frontend/src/tryIt/useTryItOnboarding.ts).
 */
import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { PLATFORMS, VIDEO_EFFECTS, type Platform, type VideoEffect } from '../domain/constants';
import { TRY_IT_MESSAGES } from '../domain/tryIt';

export type OnboardingStatus = 'pending' | 'creating_project' | 'completed' | 'failed';

export interface TryItOnboardingInput {
  userId: string;
  /** name of the image the visitor picked in the try-it area */
  fileName: string;
  platform: Platform | null;
  effect: VideoEffect | null;
}

/** The shape the specs give for try-it signup processing. */
export interface TryItOnboardingResult {
  success: boolean;
  projectId: string | null;
  projectName: string | null;
  error: string | null;
}

export interface OnboardingState {
  status: OnboardingStatus;
  progress: number;
  message: string;
  error: string | null;
  result: TryItOnboardingResult | null;
}

export const ONBOARDING_MESSAGES = {
  noData: TRY_IT_MESSAGES.noData,
  profileFailed: TRY_IT_MESSAGES.profileFailed,
  projectFailed: TRY_IT_MESSAGES.projectFailed,
} as const;

/** Failure type thrown by the createOnboardingProject activity when the user has no profile row. */
export const ONBOARDING_PROFILE_MISSING = 'ONBOARDING_PROFILE_MISSING';

/** Failure type thrown by the createOnboardingProject activity for input no retry can fix (the text-input rule). */
export const ONBOARDING_INVALID_INPUT = 'ONBOARDING_INVALID_INPUT';

export const onboardingStateQuery = defineQuery<OnboardingState>('onboardingState');

export function onboardingWorkflowId(userId: string): string {
  return `onboarding-${userId}`;
}

const { createOnboardingProject } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [ONBOARDING_PROFILE_MISSING, ONBOARDING_INVALID_INPUT] },
});

/** Something was chosen in the try-it area: a file name, a known platform or a known effect. */
export function hasTryItData(input: Pick<TryItOnboardingInput, 'fileName' | 'platform' | 'effect'>): boolean {
  const knownPlatform = input.platform !== null && (PLATFORMS as readonly string[]).includes(input.platform);
  const knownEffect = input.effect !== null && (VIDEO_EFFECTS as readonly string[]).includes(input.effect);
  return input.fileName.trim() !== '' || knownPlatform || knownEffect;
}

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
