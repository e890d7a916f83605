/**
 * The generation services routers share, built one way: an image edit starts its workflows on the task queues the
 * app was given (a test's own) or the app's own, and approvals refresh the project's listing they change.
 */
import type { AppDeps } from './deps';
import { TASK_QUEUES } from '../domain/taskQueues';
import { contentServicesFor } from '../services/content/contentServices';
import { ApprovalService } from '../services/generation/approvals';
import { ImageEditService } from '../services/generation/imageEdit';
import { getTemporalClient } from '../services/platform/temporalClient';

type GenerationDeps = Pick<AppDeps, 'knex' | 'config' | 'logger' | 'taskQueues' | 'projectOwners' | 'listingReaders' | 'contentChanges'>;

export function imageEditServiceFor(deps: GenerationDeps): ImageEditService {
  const { storage, projects } = contentServicesFor(deps);
  return new ImageEditService({
    knex: deps.knex,
    storage,
    projects,
    temporal: () => getTemporalClient(deps.config),
    queues: {
      generation: deps.taskQueues?.generation ?? TASK_QUEUES.generation,
      media: deps.taskQueues?.media ?? TASK_QUEUES.media,
      approvals: deps.taskQueues?.approvals ?? TASK_QUEUES.approvals,
    },
    logger: deps.logger,
    // the same rule as the worker's (activities/imageEdit.ts): fal with an address it can call back at
    ...(deps.config.providerKind === 'fal' && deps.config.falWebhookBaseUrl ? { hostedCallbacks: { fallbackPollMs: deps.config.falWebhookFallbackPollMs } } : {}),
  });
}

export function approvalServiceFor(deps: GenerationDeps): ApprovalService {
  const { storage, library } = contentServicesFor(deps);
  return new ApprovalService({ knex: deps.knex, storage, temporal: () => getTemporalClient(deps.config), onProjectChanged: (projectId) => library.invalidate(projectId) });
}
