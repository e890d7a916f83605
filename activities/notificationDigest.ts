import { sendNotificationDigests } from '../services/review/notificationMail';
import type { ActivityDeps } from './deps';

/** The daily notification digests (services/review/notificationMail.ts), for the hourly schedule's workflow. */
export function createNotificationDigestActivities(deps: Pick<ActivityDeps, 'knex' | 'config' | 'logger'>) {
  return {
    sendNotificationDigests: (): Promise<number> => sendNotificationDigests({ knex: deps.knex, config: deps.config, logger: deps.logger }),
  };
}
