/**
 * "Request changes" (issue 42, acceptance 2; DESIGN.md "Review"): the specs' rejection of a pending item plus a new
 * job from the same source with the request folded in, whose item is the next version of the rejected one. Pure
 * rules and texts, shared by the API, the service and the front end.
 */
import { COMMENT_MAX_CHARS } from './comments';
import { REJECTION_STREAK_COOLDOWN_AT, type Platform, type VideoEffect } from './constants';
import { IMAGE_PROMPT_MAX_LENGTH } from './imageEdit';

/** The kinds of pending item a change can be requested on: an assembled video is re-edited, not regenerated. */
export const CHANGE_REQUEST_CONTENT_TYPES = ['image', 'clip'] as const;
export type ChangeRequestContentType = (typeof CHANGE_REQUEST_CONTENT_TYPES)[number];

export const CHANGE_REQUEST_CODES = {
  notRequestable: 'CHANGES_NOT_REQUESTABLE',
  sourceGone: 'CHANGES_SOURCE_GONE',
  promptTooLong: 'CHANGES_PROMPT_TOO_LONG',
  wouldPause: 'CHANGES_WOULD_PAUSE_GENERATION',
  settingsInvalid: 'CHANGES_SETTINGS_INVALID',
} as const;

export const CHANGE_REQUEST_MSG = {
  requestRequired: 'Say what should change',
  requestTooLong: `A request can be at most ${COMMENT_MAX_CHARS.toLocaleString('en')} characters`,
  notRequestable: 'Changes can be requested on AI images and clips. Reject an assembled video and edit it again instead.',
  sourceGone: 'The render or image this item was made from was deleted, so no new version can be made from it. Reject the item instead.',
  promptTooLong: (room: number) => `The original prompt and your request together are too long for an image edit: shorten the request to ${room} characters or fewer.`,
  wouldPause: `This would be your ${REJECTION_STREAK_COOLDOWN_AT}th rejection in a row, which pauses generation, so the new version could not start. Save an item first, or reject this one without requesting changes.`,
  settingsInvalid: 'Choose an effect and a platform from the lists',
} as const;

/** How the request joins the original prompt of an image edit: the new job's prompt. */
export const REQUESTED_CHANGE_LABEL = 'Requested change:';

/** The new image edit's prompt: the original prompt plus the requested change. */
export function promptWithRequest(originalPrompt: string, request: string): string {
  const original = originalPrompt.trim();
  const change = request.trim();
  return original ? `${original}\n${REQUESTED_CHANGE_LABEL} ${change}` : change;
}

/** How many characters a request may have so that the folded prompt still fits an image edit. */
export function requestRoom(originalPrompt: string): number {
  return Math.max(0, IMAGE_PROMPT_MAX_LENGTH - promptWithRequest(originalPrompt, '').length);
}

/** The new clip's guidance for the provider: the earlier guidance, if any, then the request. */
export function clipGuidance(previous: string | null, request: string): string {
  const change = request.trim();
  return previous && previous.trim() ? `${previous.trim()}\n${REQUESTED_CHANGE_LABEL} ${change}` : change;
}

/** A clip's settings the reviewer may change before its next version starts. */
export interface ClipChangeSettings {
  effect: VideoEffect;
  platform: Platform;
}

/** POST /api/approvals/request-changes' answer. */
export interface ChangeRequestResponse {
  success: true;
  /** the rejection's streak warning (REJECTION_STREAK_WARNING), as a plain rejection answers it */
  warning: string | null;
  code: string | null;
  request: { id: string; thread_id: string | null };
  /** the job making the next version, or null when it could not start (the rejection stands; see next_error) */
  next: { kind: ChangeRequestContentType; job_id: string; version: number } | null;
  next_error: { code: string; error: string } | null;
}

/**
 * The next version's file name with " (v<version>)": an image keeps the earlier version's name (its made name comes
 * from the prompt, which now holds the request: "terrace.png" -> "terrace (v2).png" -> "terrace (v3).png"); a clip
 * keeps the name its job made, which says its effect and aspect (changeable with the request).
 */
export function versionFileName(previousName: string, version: number, madeName: string, contentType: string): string {
  const ext = /\.[A-Za-z0-9]{1,5}$/.exec(madeName)?.[0] ?? /\.[A-Za-z0-9]{1,5}$/.exec(previousName)?.[0] ?? '';
  const base = contentType === 'image' ? previousName : madeName;
  const stem = base.replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/ \(v\d+\)$/, '').replace(/ \(\d+\)$/, '');
  return `${stem} (v${version})${ext}`;
}

/** "v2" */
export function versionLabel(version: number): string {
  return `v${version}`;
}
