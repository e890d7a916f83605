/**
 * The OpenAPI 3.1 document of the API, generated (@asteasolutions/zod-to-openapi) from the describeRoute records of
 * the routers the app mounts: the same zod schemas the handlers validate with, plus the common answers each kind of
 * route can give (400 for input it refuses, 401/403 for sessions and roles, 404 for ids, 413 for big bodies, 503
 * while the database is unavailable).
 */
import type Router from '@koa/router';
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { TOKEN_SCOPES } from '../../domain/accessTokens';
import { tokenRule } from '../tokenScopes';
import { errorBody, openApiPath, pathParamNames, routeDocsOf, type ResponseDoc, type RouteDoc } from './describe';
import { registerWebhookEvents } from './webhooks';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/api/docs';

const COMMON: Record<number, string> = {
  400: 'The request is not valid: the message says which field and why',
  401: 'No valid session (Bearer token or session cookie)',
  403: "Not allowed: another user's id, a role this user lacks, an access token without the route's scope (TOKEN_SCOPE_MISSING) or one no token may use (TOKEN_NOT_ALLOWED), or a cookie-authenticated write from another site",
  404: 'No such item for this user',
  413: 'The body is too large',
  503: "The database is unavailable right now (a statement timed out: 'Query timeout after <ms>ms', or a circuit breaker is open); try again after Retry-After seconds",
};

function commonStatuses(doc: RouteDoc): number[] {
  const statuses = new Set<number>();
  const hasParams = pathParamNames(doc.path).length > 0;
  const jsonBody = doc.body !== undefined && !('contentType' in doc.body && doc.body.contentType !== 'application/json');
  if (hasParams || doc.query || doc.body) statuses.add(400);
  if (doc.access === 'session' || doc.access === 'admin') {
    statuses.add(401);
    statuses.add(403);
  }
  if (hasParams) statuses.add(404);
  if (jsonBody) statuses.add(413);
  if (!doc.noDatabase) statuses.add(503);
  for (const status of doc.omit ?? []) statuses.delete(status);
  return [...statuses];
}

function isResponseDoc(value: z.ZodType | ResponseDoc): value is ResponseDoc {
  return !(value instanceof z.ZodType);
}

function responseConfig(value: z.ZodType | ResponseDoc, fallbackDescription: string): ResponseConfig {
  const doc: ResponseDoc = isResponseDoc(value) ? value : { description: fallbackDescription, schema: value };
  const config: ResponseConfig = { description: doc.description };
  const types = doc.contentType === undefined ? (doc.schema ? ['application/json'] : []) : [doc.contentType].flat();
  if (types.length) config.content = Object.fromEntries(types.map((type) => [type, { schema: doc.schema ?? z.string() }]));
  if (doc.headers) config.headers = z.object(Object.fromEntries(Object.entries(doc.headers).map(([name, h]) => [name, h.schema.meta({ description: h.description })])));
  return config;
}

function routeConfig(doc: RouteDoc): RouteConfig {
  const names = pathParamNames(doc.path);
  const params = doc.params ?? (names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined);
  const request: RouteConfig['request'] = {};
  if (params) request.params = params;
  if (doc.query) request.query = doc.query as z.ZodObject;
  if (doc.headers) request.headers = doc.headers;
  if (doc.body) {
    const body = doc.body instanceof z.ZodType ? { contentType: 'application/json', schema: doc.body } : doc.body;
    request.body = { description: body.description, required: body.required ?? true, content: { [body.contentType]: { schema: body.schema } } };
  }
  const responses: RouteConfig['responses'] = {};
  for (const status of commonStatuses(doc)) {
    const headers = status === 503 ? { 'Retry-After': { description: 'Seconds to wait before trying again', schema: z.string() } } : undefined;
    responses[String(status)] = responseConfig({ description: COMMON[status], schema: errorBody, headers }, COMMON[status]);
  }
  for (const [status, value] of Object.entries(doc.responses)) responses[status] = responseConfig(value, Number(status) < 300 ? 'Success' : 'Refused');
  const secured = doc.access === 'session' || doc.access === 'admin';
  // a route a personal access token may call names the token's scope it needs (api/tokenScopes.ts decides)
  const token = tokenRule(doc);
  const tokenScope = token.kind === 'scope' ? token.scope : null;
  const security: Array<Record<string, string[]>> = secured ? [...(tokenScope ? [{ accessToken: [tokenScope] }] : []), { bearerAuth: [] }, { sessionCookie: [] }] : [];
  return {
    method: doc.method,
    path: openApiPath(doc.path),
    operationId: operationId(doc),
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    security,
    request,
    responses,
    ...(doc.workspace ? { 'x-workspace-action': doc.workspace } : {}),
    // the scope an access token needs, or null: no token may call it (a session must)
    ...(secured ? { 'x-token-scope': tokenScope } : {}),
    ...(doc.sessionOnly ? { 'x-session-only': true } : {}),
    ...(doc.reviewLink ? { 'x-review-link': doc.reviewLink } : {}),
  };
}

/** A stable id from method and path: `get /api/projects/:id/content` -> `getApiProjectsIdContent`. */
function operationId(doc: RouteDoc): string {
  const words = doc.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return doc.method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

export interface DocumentedRoute {
  method: string;
  /** OpenAPI form: `/api/projects/{id}`. */
  path: string;
}

/** Every route the routers declare (HEAD aside, which Koa answers from GET), in OpenAPI's path form. */
export function mountedRoutes(routers: readonly Router[]): DocumentedRoute[] {
  const found: DocumentedRoute[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        // Koa answers HEAD from a GET route; a route of HEAD alone (tus) is its own operation
        if (method === 'HEAD' && layer.methods.includes('GET')) continue;
        found.push({ method: method.toLowerCase(), path: openApiPath(String(layer.path)) });
      }
    }
  }
  return found;
}

export function documentedRoutes(routers: readonly Router[]): DocumentedRoute[] {
  return routers.flatMap((router) => routeDocsOf(router).map((doc) => ({ method: doc.method, path: openApiPath(doc.path) })));
}

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function buildOpenApiDocument(routers: readonly Router[], options: { version?: string } = {}): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'The session `token` of a sign-in or sign-up answer, as `Authorization: Bearer <token>`',
  });
  registry.registerComponent('securitySchemes', 'accessToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'rs_pat_<43 characters>',
    description:
      'A personal access token (Account -> Security, or POST /api/account/tokens), as `Authorization: Bearer rs_pat_...`. ' +
      `It acts as its user in their workspaces, limited by its scopes (${TOKEN_SCOPES.map((s) => `\`${s}\``).join(', ')}): each operation names ` +
      'the one it needs (`x-token-scope`; null: no token may call it). A call outside the scopes is 403 TOKEN_SCOPE_MISSING naming the scope; ' +
      'an invalid, expired or revoked token is 401. No CSRF check applies to it.',
  });
  registry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'rs_session',
    description: 'The httpOnly session cookie a sign-in sets (`__Host-rs_session` when PUBLIC_URL is https); writes with it must come from the app itself (CSRF)',
  });
  for (const router of routers) for (const doc of routeDocsOf(router)) registry.registerPath(routeConfig(doc));
  // the events the workspace's webhook endpoints receive (OpenAPI 3.1 `webhooks`)
  registerWebhookEvents(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Render studio API',
      version: options.version ?? '0.1.0',
      description:
        'Projects, renders, AI images and clips, approvals, credits and billing. Every /api route needs a session unless marked otherwise; ' +
        'answers are JSON `{ success, ... }`, refusals `{ success: false, error, code? }`.',
    },
  });
}
