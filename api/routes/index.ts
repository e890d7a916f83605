import type Router from '@koa/router';
import { createEventHub } from '../../services/events';
import type { AppDeps } from '../deps';
import { accountRouter } from './account';
import { adminRouter } from './admin';
import { approvalsRouter } from './approvals';
import { authRouter } from './auth';
import { creditsRouter } from './credits';
import { eventsRouter } from './events';
import { filesRouter } from './files';
import { healthRouter } from './health';
import { imageEditRouter } from './imageEdit';
import { jobsRouter } from './jobs';
import { metricsRouter } from './metrics';
import { onboardingRouter } from './onboarding';
import { profileRouter } from './profile';
import { projectsRouter } from './projects';
import { stripeRouter } from './stripe';
import { uploadsRouter } from './uploads';
import { videoGenerationRouter } from './videoGeneration';

/**
 * Every resource group's router, mounted under /api. Add a line per router module.
 * Each factory receives the app's dependencies and returns a Router whose paths start with /api/...
 */
export function buildRouters(deps: AppDeps): Router[] {
  void deps;
  return [
    healthRouter(deps),
    metricsRouter(deps),
    authRouter(deps),
    profileRouter(deps),
    creditsRouter(deps),
    adminRouter(deps),
    filesRouter(deps),
    projectsRouter(deps),
    uploadsRouter(deps),
    imageEditRouter(deps),
    approvalsRouter(deps),
    videoGenerationRouter(deps),
    onboardingRouter(deps),
    accountRouter(deps),
    jobsRouter(deps),
    stripeRouter(deps),
    // an app built without a hub (tests) gets its own: it connects with the first stream and lets go with the last
    eventsRouter({ ...deps, events: deps.events ?? createEventHub({ databaseUrl: deps.config.databaseUrl, knex: deps.knex, logger: deps.logger }) }),
  ];
}
