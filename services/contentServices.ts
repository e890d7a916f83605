import type { AppConfig } from '../config/env';
import type { Logger } from '../config/logger';
import { createStorage, type Storage } from '../storage';
import { ContentLibraryService } from './library';
import { ProjectService } from './projects';
import { RenderUploadService } from './renders';

/** Projects, uploads and the library share one storage and one listing cache, so an upload clears the listing it changed. */
export interface ContentServices {
  storage: Storage;
  projects: ProjectService;
  uploads: RenderUploadService;
  library: ContentLibraryService;
}

export function createContentServices(deps: { config: Pick<AppConfig, 'storageDir' | 'signingSecret' | 'signedUrlTtlSeconds'>; logger?: Logger; maxUploadBytes?: number }): ContentServices {
  const storage = createStorage(deps.config);
  const projects = new ProjectService({ storage, logger: deps.logger });
  const library = new ContentLibraryService({ storage, projects, logger: deps.logger });
  const onProjectChanged = (projectId: string): void => library.invalidate(projectId);
  return {
    storage,
    projects,
    uploads: new RenderUploadService({ storage, projects, logger: deps.logger, maxBytes: deps.maxUploadBytes, onProjectChanged }),
    library,
  };
}

const perApp = new WeakMap<object, ContentServices>();

/** One set per app: every router built from the same deps object gets the same services. */
export function contentServicesFor(deps: { config: AppConfig; logger: Logger }): ContentServices {
  let services = perApp.get(deps);
  if (!services) {
    services = createContentServices(deps);
    perApp.set(deps, services);
  }
  return services;
}
