/**
 * What a non-retryable activity failure carries besides its type (activities/failures.ts makes them): the HTTP
 * status the API answers with. The API reads it back from a workflow's failure; both sides share this module.
 */
import type { ApplicationFailure } from '@temporalio/common';

export interface FailureDetails {
  status: number;
}

/** The HTTP status recorded with a failure by toActivityFailure, if any. */
export function failureStatus(failure: ApplicationFailure): number | null {
  const first: unknown = failure.details?.[0];
  if (typeof first === 'object' && first !== null && typeof (first as { status?: unknown }).status === 'number') return (first as FailureDetails).status;
  return null;
}
