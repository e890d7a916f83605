import type { Knex } from 'knex';
import type { AppConfig } from '../config/env';
import type { Logger } from '../config/logger';
import type { Providers } from '../providers/types';
import type { Storage } from '../storage';
import type { ImageWork } from './imageWork';

/**
 * Everything activities may use, built once by the worker (workers/main.ts) and by tests.
 * Each activity module's factory declares the subset it needs (`Pick<ActivityDeps, ...>`).
 */
export interface ActivityDeps {
  knex: Knex;
  config: AppConfig;
  logger: Logger;
  storage: Storage;
  /** AI capabilities (providers/index.ts createProviders: local or hosted, each behind its circuit breaker). */
  providers: Providers;
  /** The sharp work of image jobs: the worker's image thread (activities/imageThread.ts); unset, on the caller's thread. */
  imageWork?: ImageWork;
}
