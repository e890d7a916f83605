/**
 * The app in Chromium with workers of its own for Enhance Renders (real Temporal, the offline local provider), as
 * each browser file of Enhance Renders starts it: its own task queues, so no other file's worker takes its jobs.
 */
import { createActivities } from '../../activities';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { startBrowserApp, type BrowserApp, type BrowserAppOptions } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { startWorkers, uniqueQueues } from '../imageEdit/harness';

export interface EnhanceBrowserApp {
  app: BrowserApp;
  /** closes the browser app, stops the workers and the test database's pool */
  stop(): Promise<void>;
}

export async function startEnhanceBrowserApp(queuePrefix: string, options: Omit<BrowserAppOptions, 'taskQueues'> = {}): Promise<EnhanceBrowserApp> {
  const config = loadConfig();
  const queues = uniqueQueues(queuePrefix);
  const workers = await startWorkers(queues, createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers: createProviders(config) }));
  const app = await startBrowserApp({ ...options, taskQueues: queues });
  return {
    app,
    async stop() {
      await app.close();
      await workers.stop();
      await closeTestKnex();
    },
  };
}
