import type { ActivityDeps } from './deps';
import { createAccountDeletionActivities } from './accountDeletion';
import { createApprovalActivities } from './approvals';
import { createAssemblyActivities } from './assembly';
import { createClipActivities } from './clipGeneration';
import { createDataExportActivities } from './dataExport';
import { createDraftJobActivities } from './draftJob';
import { createImageEditActivities } from './imageEdit';
import { createOnboardingActivities } from './onboarding';
import { createPaymentRefundActivities } from './paymentRefund';
import { createRenderThumbnailActivities } from './renderThumbnails';
import { createStorageSweepActivities } from './storageSweep';
import { createWebhookDeliveryActivities } from './webhookDelivery';
import { createNotificationDigestActivities } from './notificationDigest';
import { acceptingLegacyWorkspaceInput } from './legacyWorkspaceInput';

export type { ActivityDeps } from './deps';

/**
 * All activities of the app, registered on every worker. One factory per concern (activities/<concern>.ts);
 * to add a concern, spread its factory here. Activity names must stay unique across concerns.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createOnboardingActivities(deps),
    ...acceptingLegacyWorkspaceInput(createApprovalActivities(deps)),
    ...acceptingLegacyWorkspaceInput(createImageEditActivities(deps)),
    ...acceptingLegacyWorkspaceInput(createClipActivities(deps)),
    ...createDataExportActivities(deps),
    ...createAccountDeletionActivities(deps),
    ...acceptingLegacyWorkspaceInput(createDraftJobActivities(deps)),
    ...acceptingLegacyWorkspaceInput(createAssemblyActivities(deps)),
    ...createRenderThumbnailActivities(deps),
    ...createStorageSweepActivities(deps),
    ...createPaymentRefundActivities(deps),
    ...createWebhookDeliveryActivities(deps),
    ...createNotificationDigestActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
