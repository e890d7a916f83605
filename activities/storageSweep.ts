/** Activities of the storage maintenance (workflows/storageMaintenance.ts): the sweeps of objects without a row. */
import { Context } from '@temporalio/activity';
import { sweepOrphanedRenderObjects } from '../services/content/orphanedObjects';
import { sweepAbandonedUploads } from '../services/content/uploadIntents';
import type { StorageMaintenanceInput } from '../domain/workflowContracts/storage';
import type { ActivityDeps } from './deps';

export function createStorageSweepActivities(deps: Pick<ActivityDeps, 'knex' | 'storage' | 'logger'>) {
  return {
    /**
     * Removes stored objects without a row older than ORPHAN_MIN_AGE_MS (services/content/orphanedObjects.ts); with
     * `workspaceId`, only among that workspace's objects.
     */
    async sweepOrphanedObjects(scope: StorageMaintenanceInput = {}): Promise<{ checked: number; removed: number }> {
      const result = await sweepOrphanedRenderObjects(deps, { workspaceId: scope.workspaceId, progress: () => Context.current().heartbeat() });
      return { checked: result.checked, removed: result.removed.length };
    },

    /** Removes what uploads killed between their put and their row left (services/content/uploadIntents.ts). */
    async sweepAbandonedUploads(): Promise<{ removed: number; released: number }> {
      const result = await sweepAbandonedUploads({ knex: deps.knex, objects: deps.storage.objects, logger: deps.logger });
      return { removed: result.removed.length, released: result.released };
    },
  };
}
