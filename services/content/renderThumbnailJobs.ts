/**
 * Starting the thumbnail workflow of a render recorded without one (workflows/renderThumbnail.ts), and the
 * hourly storage maintenance schedule that makes the ones a crash left missing (workflows/storageMaintenance.ts).
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import {
  ABANDONED_UPLOADS_EVERY,
  ABANDONED_UPLOADS_SCHEDULE_ID,
  renderThumbnailWorkflowId,
  STORAGE_MAINTENANCE_EVERY,
  STORAGE_MAINTENANCE_SCHEDULE_ID,
  type RenderThumbnailInput,
} from '../../domain/workflowContracts/storage';
import { TASK_QUEUES } from '../../domain/taskQueues';

/**
 * A function that starts `render-thumbnail-<renderId>` on the media queue (decoding is CPU work). Starting it again
 * while it runs joins that run; the workflow itself leaves a render that has its thumbnail alone.
 */
export function renderThumbnailStarter(client: () => Promise<Client>, taskQueue: string = TASK_QUEUES.media): (renderId: string) => Promise<void> {
  return async (renderId) => {
    const input: RenderThumbnailInput = { renderId };
    await (await client()).workflow.start('renderThumbnailWorkflow', {
      taskQueue,
      workflowId: renderThumbnailWorkflowId(renderId),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [input],
    });
  };
}

/**
 * Creates the hourly `storage-maintenance` schedule unless it exists (every worker calls this at start; the first
 * creates it), then runs it once now: a worker that starts after a crash picks up what the crash left; and the
 * `abandoned-uploads` schedule, every 5 minutes. Runs never overlap.
 */
export async function ensureStorageMaintenanceSchedule(client: Client, taskQueue: string = TASK_QUEUES.media): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: STORAGE_MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: STORAGE_MAINTENANCE_EVERY }] },
      action: { type: 'startWorkflow', workflowType: 'storageMaintenanceWorkflow', taskQueue, workflowId: `${STORAGE_MAINTENANCE_SCHEDULE_ID}-run`, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(STORAGE_MAINTENANCE_SCHEDULE_ID).trigger(ScheduleOverlapPolicy.SKIP);
  // every 5 minutes, what uploads killed between their put and their row left (services/content/uploadIntents.ts)
  try {
    await client.schedule.create({
      scheduleId: ABANDONED_UPLOADS_SCHEDULE_ID,
      spec: { intervals: [{ every: ABANDONED_UPLOADS_EVERY }] },
      action: { type: 'startWorkflow', workflowType: 'abandonedUploadsWorkflow', taskQueue, workflowId: `${ABANDONED_UPLOADS_SCHEDULE_ID}-run`, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
