import ky, { HTTPError, type AfterResponseHook, type BeforeErrorHook, type BeforeRequestHook, type KyInstance } from 'ky';
import { WORKSPACE_HEADER } from '../../../domain/workspaceRoles';
import { workspaceFromSearch } from './workspaceAddress';

export const TWO_FACTOR_REQUIRED_CODE = 'TWO_FACTOR_REQUIRED';
/** Dispatched on window (detail: TwoFactorRequired) when a call answers 403 TWO_FACTOR_REQUIRED. */
export const TWO_FACTOR_REQUIRED_EVENT = 'rs:two-factor-required';

/** The server's message, and the workspace of the tab when it came (null: the personal one). */
export interface TwoFactorRequired {
  message: string;
  workspaceId: string | null;
}

let lastTwoFactorRequired: TwoFactorRequired | null = null;

/** The last TWO_FACTOR_REQUIRED answer, for a prompt mounted after it came. */
export function lastTwoFactorRequiredAnswer(): TwoFactorRequired | null {
  return lastTwoFactorRequired;
}

/** What the API answers on every failure: `{ success: false, error, code? }`. */
export interface ApiErrorDetails {
  status: number;
  /** The server's `error` text; for a reply that is empty or not JSON, the spec's wording for those (000 section 8). */
  apiMessage: string;
  code: string | undefined;
}

export type ApiHttpError = HTTPError & ApiErrorDetails;

/** How much of an unreadable reply the message quotes. */
const QUOTED_REPLY_CHARS = 200;

/** 000 section 8: 'Server returned empty response with status <n>'. */
export function emptyReplyMessage(status: number): string {
  return `Server returned empty response with status ${status}`;
}

/** 000 section 8: 'Server error (<status>): <text>. Failed to parse JSON response.' with the reply's text (tags removed, cut short). */
export function unreadableReplyMessage(status: number, body: string, statusText = ''): string {
  const text = body
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const quoted = text.length > QUOTED_REPLY_CHARS ? `${text.slice(0, QUOTED_REPLY_CHARS).trimEnd()}…` : text;
  return `Server error (${status}): ${quoted || statusText || 'unreadable reply'}. Failed to parse JSON response.`;
}

/** A successful status whose reply is empty or not JSON: the request may have worked, but its answer cannot be read. */
export class ApiReplyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiReplyError';
  }
}

type ReadReply = { kind: 'empty' } | { kind: 'unreadable'; text: string } | { kind: 'json'; value: unknown };

async function readReply(response: Response): Promise<ReadReply> {
  const text = await response.text();
  if (text.trim() === '') return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'unreadable', text };
  }
}

function isErrorBody(value: unknown): value is { error: string; code?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string';
}

/** Copies the API's error text and code onto ky's HTTPError, so callers show `error.message` as is. */
const enrichHttpError: BeforeErrorHook = async (error) => {
  const { response } = error;
  let apiMessage = response.statusText || `Request failed with status ${response.status}`;
  let code: string | undefined;
  let reply: ReadReply;
  try {
    reply = await readReply(response.clone());
  } catch {
    reply = { kind: 'empty' };
  }
  if (reply.kind === 'empty') apiMessage = emptyReplyMessage(response.status);
  else if (reply.kind === 'unreadable') apiMessage = unreadableReplyMessage(response.status, reply.text, response.statusText);
  else if (isErrorBody(reply.value)) {
    apiMessage = reply.value.error;
    if (typeof reply.value.code === 'string') code = reply.value.code;
  }
  const details: ApiErrorDetails = { status: response.status, apiMessage, code };
  // the workspace requires two-factor sign-in of its members: the dashboard turns this into a set-up prompt
  if (code === TWO_FACTOR_REQUIRED_CODE && typeof window !== 'undefined') {
    lastTwoFactorRequired = { message: apiMessage, workspaceId: currentWorkspaceId() };
    window.dispatchEvent(new CustomEvent(TWO_FACTOR_REQUIRED_EVENT, { detail: lastTwoFactorRequired }));
  }
  Object.assign(error, details);
  error.message = apiMessage;
  return error;
};

/**
 * Every API answer is JSON: a 2xx reply that is empty or not JSON fails here with the spec's wording (ky would
 * hand an empty reply to the caller as '' and an unreadable one as a bare SyntaxError). 204 has no body by design.
 */
const requireJsonReply: AfterResponseHook = async (_request, _options, response) => {
  if (!response.ok || response.status === 204) return;
  const reply = await readReply(response);
  if (reply.kind === 'empty') throw new ApiReplyError(response.status, emptyReplyMessage(response.status));
  if (reply.kind === 'unreadable') throw new ApiReplyError(response.status, unreadableReplyMessage(response.status, reply.text, response.statusText));
};

/** Names the current workspace on every call (`X-Workspace-Id`); none for the personal one, the server's default. */
function namingWorkspace(workspaceOf: () => string | null): BeforeRequestHook {
  return (request) => {
    const workspaceId = workspaceOf();
    if (workspaceId && !request.headers.has(WORKSPACE_HEADER)) request.headers.set(WORKSPACE_HEADER, workspaceId);
  };
}

/**
 * An HTTP client for the API under `prefixUrl`: session cookie included, the current workspace named
 * (`workspaceOf`), replies checked, API errors enriched.
 */
export function createApiClient(prefixUrl: string, workspaceOf: () => string | null = () => null): KyInstance {
  return ky.create({
    prefixUrl,
    credentials: 'same-origin',
    timeout: 30_000,
    hooks: { beforeRequest: [namingWorkspace(workspaceOf)], afterResponse: [requireJsonReply], beforeError: [enrichHttpError] },
  });
}

/** The workspace of this tab: the address is the one place it is kept (`?workspace=<id>`). */
export function currentWorkspaceId(): string | null {
  return typeof window === 'undefined' ? null : workspaceFromSearch(window.location.search);
}

/** The one HTTP client: same-origin `/api`, in the address's workspace. */
export const api = createApiClient('/api', currentWorkspaceId);

export function isApiHttpError(error: unknown): error is ApiHttpError {
  return error instanceof HTTPError && typeof (error as Partial<ApiErrorDetails>).apiMessage === 'string';
}

export function hasStatus(error: unknown, status: number): boolean {
  return isApiHttpError(error) && error.status === status;
}

/** The server's message for an API failure (or the spec's text for an empty or unreadable reply); `fallback` for network failures and anything else. */
export function apiErrorMessage(error: unknown, fallback: string): string {
  if (isApiHttpError(error)) return error.apiMessage;
  if (error instanceof ApiReplyError) return error.message;
  return fallback;
}
