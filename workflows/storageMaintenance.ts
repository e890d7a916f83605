/**
 * Hourly storage maintenance, run by the Temporal schedule `storage-maintenance` (one run at a time across all
 * workers): makes the thumbnails and previews a crash or a failed workflow start left missing (and the previews of
 * renders stored before previews existed), then removes stored objects
 * that have no row and are older than the safe age (a process killed between the put and the row insert).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { StorageMaintenanceInput, StorageMaintenanceResult } from '../domain/workflowContracts/storage';

const { rendersMissingThumbnailIds, makeRenderThumbnail } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 3 },
});

const { sweepOrphanedObjects } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '2 minutes', maximumAttempts: 3 },
});

/** With `workspaceId`, only that workspace's renders and stored objects (StorageMaintenanceInput); the schedule passes none. */
export async function storageMaintenanceWorkflow(input: StorageMaintenanceInput = {}): Promise<StorageMaintenanceResult> {
  const scope = { workspaceId: input.workspaceId };
  let thumbnailsMade = 0;
  for (const renderId of await rendersMissingThumbnailIds(scope)) {
    // one image that cannot be read does not stop the others (it is tried again next hour, for a week)
    const outcome = await makeRenderThumbnail({ renderId }).catch(() => 'failed');
    if (outcome === 'made') thumbnailsMade += 1;
  }
  const { removed } = await sweepOrphanedObjects(scope);
  return { thumbnailsMade, orphansRemoved: removed };
}

const { sweepAbandonedUploads } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '1 minute', maximumAttempts: 3 },
});

/**
 * Every 5 minutes, by the Temporal schedule `abandoned-uploads`: removes the objects of uploads that were stored and
 * never recorded (a process killed between the put and the row; services/content/uploadIntents.ts), within minutes
 * rather than the hourly sweep's day.
 */
export async function abandonedUploadsWorkflow(): Promise<{ removed: number; released: number }> {
  return sweepAbandonedUploads();
}
