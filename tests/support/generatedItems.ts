/**
 * Generated items as a generating workflow leaves them, for tests that need an AI image or a clip without running
 * one: a reservation, the original, watermarked preview and thumbnail stored (a plain picture), the pending item
 * recorded by the approval activity; approved too (the original saved into the project) unless `pendingOnly`.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { createApprovalActivities } from '../../activities/approvals';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { approvalWorkflowId, type ApprovalMetadata } from '../../domain/approvals';
import { checkAndReserve } from '../../services/billing/credits';
import { createStorage } from '../../storage';
import { testKnex } from './db';
import { testClient } from './temporal';

export interface GeneratedItemInput {
  workspaceId: string;
  projectId: string;
  metadata: ApprovalMetadata;
  fileName: string;
  /** the member who started it */
  createdBy?: string;
  sourceJobId?: string | null;
  /** leave it waiting for approval */
  pendingOnly?: boolean;
  /** with `pendingOnly`: start its approval workflow on this task queue (a worker of the test's polls it), so it can be decided */
  approvalQueue?: string;
  /** the stored picture's colour */
  color?: { r: number; g: number; b: number };
}

export interface GeneratedItem {
  approvalId: string;
  /** the saved item's id (null while pending) */
  contentId: string | null;
  /** original, watermarked preview, thumbnail */
  files: string[];
}

export async function storeGeneratedItem(input: GeneratedItemInput): Promise<GeneratedItem> {
  const config = loadConfig();
  const storage = createStorage(config);
  const activities = createApprovalActivities({ knex: testKnex(), config, storage, logger });
  const kind = input.metadata.kind === 'image' ? 'image' : 'clip';
  const approvalId = randomUUID();
  const bucket = kind === 'image' ? 'images' : 'clips';
  const reservation = await checkAndReserve(testKnex(), { workspaceId: input.workspaceId, contentType: kind, idempotencyKey: `generated-item:${approvalId}` });
  const still = await sharp({ create: { width: 320, height: 180, channels: 3, background: input.color ?? { r: 90, g: 120, b: 160 } } }).png().toBuffer();
  const files = [`pending/${approvalId}/original.png`, `pending/${approvalId}/preview.png`, `pending/${approvalId}/thumb.png`];
  for (const p of files) await storage.objects.put(bucket, p, still);
  await activities.createPendingApproval({
    approvalId,
    workspaceId: input.workspaceId,
    createdBy: input.createdBy ?? null,
    projectId: input.projectId,
    fileName: input.fileName,
    aspectRatio: '16:9',
    original: { bucket, path: files[0] },
    watermarked: { bucket, path: files[1] },
    thumbnailPath: files[2],
    reservationId: reservation.id,
    cost: kind === 'image' ? 1 : 4,
    sourceJobId: input.sourceJobId ?? null,
    metadata: input.metadata,
  });
  if (input.pendingOnly) {
    if (input.approvalQueue) {
      const { client, close } = await testClient();
      try {
        await client.workflow.start('approvalWorkflow', {
          taskQueue: input.approvalQueue,
          workflowId: approvalWorkflowId(approvalId),
          args: [{ approvalId, workspaceId: input.workspaceId, windowMs: 7 * 86_400_000 }],
        });
      } finally {
        await close();
      }
    }
    return { approvalId, contentId: null, files };
  }
  return { approvalId, contentId: (await activities.approvePendingItem({ approvalId })).contentId, files };
}

/** An AI image's metadata, made from the render or image whose file `baseImageUrl` names. */
export function imageMetadata(baseImageUrl: string): ApprovalMetadata {
  return { kind: 'image', originalPrompt: 'dusk', refinedPrompt: 'Dusk.', baseImageUrl, format: 'square', width: 320, height: 180, fileSize: 10, mime: 'image/png', upscaled: false };
}

/** A clip's metadata, made from a render or an AI image. */
export function clipMetadata(source: { renderId?: string; imageId?: string }): ApprovalMetadata {
  return {
    kind: 'clip',
    renderId: source.renderId ?? null,
    imageId: source.imageId ?? null,
    effect: 'zoom_in',
    platform: 'youtube',
    aspectRatio: '16:9',
    durationSeconds: 5,
    fileSize: 10,
    mime: 'video/mp4',
    promptUsed: null,
  };
}
