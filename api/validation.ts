import type { Context } from 'koa';
import { z } from 'zod';

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

export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new RequestError(400, describeIssue(result.error.issues[0]), 'VALIDATION_ERROR');
  return result.data;
}

export function parseBody<T extends z.ZodType>(ctx: Context, schema: T): z.infer<T> {
  return parse(schema, (ctx.request as { body?: unknown }).body ?? {});
}

export function parseQuery<T extends z.ZodType>(ctx: Context, schema: T): z.infer<T> {
  return parse(schema, ctx.query);
}

export const uuid = z.uuid({ message: 'Invalid id' });

/** A string field whose missing or wrong-typed value is reported by its label ('Email is required'). */
export function requiredString(label: string): z.ZodString {
  return z.string({ error: (issue) => (issue.input === undefined ? `${label} is required` : `${label} must be a string`) });
}
