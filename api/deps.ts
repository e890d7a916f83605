import type { Knex } from 'knex';
import type { AppConfig } from '../config/env';
import type { Logger } from '../config/logger';

/** What the API's routers may use. Each router takes only the parts it needs. */
export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  logger: Logger;
}
