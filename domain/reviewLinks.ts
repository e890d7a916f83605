/**
 * Client review by link (issue 43, DESIGN.md "Client review (guest links)"): a member shares a set of items of one
 * workspace with someone who has no account. The guest sees watermarked previews, comments and, where the link allows,
 * approves or requests changes; pay on approval holds for guests exactly as for members.
 *
 * Pure rules, limits and texts, shared by the API, the services and the front end.
 */

/** Days a link lives unless the member says otherwise, and the most it may. */
export const REVIEW_LINK_DEFAULT_DAYS = 14;
export const REVIEW_LINK_MAX_DAYS = 90;
export const REVIEW_LINK_TITLE_MAX = 120;
export const REVIEW_LINK_MESSAGE_MAX = 2000;
/** Items one link may hold (a whole project's queue is capped by the pending limit well below it). */
export const REVIEW_LINK_MAX_ITEMS = 100;
/** Addresses one "e-mail the link" may send to. */
export const REVIEW_LINK_MAX_RECIPIENTS = 20;
export const REVIEW_LINK_PASSWORD_MIN = 6;
export const REVIEW_LINK_PASSWORD_MAX = 200;
export const GUEST_NAME_MAX = 80;
/** Visits a link lists, newest first. */
export const REVIEW_LINK_VISITS_LISTED = 20;
/** Wrong passwords from one address before the link locks for that address, and for how long. */
export const REVIEW_LINK_PASSWORD_ATTEMPTS = 10;
export const REVIEW_LINK_LOCK_SECONDS = 60 * 60;
/**
 * Look-ups (opening a link, right or wrong) per address per minute, and guest requests per link per minute (all its
 * guests together: a page of 100 items reads 101 times when it opens, so a few guests at once stay well inside).
 */
export const REVIEW_LINK_LOOKUPS_PER_MINUTE = 30;
export const REVIEW_LINK_ACTIONS_PER_MINUTE = 600;
/** How long a guest session lasts (never past the link's expiry). */
export const GUEST_SESSION_HOURS = 12;

/** What the guest may do besides looking: comment always; approve and request changes when `decide`. */
export const REVIEW_LINK_PERMISSIONS = ['comment', 'decide'] as const;
export type ReviewLinkPermission = (typeof REVIEW_LINK_PERMISSIONS)[number];

export type ReviewLinkState = 'active' | 'expired' | 'revoked';

/** A link's state at `now`. */
export function reviewLinkState(link: { expiresAt: string | Date; revokedAt: string | Date | null }, now: number = Date.now()): ReviewLinkState {
  if (link.revokedAt) return 'revoked';
  return new Date(link.expiresAt).getTime() <= now ? 'expired' : 'active';
}

/** Days from now to an expiry the member chose: whole days from 1 to REVIEW_LINK_MAX_DAYS. */
export function expiryDaysProblem(days: unknown): string | null {
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > REVIEW_LINK_MAX_DAYS) return REVIEW_LINK_MSG.expiryInvalid;
  return null;
}

/** The path a link opens (the token is the only secret; the page is /r/<token>). */
export function reviewLinkPath(token: string): string {
  return `/r/${token}`;
}

/** A token as links carry it: 32 random bytes, base64url (43 characters). */
export const REVIEW_LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** How a guest's decision reads in the item's history and in the members' notifications. */
export function guestLabel(guest: { name: string; email: string }, linkTitle: string): string {
  return `Guest: ${guest.name} (${guest.email}) via link ${linkTitle}`;
}

/** The e-mail address a guest gives: one plain address, lower-cased. */
export function guestEmailProblem(email: unknown): string | null {
  if (typeof email !== 'string') return REVIEW_LINK_MSG.guestEmailInvalid;
  const value = email.trim();
  if (value.length < 3 || value.length > 254 || !/^[^\s@<>()",;]+@[^\s@<>()",;]+\.[^\s@<>()",;]+$/.test(value)) return REVIEW_LINK_MSG.guestEmailInvalid;
  return null;
}

export const REVIEW_LINK_CODES = {
  notFound: 'REVIEW_LINK_NOT_FOUND',
  gone: 'REVIEW_LINK_GONE',
  passwordRequired: 'REVIEW_LINK_PASSWORD_REQUIRED',
  passwordWrong: 'REVIEW_LINK_PASSWORD_WRONG',
  locked: 'REVIEW_LINK_LOCKED',
  rateLimited: 'RATE_LIMITED',
  sessionMissing: 'REVIEW_SESSION_MISSING',
  itemNotOnLink: 'REVIEW_ITEM_NOT_ON_LINK',
  notAllowed: 'REVIEW_ACTION_NOT_ALLOWED',
  downloadNotAllowed: 'REVIEW_DOWNLOAD_NOT_ALLOWED',
  itemsInvalid: 'REVIEW_LINK_ITEMS_INVALID',
  guestRequired: 'REVIEW_GUEST_REQUIRED',
  expiryInvalid: 'REVIEW_LINK_EXPIRY_INVALID',
} as const;

export const REVIEW_LINK_MSG = {
  notFound: 'This review link does not exist. Check that you copied the whole link.',
  revoked: 'This review link was turned off by the studio. Ask them for a new one.',
  expired: 'This review link has expired. Ask the studio for a new one.',
  passwordRequired: 'This review link is protected. Enter the password the studio gave you.',
  passwordWrong: 'That password is not right. Check it and try again.',
  locked: (wait: string) => `Too many wrong passwords. This link is locked on this connection; try again in ${wait}.`,
  rateLimited: (wait: string) => `Too many requests. Please try again in ${wait}.`,
  sessionMissing: 'Open the review link again to continue.',
  itemNotOnLink: 'This item is not part of this review.',
  decideNotAllowed: 'This review link lets you comment only. The studio decides on approval.',
  downloadNotAllowed: 'Downloads are not part of this review.',
  notApprovedYet: 'This item can be downloaded once it is approved.',
  titleRequired: 'Give the link a title',
  titleTooLong: `A title can be at most ${REVIEW_LINK_TITLE_MAX} characters`,
  messageTooLong: `The message can be at most ${REVIEW_LINK_MESSAGE_MAX} characters`,
  expiryInvalid: `A link lasts from 1 to ${REVIEW_LINK_MAX_DAYS} days`,
  passwordTooShort: `A password needs at least ${REVIEW_LINK_PASSWORD_MIN} characters`,
  passwordTooLong: `A password can be at most ${REVIEW_LINK_PASSWORD_MAX} characters`,
  itemsRequired: 'Choose at least one item, or a project whose queue to share',
  itemsTooMany: `A link can hold at most ${REVIEW_LINK_MAX_ITEMS} items`,
  itemsInvalid: 'Some of the chosen items are not images, clips or videos of this workspace that wait for approval or are approved',
  projectQueueEmpty: 'This project has nothing waiting for approval to share',
  recipientsInvalid: `Enter 1 to ${REVIEW_LINK_MAX_RECIPIENTS} e-mail addresses`,
  mailUnavailable: 'E-mail is not set up on this server: copy the link and send it yourself.',
  guestNameRequired: 'Tell the studio your name',
  guestNameTooLong: `A name can be at most ${GUEST_NAME_MAX} characters`,
  guestEmailInvalid: 'Enter your e-mail address, like name@example.com',
  guestRequired: 'Tell the studio your name and e-mail address first',
  alreadyRevoked: 'This link is already turned off',
  studioAsked: 'Thank you. The studio has been asked and will take it from here.',
} as const;

/** What a guest's decision came to: counted under the studio's policy, or handed to the studio (its rules refused). */
export type GuestDecisionOutcome = 'approved' | 'approval_counted' | 'changes_requested' | 'studio_asked';

export const GUEST_DECISION_TEXT: Record<GuestDecisionOutcome, string> = {
  approved: 'Approved. Thank you!',
  approval_counted: 'Your approval is counted. The studio still needs its other approvals.',
  changes_requested: 'Changes requested. The studio is making the next version.',
  studio_asked: REVIEW_LINK_MSG.studioAsked,
};

/** One item as the guest page shows it: never a link to an original before approval. */
export interface GuestItemView {
  /** the item's approval id (its id on this link) */
  id: string;
  kind: 'image' | 'clip' | 'video';
  name: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  version: number;
  aspectRatio: string | null;
  /** the watermarked preview while pending (or the thumbnail once approved); null when none is left */
  previewUrl: string | null;
  /** only once approved, and only when the link allows downloads */
  downloadUrl: string | null;
  /** the guest may approve or request changes on it now */
  canDecide: boolean;
}

export interface GuestReviewView {
  link: { id: string; title: string; message: string; expiresAt: string; canDecide: boolean; canDownload: boolean };
  studio: { name: string };
  items: GuestItemView[];
}

/** An item a member may put on a link: waiting for approval, or approved (its id is its approval id either way). */
export interface ShareableItemView {
  id: string;
  name: string;
  kind: 'image' | 'clip' | 'assembly';
  status: 'pending' | 'approved';
  projectId: string;
  projectName: string | null;
  createdAt: string;
}

/** The newest approved items the dialog offers besides the queue. */
export const SHAREABLE_APPROVED_LISTED = 100;

/** A link as the Review links page lists it. */
export interface ReviewLinkView {
  id: string;
  title: string;
  message: string;
  state: ReviewLinkState;
  expiresAt: string;
  revokedAt: string | null;
  createdAt: string;
  createdBy: { userId: string | null; name: string };
  hasPassword: boolean;
  canDecide: boolean;
  canDownload: boolean;
  projectId: string | null;
  items: Array<{ id: string; name: string; kind: string; status: string }>;
  visits: Array<{ at: string; guestName: string | null; guestEmail: string | null }>;
  visitCount: number;
}
