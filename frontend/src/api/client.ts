import ky, { HTTPError, type BeforeErrorHook } from 'ky';

/** What the API answers on every failure: `{ success: false, error, code? }`. */
export interface ApiErrorDetails {
  status: number;
  /** The server's `error` text, or the HTTP status text when the body is not the API's shape. */
  apiMessage: string;
  code: string | undefined;
}

export type ApiHttpError = HTTPError & ApiErrorDetails;

function isErrorBody(value: unknown): value is { error: string; code?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string';
}

/** Copies the API's error text and code onto ky's HTTPError, so callers show `error.message` as is. */
const enrichHttpError: BeforeErrorHook = async (error) => {
  const { response } = error;
  let apiMessage = response.statusText || `Request failed with status ${response.status}`;
  let code: string | undefined;
  try {
    const body: unknown = await response.clone().json();
    if (isErrorBody(body)) {
      apiMessage = body.error;
      if (typeof body.code === 'string') code = body.code;
    }
  } catch {
    // not JSON (a proxy's HTML page, an empty body): keep the status text
  }
  const details: ApiErrorDetails = { status: response.status, apiMessage, code };
  Object.assign(error, details);
  error.message = apiMessage;
  return error;
};

/** The one HTTP client: same-origin `/api`, session cookie included, API errors enriched. */
export const api = ky.create({
  prefixUrl: '/api',
  credentials: 'same-origin',
  timeout: 30_000,
  hooks: { beforeError: [enrichHttpError] },
});

export function isApiHttpError(error: unknown): error is ApiHttpError {
  return error instanceof HTTPError && typeof (error as Partial<ApiErrorDetails>).apiMessage === 'string';
}

export function hasStatus(error: unknown, status: number): boolean {
  return isApiHttpError(error) && error.status === status;
}

/** The server's message for an API failure; `fallback` for network failures and anything else. */
export function apiErrorMessage(error: unknown, fallback: string): string {
  return isApiHttpError(error) ? error.apiMessage : fallback;
}
