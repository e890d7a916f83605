import type Router from '@koa/router';
import type { AppDeps } from '../deps';
import { creditsRouter } from './credits';

/**
 * Every resource group's router, mounted under /api. Add a line per router module.
 * Each factory receives the app's dependencies and returns a Router whose paths start with /api/...
 */
export function buildRouters(deps: AppDeps): Router[] {
  void deps;
  return [
    creditsRouter(deps),
  ];
}
