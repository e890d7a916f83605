/**
 * What a personal access token may call, decided in this one place from each route's describeRoute record
 * (api/openapi/describe.ts): its `access` and its `workspace` action (DESIGN.md "Integrations (tokens and
 * webhooks)"; the scopes are domain/accessTokens.ts's).
 *
 * - a workspace action needs the scope TOKEN_SCOPE_OF_ACTION names (read and download: `read`; edit, generate and
 *   assemble: `generate`; approve: `approve`; billing reads: `billing:read`); managing members, billing writes,
 *   webhooks and owning a workspace are never done with a token;
 * - `self` routes (the caller's own account): reads need `read` (the profile, the list of workspaces), except the
 *   account's tokens, sessions and data exports; a token never writes to its own account;
 * - site administration, a route marked `sessionOnly` (the event stream, which lives as long as its session), and a
 *   route without a record refuse tokens (deny by default);
 * - public and signature routes do not look at a token.
 *
 * The guard runs first in each route's own middleware, so it sees exactly the route that answers; after it, the
 * workspace role check (api/workspace.ts) applies as for the user: a viewer's token cannot generate whatever its scopes.
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ACCESS_TOKEN_MSG, TOKEN_NOT_ALLOWED, TOKEN_SCOPE_MISSING, TOKEN_SCOPE_OF_ACTION, type TokenScope } from '../domain/accessTokens';
import { authenticateAccessTokenRequest, bearerAccessToken, currentAccessToken, type AuthDeps } from './middleware/auth';
import { routeDocsOf, type RouteDoc } from './openapi/describe';
import { RequestError } from './validation';

export type TokenRule =
  /** the route does not authenticate by session: a token is neither needed nor looked at */
  | { kind: 'open' }
  | { kind: 'scope'; scope: TokenScope }
  | { kind: 'never'; message: string };

/** `self` routes a token may not even read: the account's tokens, sessions and data exports. */
const ACCOUNT_ONLY_PATHS = [/^\/api\/account(\/|$)/i, /\/sessions(\/|$)/i];

const READS = new Set(['get', 'head']);

/** The rule for a route's record; a route without one (undefined) refuses tokens. */
export function tokenRule(doc: Pick<RouteDoc, 'method' | 'path' | 'access' | 'workspace' | 'sessionOnly'> | undefined): TokenRule {
  if (!doc) return { kind: 'never', message: ACCESS_TOKEN_MSG.notAccepted };
  if (doc.access === 'public' || doc.access === 'signature') return { kind: 'open' };
  if (doc.access === 'admin') return { kind: 'never', message: ACCESS_TOKEN_MSG.neverAdmin };
  const read = READS.has(doc.method);
  if (doc.workspace === undefined || doc.sessionOnly) return { kind: 'never', message: ACCESS_TOKEN_MSG.notAccepted };
  if (doc.workspace === 'self') {
    return read && !ACCOUNT_ONLY_PATHS.some((p) => p.test(doc.path)) ? { kind: 'scope', scope: 'read' } : { kind: 'never', message: ACCESS_TOKEN_MSG.neverAccount };
  }
  const scope = TOKEN_SCOPE_OF_ACTION[doc.workspace];
  if (scope === null || (doc.workspace === 'billing' && !read)) return { kind: 'never', message: ACCESS_TOKEN_MSG.neverManage };
  return { kind: 'scope', scope };
}

/** The scope a route needs from a token, or null when no token may call it (or the route takes none). */
export function tokenScopeOf(doc: RouteDoc): TokenScope | null {
  const rule = tokenRule(doc);
  return rule.kind === 'scope' ? rule.scope : null;
}

function refuse(rule: TokenRule, scopes: readonly TokenScope[]): RequestError | null {
  if (rule.kind === 'open') return null;
  if (rule.kind === 'never') return new RequestError(403, rule.message, TOKEN_NOT_ALLOWED);
  if (scopes.includes(rule.scope)) return null;
  return new RequestError(403, ACCESS_TOKEN_MSG.missingScope(rule.scope), TOKEN_SCOPE_MISSING, { requiredScope: rule.scope });
}

function guardFor(deps: AuthDeps, rules: ReadonlyMap<string, TokenRule>): Middleware {
  return async function tokenScopeGuard(ctx: Context, next) {
    if (bearerAccessToken(ctx) === null) return next();
    const method = ctx.method.toLowerCase();
    // Koa answers HEAD from a GET route
    const rule = rules.get(method) ?? (method === 'head' ? rules.get('get') : undefined) ?? tokenRule(undefined);
    if (rule.kind === 'open') return next();
    // routes that answer their own 401 text are public to the app-wide guard: the token is checked here first
    await authenticateAccessTokenRequest(deps, ctx);
    const refusal = refuse(rule, currentAccessToken(ctx)?.scopes ?? []);
    if (refusal) throw refusal;
    return next();
  };
}

/**
 * Puts the token guard first in every route of the routers, with the rule of the route's record (per method of
 * the route). Call once, on the routers the app mounts, after their routes are defined.
 */
export function guardTokenScopes(deps: AuthDeps, routers: readonly Router[]): void {
  for (const router of routers) {
    const docs = routeDocsOf(router);
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue;
      const rules = new Map<string, TokenRule>();
      for (const method of layer.methods) {
        const m = method.toLowerCase();
        rules.set(m, tokenRule(docs.find((d) => d.method === m && d.path === layer.path)));
      }
      // a HEAD the router added beside GET has no record of its own: it is the GET
      if (rules.get('head')?.kind === 'never' && !docs.some((d) => d.method === 'head' && d.path === layer.path) && rules.has('get')) rules.set('head', rules.get('get')!);
      layer.stack.unshift(guardFor(deps, rules));
    }
  }
}
