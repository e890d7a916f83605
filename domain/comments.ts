/**
 * Comments on items (DESIGN.md "Review"): a thread belongs to one item of a workspace (a pending or saved image,
 * clip or assembled video, or a render) and may be pinned to a point or a rectangle of the picture, in fractions of
 * its width and height so the pin holds at every size, and for clips and videos to a time (with or without a point).
 * A thread opens with a comment; replies follow; the thread is resolved and reopened as a whole.
 *
 * Pure types and rules, shared by the API (validation), the service and the front end (the same checks before a
 * request is sent, and the same way of finding links and mentions in a comment's text).
 */

/** What a thread is about: the kinds of content_lineage, plus a pending item (its pending_approvals row). */
export const COMMENT_ITEM_KINDS = ['render', 'image', 'clip', 'compiled_video', 'generated', 'approval'] as const;
export type CommentItemKind = (typeof COMMENT_ITEM_KINDS)[number];

export const COMMENT_MAX_CHARS = 5000;
/** Threads one item may hold (a reviewer's pins on one picture stay readable well below it). */
export const COMMENT_THREADS_PER_ITEM = 500;
/** Replies one thread may hold. */
export const COMMENT_REPLIES_PER_THREAD = 200;
/** The longest clip or video a time pin may point into (a clip is at most seconds, an assembled video minutes). */
export const COMMENT_PIN_MAX_SECONDS = 3600;

/** A point (x, y), or a rectangle (x, y, w, h) from its top left corner, in fractions of the picture; and/or a time. */
export interface CommentPin {
  x?: number;
  y?: number;
  w?: number;
  h?: number;
  /** seconds into a clip or video */
  t?: number;
}

export const COMMENT_MSG = {
  bodyRequired: 'Comment text is required',
  bodyTooLong: `A comment can be at most ${COMMENT_MAX_CHARS.toLocaleString('en')} characters`,
  itemNotFound: 'Item not found',
  threadNotFound: 'Comment not found',
  notYours: 'You can only change your own comments',
  deleteNotAllowed: 'Only its author or an admin of the workspace can delete this comment',
  resolveNotAllowed: 'Only the comment\'s author or a member of the workspace can resolve this thread',
  pinInvalid: 'A pin is a point (x, y) or a rectangle (x, y, w, h) inside the picture, in fractions from 0 to 1, and/or a time in seconds',
  timePinOnPicture: 'Only clips and videos have a time to pin a comment to',
  tooManyThreads: `An item can hold at most ${COMMENT_THREADS_PER_ITEM} comment threads`,
  tooManyReplies: `A thread can hold at most ${COMMENT_REPLIES_PER_THREAD} replies`,
} as const;

export const COMMENT_ERROR_CODES = {
  itemNotFound: 'COMMENT_ITEM_NOT_FOUND',
  threadNotFound: 'COMMENT_NOT_FOUND',
  notYours: 'COMMENT_NOT_YOURS',
  resolveNotAllowed: 'COMMENT_RESOLVE_NOT_ALLOWED',
  pinInvalid: 'COMMENT_PIN_INVALID',
  limit: 'COMMENT_LIMIT_REACHED',
} as const;

const unit = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;

/**
 * What is wrong with a pin (a COMMENT_MSG text), or null. `timed` says whether the item has a time (clip, video).
 * A point needs both x and y; a rectangle adds w and h, greater than 0, and stays inside the picture.
 */
export function commentPinProblem(pin: CommentPin, timed: boolean): string | null {
  const keys = Object.keys(pin);
  if (keys.length === 0 || keys.some((k) => !['x', 'y', 'w', 'h', 't'].includes(k))) return COMMENT_MSG.pinInvalid;
  const hasPoint = pin.x !== undefined || pin.y !== undefined;
  const hasSize = pin.w !== undefined || pin.h !== undefined;
  if (hasPoint && !(unit(pin.x) && unit(pin.y))) return COMMENT_MSG.pinInvalid;
  if (hasSize) {
    if (!hasPoint || !unit(pin.w) || !unit(pin.h) || pin.w === 0 || pin.h === 0) return COMMENT_MSG.pinInvalid;
    // a rounding error of the browser's division must not refuse a rectangle drawn to the picture's edge
    if ((pin.x as number) + pin.w > 1 + 1e-9 || (pin.y as number) + pin.h > 1 + 1e-9) return COMMENT_MSG.pinInvalid;
  }
  if (pin.t !== undefined) {
    if (!timed) return COMMENT_MSG.timePinOnPicture;
    if (typeof pin.t !== 'number' || !Number.isFinite(pin.t) || pin.t < 0 || pin.t > COMMENT_PIN_MAX_SECONDS) return COMMENT_MSG.pinInvalid;
  }
  return null;
}

/** A pin as stored: only its own keys, numbers rounded to what a screen can show (1/10,000 of the picture, a millisecond). */
export function normalisedPin(pin: CommentPin): CommentPin {
  const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;
  const out: CommentPin = {};
  if (pin.x !== undefined && pin.y !== undefined) {
    out.x = round(pin.x, 4);
    out.y = round(pin.y, 4);
    if (pin.w !== undefined && pin.h !== undefined) {
      out.w = Math.min(round(pin.w, 4), round(1 - out.x, 4));
      out.h = Math.min(round(pin.h, 4), round(1 - out.y, 4));
    }
  }
  if (pin.t !== undefined) out.t = round(pin.t, 3);
  return out;
}

/** Whether a kind of item has a time (a pin may carry `t`). */
export function isTimedItem(kind: CommentItemKind, contentType?: string | null): boolean {
  if (kind === 'clip' || kind === 'compiled_video') return true;
  if (kind === 'approval') return contentType === 'clip' || contentType === 'assembly';
  if (kind === 'generated') return contentType === 'clip' || contentType === 'video';
  return false;
}

/** One piece of a comment's text as it is shown: plain text, a link, or a mention of a member. */
export type CommentTextPart = { kind: 'text'; text: string } | { kind: 'link'; text: string; href: string } | { kind: 'mention'; text: string; userId: string };

const LINK = /\bhttps?:\/\/[^\s<>"'`]+/gi;
/** Punctuation that ends a sentence rather than the link: "see https://example.com/a." */
const TRAILING = /[.,;:!?)\]}]+$/;

/**
 * Splits a comment's text into text, links (http and https only: never javascript: or data:) and mentions
 * ("@Olivia Owner" for a member named in `mentions`). The text is never read as HTML: the front end renders each
 * part as text or as one link element.
 */
export function commentTextParts(text: string, mentions: ReadonlyArray<{ userId: string; name: string }> = []): CommentTextPart[] {
  type Hit = { start: number; end: number; part: CommentTextPart };
  const hits: Hit[] = [];
  for (const m of text.matchAll(LINK)) {
    const raw = m[0].replace(TRAILING, '');
    let href: string | null = null;
    try {
      const url = new URL(raw);
      if (url.protocol === 'http:' || url.protocol === 'https:') href = url.href;
    } catch {
      href = null;
    }
    if (href) hits.push({ start: m.index, end: m.index + raw.length, part: { kind: 'link', text: raw, href } });
  }
  // longer names first, so "@Ann Lee" wins over "@Ann" when both are members
  for (const person of [...mentions].sort((a, b) => b.name.length - a.name.length)) {
    if (!person.name) continue;
    const needle = `@${person.name}`;
    let from = 0;
    for (;;) {
      const at = text.indexOf(needle, from);
      if (at < 0) break;
      const end = at + needle.length;
      from = end;
      if (hits.some((h) => at < h.end && end > h.start)) continue;
      hits.push({ start: at, end, part: { kind: 'mention', text: needle, userId: person.userId } });
    }
  }
  hits.sort((a, b) => a.start - b.start);
  const parts: CommentTextPart[] = [];
  let at = 0;
  for (const h of hits) {
    if (h.start > at) parts.push({ kind: 'text', text: text.slice(at, h.start) });
    parts.push(h.part);
    at = h.end;
  }
  if (at < text.length) parts.push({ kind: 'text', text: text.slice(at) });
  return parts;
}

/** The members a text mentions: those of `candidates` whose "@Name" it contains. */
export function mentionedMembers<T extends { userId: string; name: string }>(text: string, candidates: readonly T[]): T[] {
  return candidates.filter((c) => c.name && text.includes(`@${c.name}`));
}

/** One comment as the API answers it. */
export interface CommentView {
  id: string;
  threadId: string;
  author: { userId: string | null; name: string } | null;
  body: string;
  /** members the text mentions ("@Name" in the text) */
  mentions: Array<{ userId: string; name: string }>;
  createdAt: string;
  /** set once the author changed the text */
  editedAt: string | null;
}

/** A thread: its pin, its state, and its comments, the opening one first. */
export interface CommentThreadView {
  id: string;
  itemKind: CommentItemKind;
  itemId: string;
  pin: CommentPin | null;
  resolved: boolean;
  resolvedAt: string | null;
  resolvedBy: { userId: string | null; name: string } | null;
  createdAt: string;
  /** the version of the item the thread was started on, when it was carried over to a later one ("request changes") */
  onVersion: number | null;
  /** its opening comment is a request for changes */
  changeRequest: boolean;
  comments: CommentView[];
}

export interface CommentThreadList {
  item: { kind: CommentItemKind; id: string };
  threads: CommentThreadView[];
}
