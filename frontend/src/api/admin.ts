import type { AdminAdjustInput, AdminAdjustResult, AdminUserDetail, AdminUserListItem, AdminUserSearch } from '../../../domain/admin';
import { api } from './client';

export type { AdminAdjustInput, AdminAdjustResult, AdminPurchase, AdminTransaction, AdminUserDetail, AdminUserListItem, AdminUserSearch } from '../../../domain/admin';

/** Users whose e-mail equals or starts with `email` (case-insensitive). */
export async function searchUsers(email: string): Promise<AdminUserSearch> {
  const body = await api
    .get('admin/users', { searchParams: { email } })
    .json<{ success: true; data: AdminUserListItem[]; hasMore: boolean }>();
  return { users: body.data, hasMore: body.hasMore };
}

export async function fetchUserDetail(userId: string): Promise<AdminUserDetail> {
  const body = await api.get(`admin/users/${encodeURIComponent(userId)}`).json<{ success: true; data: AdminUserDetail }>();
  return body.data;
}

/** Not retried by ky (a POST); the caller retries with the same idempotency key. */
export async function adjustCredits(input: AdminAdjustInput): Promise<AdminAdjustResult> {
  const body = await api.post('admin/credits/adjust', { json: input }).json<{ success: true; data: AdminAdjustResult }>();
  return body.data;
}
