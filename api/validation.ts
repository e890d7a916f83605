import type { Context } from 'koa';
import { z } from 'zod';
import { findTextInputProblem, textInputProblem } from '../domain/textInput';
import { WORKSPACE_PARAM } from '../domain/workspaceRoles';

/** A client mistake: the error middleware answers it with `status` and `{ success: false, error, code }`. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `Unknown field(s): ${issue.keys.join(', ')}`;
  const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
  // messages written in the schemas are the specs' own texts: pass them through unchanged
  return issue.message.startsWith('Invalid') || issue.message.startsWith('Expected') || issue.message.startsWith('Too')
    ? `${where}${issue.message}`
    : issue.message;
}

/**
 * The text-input rule (domain/textInput.ts) over every string and key of a request's input: NUL, other control
 * characters and unpaired surrogates are refused with 400 wherever they appear, named fields or not. Line feeds
 * and tabs pass here; single-line fields refuse them too through `singleLine`.
 */
export function assertSafeTextInput(value: unknown): void {
  const found = findTextInputProblem(value, 'multi-line');
  if (found) {
    // a deeply nested body names the first few levels only
    const where = found.path.length === 0 ? 'The text' : found.path.slice(0, 8).join('.') + (found.path.length > 8 ? '...' : '');
    throw new RequestError(400, `${where} ${found.problem}`, 'VALIDATION_ERROR');
  }
}

export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new RequestError(400, describeIssue(result.error.issues[0]), 'VALIDATION_ERROR');
  // after the schema, so a field's own label words the refusal where it has one ('Project name contains ...')
  assertSafeTextInput(value);
  return result.data;
}

export function parseBody<T extends z.ZodType>(ctx: Context, schema: T): z.infer<T> {
  return parse(schema, (ctx.request as { body?: unknown }).body ?? {});
}

/**
 * A route's query without the workspace parameter, unless the route's schema names it: api/workspace.ts reads
 * `?workspaceId=` for every route as it reads the X-Workspace-Id header (docs/api.md "Workspaces"), so the links in
 * webhook payloads and the docs work on routes whose own parameters are strict.
 */
function routeQuery(schema: z.ZodType, query: Context['query']): Context['query'] {
  if (!(WORKSPACE_PARAM in query)) return query;
  if (schema instanceof z.ZodObject && WORKSPACE_PARAM in schema.shape) return query;
  const { [WORKSPACE_PARAM]: _readByWorkspaceAccess, ...rest } = query;
  return rest;
}

export function parseQuery<T extends z.ZodType>(ctx: Context, schema: T): z.infer<T> {
  return parse(schema, routeQuery(schema, ctx.query));
}

export const uuid = z.uuid({ message: 'Invalid id' });

/** A name, e-mail, file name or other one-line field: the text-input rule without line breaks or tabs. */
export function singleLine<S extends z.ZodString>(schema: S, label: string): S {
  return schema.superRefine((value, ctx) => {
    const problem = textInputProblem(value, 'single-line');
    if (problem) ctx.addIssue({ code: 'custom', message: `${label} ${problem}` });
  }) as S;
}

/** A string field whose missing or wrong-typed value is reported by its label ('Email is required'). */
export function requiredString(label: string): z.ZodString {
  return z.string({ error: (issue) => (issue.input === undefined ? `${label} is required` : `${label} must be a string`) });
}
