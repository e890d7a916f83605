/**
 * Where a route's documentation is written: `describeRoute(router, {...})` right beside the handler, with the very
 * zod schemas the handler parses its params, query and body with, and the schemas of what it answers. The OpenAPI
 * document (api/openapi/document.ts) is generated from these records of the routers the app mounts, and
 * tests/api/openapi.test.ts fails when a mounted route has no record or a record has no route.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import type { WorkspaceAction } from '../../domain/workspaceRoles';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * Who may call it: `session` (Bearer token or the session cookie; 401 without), `admin` (a session with the admin
 * role; 403 otherwise), `public` (no credential), `signature` (the request carries its own: a signed file link or
 * Stripe's signature header).
 */
export type RouteAccess = 'session' | 'admin' | 'public' | 'signature';

export interface ResponseDoc {
  description: string;
  /** The body's schema; none for a body-less answer. */
  schema?: z.ZodType;
  /** Default application/json; several when the route answers in more than one. */
  contentType?: string | string[];
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

export interface RequestBodyDoc {
  contentType: string;
  schema: z.ZodType;
  description?: string;
  required?: boolean;
}

export interface RouteDoc {
  method: HttpMethod;
  /** The path exactly as given to the router (`/api/projects/:id`); the document writes `{id}`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: RouteAccess;
  /**
   * For a `session` or `admin` route, what it does in a workspace (DESIGN.md "Teams (workspaces)"): the action the
   * access module (api/workspace.ts) checks before the handler touches anything, or `self` for a route that acts only
   * on the caller's own account (profile, password, sessions, the list of their workspaces) and no workspace's
   * resources. Written into the document as `x-workspace-action`; tests/workspaces/accessMatrix.test.ts walks every
   * operation by it and fails for a session route without one.
   */
  workspace?: WorkspaceAction | 'self';
  /**
   * Only with a session, never a personal access token (api/tokenScopes.ts), whatever the action: a route whose answer
   * lasts as long as the session it was opened with (the event stream). Written into the document as `x-session-only`.
   */
  sessionOnly?: true;
  /**
   * A public route of a review link's guest (issue 43): the link's token, or the guest session of the link the path
   * names, is the credential; it reaches only that link's items and actions. Written into the document as
   * `x-review-link`; tests/workspaces/accessMatrix.test.ts calls each such route across links and workspaces.
   */
  reviewLink?: 'token' | 'session';
  /** Path parameters: the schema the handler parses them with; plain strings when absent. */
  params?: z.ZodObject;
  query?: z.ZodType;
  /** Request headers the handler reads (lower-case names). */
  headers?: z.ZodObject;
  /** A JSON body (application/json) or another media type. */
  body?: z.ZodType | RequestBodyDoc;
  /** Answers besides the common ones (400, 401, 403, 404, 413, 503 are added from the rest of the record). */
  responses: Record<number, z.ZodType | ResponseDoc>;
  /** Statuses of the common set this route never answers with. */
  omit?: number[];
  /** Touches no database (no 503 for an unavailable one). */
  noDatabase?: boolean;
}

const docsByRouter = new WeakMap<Router, RouteDoc[]>();

/** Records the documentation of one of `router`'s routes. Call it next to the route's handler. */
export function describeRoute(router: Router, doc: RouteDoc): void {
  const list = docsByRouter.get(router) ?? [];
  if (list.some((d) => d.method === doc.method && d.path === doc.path)) throw new Error(`describeRoute: ${doc.method.toUpperCase()} ${doc.path} is described twice`);
  list.push(doc);
  docsByRouter.set(router, list);
}

export function routeDocsOf(router: Router): readonly RouteDoc[] {
  return docsByRouter.get(router) ?? [];
}

/** The router path in OpenAPI's form: `:id` -> `{id}`, `*path` (the rest of the path) -> `{path}`. */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export function pathParamNames(routerPath: string): string[] {
  return [...routerPath.matchAll(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

// ---- shapes shared by many routes ----

/** Every refusal: `{ success: false, error, code? }` (api/middleware/errors.ts), sometimes with more fields. */
export const errorBody = z
  .object({
    success: z.literal(false),
    error: z.string(),
    code: z.string().optional(),
  })
  .meta({ id: 'Error' });

/** An ISO 8601 timestamp as JSON carries a Date. */
export const timestamp = z.string().meta({ format: 'date-time' });

/** A 429 of domain/actionLimits.ts: the message says what and when; Retry-After in seconds. */
export const actionLimited = {
  description: 'Over a budget of this action (RATE_LIMITED): the message says when to try again',
  schema: z.object({ success: z.literal(false), error: z.string(), code: z.literal('RATE_LIMITED') }),
  headers: { 'Retry-After': { description: 'Seconds until the budget has room again', schema: z.string() } },
};

export const okBody = z.object({ success: z.literal(true) });

/**
 * A named schema (`.meta({ id })`) or null. `.nullable()` on a named schema comes out as `allOf: [$ref, {type:
 * [object, null]}]`, which refuses null; a union says it right (`anyOf`).
 */
export function orNull<S extends z.ZodType>(schema: S) {
  return z.union([schema, z.null()]);
}

/** A value as JSON carries it: Dates become strings. */
export type Json<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Json<U>[]
    : T extends readonly (infer U)[]
      ? readonly Json<U>[]
      : T extends object
        ? { [K in keyof T]: Json<T[K]> }
        : T;

/**
 * A response schema tied to the TypeScript type the handler answers with: it compiles only when every value of
 * that type (as JSON) is valid input for the schema, so the document cannot drift from the code unnoticed.
 * `answers<ProjectView>()(projectView)`.
 */
export function answers<T>() {
  return <S extends z.ZodType>(schema: S & ([Json<T>] extends [z.input<S>] ? unknown : { __schemaDoesNotDescribe: Json<T> })): S => schema;
}
