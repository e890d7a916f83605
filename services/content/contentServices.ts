import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import type { TaskQueueName } from '../../domain/taskQueues';
import { createStorage, type Storage, type StorageConfig } from '../../storage';
import type { ContentChanges } from './contentChanges';
import { ContentLibraryService } from './library';
import type { ListingReaders } from './listingReaders';
import type { ProjectOwnerCache } from './projectOwnerCache';
import { ProjectService } from './projects';
import { RenderUploadService } from './renders';
import { renderThumbnailStarter } from './renderThumbnailJobs';
import { getTemporalClient } from '../platform/temporalClient';

/** Projects, uploads and the library share one storage and one listing cache, so an upload clears the listing it changed. */
export interface ContentServices {
  storage: Storage;
  projects: ProjectService;
  uploads: RenderUploadService;
  library: ContentLibraryService;
}

export interface ContentServicesDeps {
  config: StorageConfig;
  logger?: Logger;
  maxUploadBytes?: number;
  /** Starts the worker's thumbnail of a large upload (services/content/renderThumbnailJobs.ts); without it the maintenance run makes it. */
  deferThumbnail?: (renderId: string) => Promise<void>;
  inlineThumbnailMaxBytes?: number;
  /** Project owners kept in the process (AppDeps.projectOwners) for the listing's ownership check; without it each check is read. */
  projectOwners?: ProjectOwnerCache;
  /** Threads that read and build listings (AppDeps.listingReaders); without them the API thread does. */
  listingReaders?: ListingReaders;
  /** Content changes heard from PostgreSQL (AppDeps.contentChanges), which keep the listing reuse exact across processes. */
  contentChanges?: ContentChanges;
}

export function createContentServices(deps: ContentServicesDeps): ContentServices {
  const storage = createStorage(deps.config);
  const projects = new ProjectService({ storage, logger: deps.logger, owners: deps.projectOwners });
  const library = new ContentLibraryService({ storage, projects, logger: deps.logger, readers: deps.listingReaders, changes: deps.contentChanges });
  const onProjectChanged = (projectId: string): void => library.invalidate(projectId);
  return {
    storage,
    projects,
    uploads: new RenderUploadService({
      storage,
      projects,
      logger: deps.logger,
      maxBytes: deps.maxUploadBytes,
      onProjectChanged,
      deferThumbnail: deps.deferThumbnail,
      inlineThumbnailMaxBytes: deps.inlineThumbnailMaxBytes,
    }),
    library,
  };
}

const perApp = new WeakMap<object, ContentServices>();

/** One set per app: every router built from the same deps object gets the same services. */
export function contentServicesFor(deps: {
  config: AppConfig;
  logger: Logger;
  taskQueues?: Partial<Record<TaskQueueName, string>>;
  projectOwners?: ProjectOwnerCache;
  listingReaders?: ListingReaders;
  contentChanges?: ContentChanges;
}): ContentServices {
  let services = perApp.get(deps);
  if (!services) {
    services = createContentServices({
      config: deps.config,
      logger: deps.logger,
      deferThumbnail: renderThumbnailStarter(() => getTemporalClient(deps.config), deps.taskQueues?.media),
      projectOwners: deps.projectOwners,
      listingReaders: deps.listingReaders,
      contentChanges: deps.contentChanges,
    });
    perApp.set(deps, services);
  }
  return services;
}
