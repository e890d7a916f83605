/**
 * After signup or sign-in with try-it data in this browser: the server makes the first project (onboarding
 * workflow), then the saved image goes up as its first render. The workflow cannot read the browser's
 * localStorage, so "store the image as its first render" (DESIGN.md) is this upload, made once the project exists.
 */
import { TRY_IT_MESSAGES } from '../../../domain/tryIt';
import type { TryItOnboardingAnswer, TryItOnboardingInput } from '../api/onboarding';
import type { StoredTryItImage, TryItStore } from './tryItStorage';

export interface OnboardTryItDeps {
  store: TryItStore;
  startOnboarding: (input: TryItOnboardingInput) => Promise<TryItOnboardingAnswer>;
  /** Uploads the image into the project (with the upload's retries); resolves with the new render's id. */
  uploadImage: (image: StoredTryItImage, projectId: string) => Promise<string>;
}

export type OnboardTryItOutcome =
  | { kind: 'nothing' }
  | { kind: 'failed'; error: string }
  | { kind: 'created'; projectId: string; projectName: string; renderId: string | null; uploadError: string | null };

export async function onboardTryIt(deps: OnboardTryItDeps): Promise<OnboardTryItOutcome> {
  const pending = deps.store.pending();
  if (!pending) return { kind: 'nothing' };
  const { image, selection } = pending;

  let answer: TryItOnboardingAnswer;
  try {
    answer = await deps.startOnboarding({ fileName: image.name, platform: selection?.selectedPlatform ?? null, effect: selection?.selectedEffect ?? null });
  } catch {
    return { kind: 'failed', error: TRY_IT_MESSAGES.projectFailed };
  }
  if (!answer.success || !answer.projectId) {
    // nothing the server could use: a retry would only fail again
    if (answer.error === TRY_IT_MESSAGES.noData) deps.store.clearImages();
    return { kind: 'failed', error: answer.error ?? TRY_IT_MESSAGES.projectFailed };
  }
  const projectId = answer.projectId;
  const projectName = answer.projectName ?? '';

  let renderId: string | null = null;
  let uploadError: string | null = null;
  try {
    renderId = await deps.uploadImage(image, projectId);
  } catch {
    uploadError = TRY_IT_MESSAGES.uploadFailed;
  }
  deps.store.saveWelcome({ projectId, projectName, renderId, fileName: image.name, fileSize: image.size });
  // the image has done its job (or its upload failed after retries): only the selection stays, for the welcome dialog
  deps.store.clearImages();
  return { kind: 'created', projectId, projectName, renderId, uploadError };
}
