import { api } from './client';

export interface ApprovalStats {
  pending_count: number;
  limit: number;
  total_pending_cost: number;
}

export async function fetchApprovalStats(): Promise<ApprovalStats> {
  // a missing endpoint (404) is an ordinary "no stats" answer: do not retry it
  const body = await api.get('approvals/stats', { retry: 0 }).json<{ success: true; data: ApprovalStats }>();
  return body.data;
}
