/**
 * Storage workflows (workflows/renderThumbnail.ts, workflows/storageMaintenance.ts): ids and inputs shared by the
 * API, the workers and the workflows. Pure: importable from workflows/.
 */

/** One per render: starting it again for the same render joins the run under way (or is a no-op once done). */
export function renderThumbnailWorkflowId(renderId: string): string {
  return `render-thumbnail-${renderId}`;
}

export interface RenderThumbnailInput {
  renderId: string;
}

/** The Temporal schedule that runs storageMaintenanceWorkflow every hour (created by each worker at start, once). */
export const STORAGE_MAINTENANCE_SCHEDULE_ID = 'storage-maintenance';
export const STORAGE_MAINTENANCE_EVERY = '1 hour';

/** The Temporal schedule that runs abandonedUploadsWorkflow every 5 minutes (services/content/uploadIntents.ts). */
export const ABANDONED_UPLOADS_SCHEDULE_ID = 'abandoned-uploads';
export const ABANDONED_UPLOADS_EVERY = '5 minutes';

/**
 * What one maintenance run covers: everything (the hourly schedule passes no input), or only the renders and stored
 * objects of one workspace (a fix-up of one workspace's library, without the cost of a run over every workspace).
 */
export interface StorageMaintenanceInput {
  workspaceId?: string;
}

export interface StorageMaintenanceResult {
  /** Thumbnails made for renders a crash or a failed start left without one. */
  thumbnailsMade: number;
  /** Stored objects that had no row and were older than the safe age, removed. */
  orphansRemoved: number;
}
