/**
 * Errors every provider throws. `retryable` tells an activity whether another attempt can help
 * (a 503, a network error) or not (a rejected input, a job the model failed); `countsAsFailure`
 * tells the circuit breaker whether the error says something about the provider's health.
 */
export type ProviderErrorCode =
  | 'INPUT' // the caller's request is unusable (empty prompt, unknown effect)
  | 'AUTH' // the provider refused our credentials
  | 'VALIDATION' // the provider refused the input (HTTP 422 and friends)
  | 'RATE_LIMITED'
  | 'UNAVAILABLE' // 5xx or network failure
  | 'TIMEOUT'
  | 'BAD_RESPONSE' // an answer we cannot read
  | 'JOB_FAILED'
  | 'JOB_CANCELLED'
  | 'UNKNOWN_JOB'
  | 'ABORTED' // the caller stopped waiting (activity cancelled); the job itself may go on
  | 'MEDIA'; // local sharp/ffmpeg work failed

const RETRYABLE: ReadonlySet<ProviderErrorCode> = new Set(['RATE_LIMITED', 'UNAVAILABLE', 'TIMEOUT', 'BAD_RESPONSE']);
const NOT_HEALTH: ReadonlySet<ProviderErrorCode> = new Set(['INPUT', 'VALIDATION', 'JOB_CANCELLED', 'UNKNOWN_JOB', 'ABORTED']);

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly retryable: boolean;
  readonly httpStatus?: number;

  constructor(code: ProviderErrorCode, message: string, options: { httpStatus?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.code = code;
    this.retryable = RETRYABLE.has(code);
    this.httpStatus = options.httpStatus;
  }
}

/** The breaker's failure filter: a bad input is the caller's problem, not the provider's. */
export function countsAsProviderFailure(error: unknown): boolean {
  return !(error instanceof ProviderError && NOT_HEALTH.has(error.code));
}
