/**
 * How activities report expected refusals to workflows: a DomainError (a service said no), a PostgreSQL data error
 * (input it cannot store) or a provider error that another attempt cannot fix becomes a non-retryable ApplicationFailure whose type is the refusal's code and
 * whose details carry the HTTP status the API answers with. Anything else is rethrown as is, so Temporal retries it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { DomainError } from '../domain/errors';
import type { FailureDetails } from '../domain/failureDetails';
import { ProviderError } from '../providers/errors';

/** PostgreSQL refused a value as data (class 22: bad encoding, bad uuid text ...): the same input fails every retry. */
function isDataError(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return err instanceof Error && typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (isDataError(err)) {
    return ApplicationFailure.create({ type: 'INVALID_INPUT', message: 'The input is not valid', nonRetryable: true, details: [{ status: 400 } satisfies FailureDetails] });
  }
  if (err instanceof DomainError) {
    return ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: true, details: [{ status: err.status } satisfies FailureDetails] });
  }
  if (err instanceof ProviderError && !err.retryable) {
    const status = err.code === 'INPUT' || err.code === 'VALIDATION' ? 400 : 502;
    return ApplicationFailure.create({ type: `PROVIDER_${err.code}`, message: err.message, nonRetryable: true, details: [{ status } satisfies FailureDetails] });
  }
  return err;
}

/** Runs an activity body, translating its expected refusals (see toActivityFailure). */
export async function reportingRefusals<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw toActivityFailure(err);
  }
}
