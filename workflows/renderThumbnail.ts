/**
 * The thumbnail and preview of a large render (id `render-thumbnail-<renderId>`), made after its upload recorded the
 * row: the activity decodes the image, stores the webps beside it (never overwriting), records their paths and tells the
 * owner's browsers. Retried with backoff; a render deleted meanwhile ends the run quietly.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { RenderThumbnailInput } from '../domain/workflowContracts/storage';
export * from '../domain/workflowContracts/storage';

const { makeRenderThumbnail } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

export async function renderThumbnailWorkflow(input: RenderThumbnailInput): Promise<string> {
  return makeRenderThumbnail(input);
}
