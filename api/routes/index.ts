import type Router from '@koa/router';
import type { AppDeps } from '../deps';
import { accountRouter } from './account';
import { adminRouter } from './admin';
import { approvalsRouter } from './approvals';
import { authRouter } from './auth';
import { creditsRouter } from './credits';
import { filesRouter } from './files';
import { healthRouter } from './health';
import { imageEditRouter } from './imageEdit';
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
    stripeRouter(deps),
  ];
}
