/**
 * Activities of the render thumbnail workflow (workflows/renderThumbnail.ts) and of the maintenance run that makes
 * the thumbnails still missing (workflows/storageMaintenance.ts). The work itself is services/content/renderThumbnails.ts.
 */
import type { RenderThumbnailInput, StorageMaintenanceInput } from '../domain/workflowContracts/storage';
import { addRenderThumbnail, rendersMissingThumbnails, type ThumbnailOutcome } from '../services/content/renderThumbnails';
import type { ActivityDeps } from './deps';

export function createRenderThumbnailActivities(deps: Pick<ActivityDeps, 'knex' | 'storage' | 'logger'>) {
  return {
    /** Makes, stores and records one render's thumbnail and preview (those it lacks) unless it has both or is gone. */
    async makeRenderThumbnail(input: RenderThumbnailInput): Promise<ThumbnailOutcome> {
      return addRenderThumbnail(deps, input.renderId);
    },

    /**
     * Renders uploaded a while ago (not within the last minutes: their own workflow is on it) still without a thumbnail
     * or preview; with `workspaceId`, that workspace's only.
     */
    async rendersMissingThumbnailIds(scope: StorageMaintenanceInput = {}): Promise<string[]> {
      return rendersMissingThumbnails(deps.knex, { workspaceId: scope.workspaceId });
    },
  };
}
