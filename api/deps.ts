import type { Knex } from 'knex';
import type { AppConfig } from '../config/env';
import type { Logger } from '../config/logger';
import type { SignInLimits } from './middleware/rateLimit';

/** What the API's routers may use. Each router takes only the parts it needs. */
export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  logger: Logger;
  /** Sign-in attempt budgets; defaults to DEFAULT_SIGN_IN_LIMITS (tests pass small ones). */
  signInLimits?: SignInLimits;
}
