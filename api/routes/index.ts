import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { createEventHub } from '../../services/platform/events';
import type { AppDeps } from '../deps';
import { guardTokenScopes } from '../tokenScopes';
import { accessTokensRouter } from './accessTokens';
import { accountRouter } from './account';
import { adminRouter } from './admin';
import { approvalsRouter } from './approvals';
import { commentsRouter } from './comments';
import { changeRequestsRouter } from './changeRequests';
import { guestReviewRouter } from './guestReview';
import { reviewLinksRouter } from './reviewLinks';
import { authRouter } from './auth';
import { ssoRouter } from './sso';
import { brandKitRouter } from './brandKit';
import { musicRouter } from './music';
import { creditsRouter } from './credits';
import { enhanceSetRouter } from './enhanceSet';
import { eventsRouter } from './events';
import { filesRouter } from './files';
import { healthRouter } from './health';
import { imageEditRouter } from './imageEdit';
import { jobsRouter } from './jobs';
import { lineageRouter } from './lineage';
import { metricsRouter } from './metrics';
import { notificationsRouter } from './notifications';
import { onboardingRouter } from './onboarding';
import { openApiRouter } from './openapi';
import { profileRouter } from './profile';
import { projectsRouter } from './projects';
import { providerCallbacksRouter } from './providerCallbacks';
import { resumableUploadsRouter } from './resumableUploads';
import { stripeRouter } from './stripe';
import { uploadsRouter } from './uploads';
import { videoAssemblyRouter } from './videoAssembly';
import { videoGenerationRouter } from './videoGeneration';
import { webhookDeliveriesRouter } from './webhookDeliveries';
import { webhooksRouter } from './webhooks';
import { workspacesRouter } from './workspaces';
import { workspaceSsoRouter } from './workspaceSso';
import { twoFactorRouter } from './twoFactor';

/**
 * Every resource group's router, mounted under /api. Add a line per router module.
 * Each factory receives the app's dependencies and returns a Router whose paths start with /api/...
 */
export function buildRouters(deps: AppDeps): Router[] {
  void deps;
  const routers: Router[] = [
    healthRouter(deps),
    metricsRouter(deps),
    authRouter(deps),
    ssoRouter(deps),
    profileRouter(deps),
    creditsRouter(deps),
    adminRouter(deps),
    filesRouter(deps),
    projectsRouter(deps),
    uploadsRouter(deps),
    resumableUploadsRouter(deps),
    lineageRouter(deps),
    imageEditRouter(deps),
    approvalsRouter(deps),
    commentsRouter(deps),
    changeRequestsRouter(deps),
    notificationsRouter(deps),
    reviewLinksRouter(deps),
    guestReviewRouter(deps),
    videoGenerationRouter(deps),
    videoAssemblyRouter(deps),
    onboardingRouter(deps),
    accountRouter(deps),
    twoFactorRouter(deps),
    accessTokensRouter(deps),
    jobsRouter(deps),
    stripeRouter(deps),
    providerCallbacksRouter(deps),
    enhanceSetRouter(deps),
    workspacesRouter(deps),
    workspaceSsoRouter(deps),
    brandKitRouter(deps),
    musicRouter(deps),
    webhooksRouter(deps),
    webhookDeliveriesRouter(deps),
    // an app built without a hub (tests) gets its own: it connects with the first stream and lets go with the last
    eventsRouter({ ...deps, events: deps.events ?? createEventHub({ databaseUrl: deps.config.databaseUrl, knex: deps.knex, logger: deps.logger }) }),
  ];
  // last: GET /api/openapi.json describes every router above (api/openapi/describe.ts) and /api/docs shows it
  const all = [...routers, openApiRouter(routers)];
  // personal access tokens: each route's scope, from its record (api/tokenScopes.ts)
  guardTokenScopes(deps, all);
  return all;
}

/** A request path's first two segments, lower-cased, without a trailing slash: `/api/credits/summary` -> `/api/credits`. */
function thirdSlash(path: string): number {
  const second = path.indexOf('/', 1);
  return second === -1 ? -1 : path.indexOf('/', second + 1);
}

function dispatchKey(path: string): string {
  const third = thirdSlash(path);
  const head = (third === -1 ? path : path.slice(0, third)).toLowerCase();
  return head.length > 1 && head.endsWith('/') ? head.slice(0, -1) : head;
}

// path-to-regexp's special characters: a layer's path is literal up to the first of them
const PATTERN_CHAR = /[:*(){}?+\\]/;

/**
 * The key every request a route layer can match has (see dispatchKey), or null when the layer could match requests
 * under more than one key (a parameter or pattern within its first two segments, a RegExp path, a case-sensitive
 * layer). The layers match case-insensitively with an optional trailing slash against the undecoded path, so a path
 * that matches a layer starts with the layer's literal part, whatever case it is in.
 */
function layerKey(layer: { path: string | RegExp; opts: { sensitive?: boolean } }): string | null {
  if (typeof layer.path !== 'string' || layer.opts.sensitive) return null;
  const special = layer.path.search(PATTERN_CHAR);
  const literal = special === -1 ? layer.path : layer.path.slice(0, special);
  const third = thirdSlash(literal);
  if (third !== -1) return literal.slice(0, third).toLowerCase();
  // no third slash in the literal part: only a fully literal path of at most two segments has one key
  return special === -1 && literal.startsWith('/') ? dispatchKey(literal) : null;
}

/**
 * One middleware in place of `router.routes()` and `router.allowedMethods()` for each router in turn: a request runs
 * only the routers that have a route its first two path segments can match, in their order (issue 16: every
 * router's matcher ran for every request). What a request sees is unchanged: a router without a matching route
 * only calls next(), every router allows the same methods, and the routers' allowedMethods answer from
 * `ctx.matched` of all routers that ran (so 405/501/OPTIONS come out the same). A request under no router's key
 * runs an empty router, which sets `ctx.matched` and answers 501 for methods no router knows, as before. Routers
 * with a layer that could match under several keys run for every request; so does any path with non-ASCII
 * characters (Unicode case folding is not worth reasoning about here).
 */
export function routerDispatch(routers: Router[]): Middleware {
  const methods = new Set(routers.map((r) => r.methods.join(',')));
  const chain = (rs: Router[]): Middleware => compose(rs.flatMap((r) => [r.routes() as Middleware, r.allowedMethods() as Middleware]));
  // routers built with other methods or host options: keep the plain chain
  if (methods.size > 1 || routers.some((r) => r.opts.host !== undefined || r.opts.routerPath !== undefined)) return chain(routers);
  const keysOf = routers.map((r) => {
    const keys = new Set<string>();
    for (const layer of r.stack) {
      if (layer.methods.length === 0) continue; // r.use() middleware runs only with one of the router's routes
      const key = layerKey(layer);
      if (key === null) return null;
      keys.add(key);
    }
    return keys;
  });
  const everyKey = [...new Set(keysOf.flatMap((keys) => (keys ? [...keys] : [])))];
  const byKey = new Map<string, Middleware>();
  for (const key of everyKey) byKey.set(key, chain(routers.filter((_, i) => keysOf[i] === null || keysOf[i]!.has(key))));
  const always = routers.filter((_, i) => keysOf[i] === null);
  const fallback = chain(always.length ? always : [new Router()]);
  const all = chain(routers);
  return function routerDispatchMiddleware(ctx, next) {
    // eslint-disable-next-line no-control-regex
    if (/[^\x00-\x7f]/.test(ctx.path)) return all(ctx, next);
    return (byKey.get(dispatchKey(ctx.path)) ?? fallback)(ctx, next);
  };
}
