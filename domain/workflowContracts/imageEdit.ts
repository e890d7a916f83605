/**
 * The image edit workflow's contract (id `image-edit-<jobId>`): its state query (types live in domain/imageEdit.ts).
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ImageEditState } from '../imageEdit';

export const imageEditStateQuery = defineQuery<ImageEditState>('imageEditState');

/** The hosted provider called back (verified, for the provider job the run waits for now): that job has ended. */
export interface ImageEditProviderCallback {
  /** The provider's request id the callback was for. */
  requestId: string;
}
export const imageEditProviderCallbackSignal = defineSignal<[ImageEditProviderCallback]>('imageEditProviderCallback');

/**
 * Version marker of the image edit workflow: from it, a run started with `hostedCallbacks` submits its hosted jobs (the
 * edit, then the upscale) with a callback and waits for `imageEditProviderCallbackSignal`, looking at the provider only
 * every `fallbackPollMs`; runs from before it made the whole media part in one activity that polled the provider.
 */
export const IMAGE_EDIT_PROVIDER_CALLBACK_PATCH = 'image-edit-provider-callback';
