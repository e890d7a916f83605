import type { Context, Middleware } from 'koa';
import type { Logger } from '../../config/logger';
import { UniqueViolationError, ValidationError as ObjectionValidationError, NotFoundError, CheckViolationError, ForeignKeyViolationError, DataError } from 'objection';
import { DatabaseError } from 'pg';
import { RequestError } from '../validation';
import { ActionLimitedError } from '../../domain/actionLimits';
import { DomainError, UnavailableHereError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { DatabaseUnavailableError, isDatabaseFailure } from '../../db/resilience';
import { isTemporalUnavailable } from '../../services/platform/temporalClient';

interface ErrorBody {
  success: false;
  error: string;
  code?: string;
  [key: string]: unknown;
}

/**
 * PostgreSQL refused a value as data (class 22: bad encoding 22021, bad uuid or number text 22P02, out of range,
 * too long ...): the request carried input the validation let through, so it is the client's 400, never a 500.
 */
function isDataError(err: unknown): boolean {
  if (err instanceof DataError) return true;
  return err instanceof DatabaseError && typeof err.code === 'string' && err.code.startsWith('22');
}

/** Retry-After of a service's 503 refusal (a job start that no worker admitted in time). */
export const DOMAIN_RETRY_AFTER_SECONDS = 5;

function toResponse(err: unknown): { status: number; body: ErrorBody; retryAfter?: number } {
  // a statement timeout, no connection, or an open database breaker: the client may try again shortly
  if (err instanceof DatabaseUnavailableError) {
    return { status: 503, body: { success: false, error: err.message, code: err.code }, retryAfter: err.retryAfterSeconds };
  }
  // the same failures raised where no breaker translates them (a transaction's BEGIN or ROLLBACK on a dropped
  // connection, a connect refused while PostgreSQL restarts, 57P03 "starting up"): 503 too, never a 500
  if (isDatabaseFailure(err)) {
    return { status: 503, body: { success: false, error: 'The database is not reachable right now', code: 'DATABASE_UNAVAILABLE' }, retryAfter: 5 };
  }
  // Temporal is restarting or unreachable: starting or reading a job can work again in a moment
  if (isTemporalUnavailable(err)) {
    return { status: 503, body: { success: false, error: 'Jobs cannot be started or read right now; please try again shortly', code: 'TEMPORAL_UNAVAILABLE' }, retryAfter: 5 };
  }
  if (err instanceof RequestError) {
    return { status: err.status, body: { success: false, error: err.message, ...(err.code ? { code: err.code } : {}), ...err.extra } };
  }
  if (err instanceof ActionLimitedError) return { status: 429, body: { success: false, error: err.message, code: err.code }, retryAfter: err.retryAfterSeconds };
  // a 503 refusal is a moment's unavailability (a start no worker took in time): the client is told when to try again;
  // a service this server is not configured for is no better in a minute
  if (err instanceof DomainError) {
    const temporary = err.status === 503 && !(err instanceof UnavailableHereError);
    return { status: err.status, body: { success: false, error: err.message, code: err.code }, ...(temporary ? { retryAfter: DOMAIN_RETRY_AFTER_SECONDS } : {}) };
  }
  if (err instanceof ObjectionValidationError) return { status: 400, body: { success: false, error: err.message, code: 'VALIDATION_ERROR' } };
  if (isDataError(err)) return { status: 400, body: { success: false, error: 'The request contains a value that is not valid input', code: 'INVALID_INPUT' } };
  if (err instanceof NotFoundError) return { status: 404, body: { success: false, error: 'Not found' } };
  if (err instanceof UniqueViolationError) return { status: 409, body: { success: false, error: 'Already exists', code: 'CONFLICT' } };
  if (err instanceof CheckViolationError || err instanceof ForeignKeyViolationError) {
    return { status: 409, body: { success: false, error: 'The request conflicts with the current state', code: 'CONFLICT' } };
  }
  const status = (err as { status?: number; statusCode?: number })?.status ?? (err as { statusCode?: number })?.statusCode;
  const expose = (err as { expose?: boolean })?.expose;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // koa's ctx.throw and koa-body's parse errors: their messages are written for clients
    const message = expose === false ? 'Bad request' : (err as Error).message;
    return { status, body: { success: false, error: status === 400 && /JSON/i.test(message) ? 'Invalid JSON body' : message } };
  }
  return { status: 500, body: { success: false, error: MSG.somethingWentWrong } };
}

/** First in the chain: maps every error to a status and a `{ success: false, error }` body; 5xx are logged, never leaked. */
export const errorHandler: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const { status, body, retryAfter } = toResponse(err);
    ctx.status = status;
    // a handler may have chosen another type (a file's) before it failed: the refusal is JSON
    ctx.type = 'application/json';
    ctx.body = body;
    if (retryAfter !== undefined) ctx.set('Retry-After', String(retryAfter));
    // an unavailable database is logged at warn by the request; only unexpected failures are errors
    if (err instanceof DatabaseUnavailableError) ctx.state.log?.warn({ err: { message: err.message, code: err.code } }, 'database unavailable');
    else if (isDatabaseFailure(err)) ctx.state.log?.warn({ err: { message: (err as Error).message, code: (err as { code?: unknown }).code } }, 'database unavailable');
    else if (isTemporalUnavailable(err)) ctx.state.log?.warn({ err: { message: (err as Error).message } }, 'temporal unavailable');
    // an expected refusal (e.g. Stripe not configured here): a line for the operator, not an error with a stack that
    // anyone could repeat to fill the log
    else if (err instanceof UnavailableHereError) ctx.state.log?.warn({ code: err.code, status }, err.message);
    else if (status >= 500) ctx.app.emit('error', err, ctx);
  }
};

/** Error codes and messages of a connection the client closed (or reset) before the exchange was over. */
const CLIENT_GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'HPE_INVALID_EOF_STATE']);
const CLIENT_GONE_MESSAGES = new Set(['aborted', 'Premature close', 'socket hang up', 'request aborted']);

/**
 * True when `err` only says that this request's client went away mid-request or mid-response (a closed tab, a
 * cancelled download, a dropped mobile connection). The same codes from an upstream call (a provider, the
 * database) while the client is still connected are real errors.
 */
export function isClientGone(err: unknown, ctx?: Pick<Context, 'req' | 'res'>): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const looksGone = (typeof code === 'string' && CLIENT_GONE_CODES.has(code)) || (typeof message === 'string' && CLIENT_GONE_MESSAGES.has(message));
  if (!looksGone || !ctx) return false;
  const { req, res } = ctx;
  return req.destroyed || res.destroyed || req.socket?.destroyed === true || (req.readableAborted ?? false) || (!req.complete && req.closed);
}

/** The app's 'error' listener: a client that went away is routine (debug), anything else is an error with its stack. */
export function logAppError(logger: Logger) {
  return (err: unknown, ctx?: Context): void => {
    const log: Logger = ctx?.state?.log ?? logger;
    if (isClientGone(err, ctx)) {
      const { code, message } = err as { code?: string; message?: string };
      log.debug({ code: code ?? message, method: ctx?.method, path: ctx?.path }, 'client went away');
      return;
    }
    log.error({ err }, 'unhandled error');
  };
}
