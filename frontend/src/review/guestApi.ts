/**
 * The guest page's calls (api/routes/guestReview.ts): plain fetch on the same origin, nothing else is loaded. The
 * token goes only in the body of the call that opens the session; the session's cookie is scoped to its link.
 */
import type { CommentPin, CommentThreadList, CommentThreadView } from '../../../domain/comments';
import type { GuestDecisionOutcome, GuestReviewView } from '../../../domain/reviewLinks';

export type { CommentPin, CommentThreadList, CommentThreadView, GuestReviewView };

export class GuestApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const FAILED = 'Something went wrong. Please try again.';

async function call<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
      credentials: 'same-origin',
      referrerPolicy: 'no-referrer',
      headers: init.json !== undefined ? { 'content-type': 'application/json' } : {},
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
  } catch {
    throw new GuestApiError(0, undefined, 'We cannot reach the studio. Check your connection and try again.');
  }
  const body = (await res.json().catch(() => null)) as ({ error?: string; code?: string } & T) | null;
  if (!res.ok) throw new GuestApiError(res.status, body?.code, body?.error || FAILED);
  return body as T;
}

export interface Guest {
  name: string;
  email: string;
}

export const openSession = (token: string, password: string | null) => call<{ linkId: string; expiresAt: string }>('/api/guest/sessions', { json: { token, password } });

const link = (linkId: string) => `/api/guest/links/${encodeURIComponent(linkId)}`;

export const fetchReview = (linkId: string) => call<GuestReviewView>(link(linkId));

export const fetchThreads = (linkId: string, itemId: string) => call<CommentThreadList>(`${link(linkId)}/items/${encodeURIComponent(itemId)}/comments`);

export const postComment = async (linkId: string, itemId: string, guest: Guest, body: string, pin: CommentPin | null) =>
  (await call<{ thread: CommentThreadView }>(`${link(linkId)}/items/${encodeURIComponent(itemId)}/comments`, { json: { guest, body, pin } })).thread;

export const postReply = async (linkId: string, threadId: string, guest: Guest, body: string) =>
  (await call<{ thread: CommentThreadView }>(`${link(linkId)}/threads/${encodeURIComponent(threadId)}/replies`, { json: { guest, body } })).thread;

export const approveItem = (linkId: string, itemId: string, guest: Guest) =>
  call<{ outcome: GuestDecisionOutcome; message: string }>(`${link(linkId)}/items/${encodeURIComponent(itemId)}/approve`, { json: { guest } });

export const requestChanges = (linkId: string, itemId: string, guest: Guest, request: string, pin: CommentPin | null) =>
  call<{ outcome: GuestDecisionOutcome; message: string }>(`${link(linkId)}/items/${encodeURIComponent(itemId)}/request-changes`, { json: { guest, request, pin } });

/** Who the guest is, kept for this link in this browser (asked once). */
export function storedGuest(linkId: string): Guest | null {
  try {
    const value = JSON.parse(localStorage.getItem(`rs.review.guest.${linkId}`) ?? 'null') as Guest | null;
    return value && typeof value.name === 'string' && typeof value.email === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function storeGuest(linkId: string, guest: Guest): void {
  try {
    localStorage.setItem(`rs.review.guest.${linkId}`, JSON.stringify(guest));
  } catch {
    // private mode: asked again next time
  }
}
