import type { ApprovalDecisionResponse, ApprovalListItem, ApprovalStats } from '../../../domain/approvals';
import type { ChangeRequestResponse } from '../../../domain/changeRequests';
import { api, currentWorkspaceId } from './client';

// the server's answers (a refusal's error shape comes through ky's HTTPError)
export type { ApprovalDecisionResponse, ApprovalListItem, ApprovalStats, ChangeRequestResponse };

/** Stats are reused for 5 s and the list for 3 s (001 section 9), unless a caller forces a fresh read. */
export const STATS_CACHE_MS = 5000;
export const LIST_CACHE_MS = 3000;

// each answer is the workspace's it was read in: another workspace's never answers from it
let statsCache: { at: number; workspace: string | null; data: ApprovalStats } | null = null;
let listCache: { at: number; workspace: string | null; data: ApprovalListItem[] } | null = null;

export async function fetchApprovalStats(options: { fresh?: boolean } = {}): Promise<ApprovalStats> {
  if (!options.fresh && statsCache && statsCache.workspace === currentWorkspaceId() && Date.now() - statsCache.at < STATS_CACHE_MS) return statsCache.data;
  // a missing endpoint (404) is an ordinary "no stats" answer: do not retry it
  const body = await api.get('approvals/stats', { retry: 0 }).json<{ success: true; data: ApprovalStats }>();
  statsCache = { at: Date.now(), workspace: currentWorkspaceId(), data: body.data };
  return body.data;
}

export async function fetchApprovals(options: { fresh?: boolean } = {}): Promise<ApprovalListItem[]> {
  if (!options.fresh && listCache && listCache.workspace === currentWorkspaceId() && Date.now() - listCache.at < LIST_CACHE_MS) return listCache.data;
  const body = await api.get('approvals/list').json<{ success: true; data: ApprovalListItem[] }>();
  listCache = { at: Date.now(), workspace: currentWorkspaceId(), data: body.data };
  return body.data;
}

/** After a decision or a new item, nothing cached may answer for the queue. */
export function forgetApprovals(): void {
  statsCache = null;
  listCache = null;
}

export async function approveItem(approvalId: string): Promise<ApprovalDecisionResponse> {
  try {
    // a decision is not repeated by the client: the server's answer (or refusal) is final
    return await api.post('approvals/approve', { json: { approvalId }, retry: 0, timeout: 60_000 }).json<ApprovalDecisionResponse>();
  } finally {
    forgetApprovals();
  }
}

export interface ChangeRequestBody {
  request: string;
  /** a clip's effect and platform for its next version */
  settings?: { effect: string; platform: string } | null;
}

/** Rejects the item with a request for changes and starts its next version (POST /api/approvals/request-changes). */
export async function requestChanges(approvalId: string, body: ChangeRequestBody): Promise<ChangeRequestResponse> {
  try {
    return await api.post('approvals/request-changes', { json: { approvalId, ...body }, retry: 0, timeout: 60_000 }).json<ChangeRequestResponse>();
  } finally {
    forgetApprovals();
  }
}

export async function rejectItem(approvalId: string): Promise<ApprovalDecisionResponse> {
  try {
    return await api.post('approvals/reject', { json: { approvalId }, retry: 0, timeout: 60_000 }).json<ApprovalDecisionResponse>();
  } finally {
    forgetApprovals();
  }
}

/**
 * Fired on window when the user's pending approvals changed outside the Approvals view (a generation finished,
 * an item was saved elsewhere): the count refreshes, debounced (001 section 4).
 */
export const APPROVALS_CHANGED_EVENT = 'approvals-changed';

export function announceApprovalsChanged(): void {
  forgetApprovals();
  window.dispatchEvent(new CustomEvent(APPROVALS_CHANGED_EVENT));
}
