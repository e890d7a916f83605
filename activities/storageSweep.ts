/** Activities of the hourly storage maintenance (workflows/storageMaintenance.ts): the sweep of objects without a row. */
import { Context } from '@temporalio/activity';
import { sweepOrphanedRenderObjects } from '../services/content/orphanedObjects';
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
  };
}
