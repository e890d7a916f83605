import type { ReviewLinkView, ShareableItemView } from '../../../domain/reviewLinks';
import { api } from './client';

export type { ReviewLinkView, ShareableItemView };

/** GET /api/shareable-items: what a link may hold (the queue, and the newest approved items). */
export async function fetchShareableItems(signal?: AbortSignal): Promise<ShareableItemView[]> {
  return (await api.get('shareable-items', { signal }).json<{ items: ShareableItemView[] }>()).items;
}

export interface NewReviewLinkInput {
  title: string;
  message?: string;
  itemIds?: string[];
  projectId?: string;
  expiresInDays?: number;
  password?: string | null;
  canDecide?: boolean;
  canDownload?: boolean;
}

/** GET /api/review-links: the workspace's links, newest first. */
export async function fetchReviewLinks(signal?: AbortSignal): Promise<ReviewLinkView[]> {
  return (await api.get('review-links', { signal }).json<{ links: ReviewLinkView[] }>()).links;
}

// writes are not repeated by the client (a retried POST would make a second link)
export async function createReviewLink(input: NewReviewLinkInput): Promise<{ link: ReviewLinkView; token: string; url: string }> {
  return api.post('review-links', { json: input, retry: 0 }).json<{ link: ReviewLinkView; token: string; url: string }>();
}

export async function extendReviewLink(linkId: string, expiresInDays: number): Promise<ReviewLinkView> {
  return (await api.post(`review-links/${encodeURIComponent(linkId)}/extend`, { json: { expiresInDays }, retry: 0 }).json<{ link: ReviewLinkView }>()).link;
}

export async function revokeReviewLink(linkId: string): Promise<ReviewLinkView> {
  return (await api.post(`review-links/${encodeURIComponent(linkId)}/revoke`, { retry: 0 }).json<{ link: ReviewLinkView }>()).link;
}

export async function emailReviewLink(linkId: string, token: string, to: string[]): Promise<boolean> {
  return (await api.post(`review-links/${encodeURIComponent(linkId)}/email`, { json: { token, to }, retry: 0 }).json<{ sent: boolean }>()).sent;
}

/**
 * The tokens of links made in this browser tab: the server keeps only their hashes, so a link can be copied or
 * e-mailed again only where it was made (until the tab closes).
 */
const TOKENS_KEY = 'rs.reviewLinkTokens';

export function rememberLinkToken(linkId: string, token: string, url: string): void {
  const all = knownLinkTokens();
  all[linkId] = { token, url };
  try {
    sessionStorage.setItem(TOKENS_KEY, JSON.stringify(all));
  } catch {
    // storage full or off: the link is still shown in the dialog
  }
}

export function knownLinkTokens(): Record<string, { token: string; url: string }> {
  try {
    return JSON.parse(sessionStorage.getItem(TOKENS_KEY) ?? '{}') as Record<string, { token: string; url: string }>;
  } catch {
    return {};
  }
}
