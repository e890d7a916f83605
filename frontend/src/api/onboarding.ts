import type { Platform, VideoEffect } from '../../../domain/constants';
import { TRY_IT_MESSAGES } from '../../../domain/tryIt';
import { api, isApiHttpError } from './client';

export interface TryItOnboardingInput {
  fileName: string;
  platform: Platform | null;
  effect: VideoEffect | null;
}

/** The spec's answer of try-it signup processing. */
export interface TryItOnboardingAnswer {
  success: boolean;
  projectId: string | null;
  projectName: string | null;
  error: string | null;
}

/**
 * POST /api/onboarding/try-it. The server answers failures in the same shape with the spec's texts, so an HTTP
 * error becomes `{ success: false, error }`; only a network failure throws.
 */
export async function startTryItOnboarding(input: TryItOnboardingInput): Promise<TryItOnboardingAnswer> {
  try {
    // the server waits up to 30 s for the workflow
    return await api.post('onboarding/try-it', { json: input, timeout: 45_000 }).json<TryItOnboardingAnswer>();
  } catch (err) {
    if (isApiHttpError(err)) return { success: false, projectId: null, projectName: null, error: err.apiMessage || TRY_IT_MESSAGES.projectFailed };
    throw err;
  }
}
