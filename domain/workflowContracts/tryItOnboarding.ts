/**
 * The try-it onboarding workflow's contract (id `onboarding-<userId>`): input, result, state query, failure types.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery } from '@temporalio/workflow';
import { PLATFORMS, VIDEO_EFFECTS, type Platform, type VideoEffect } from '../constants';
import { TRY_IT_MESSAGES } from '../tryIt';

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

/** Something was chosen in the try-it area: a file name, a known platform or a known effect. */
export function hasTryItData(input: Pick<TryItOnboardingInput, 'fileName' | 'platform' | 'effect'>): boolean {
  const knownPlatform = input.platform !== null && (PLATFORMS as readonly string[]).includes(input.platform);
  const knownEffect = input.effect !== null && (VIDEO_EFFECTS as readonly string[]).includes(input.effect);
  return input.fileName.trim() !== '' || knownPlatform || knownEffect;
}
