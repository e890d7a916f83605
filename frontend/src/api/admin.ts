import type { AdminAdjustInput, AdminAdjustResult, AdminUserDetail, AdminUserListItem, AdminUserSearch, AdminWorkspaceMatch } from '../../../domain/admin';
import { api } from './client';

export type {
  AdminAdjustInput,
  AdminAdjustResult,
  AdminPurchase,
  AdminTransaction,
  AdminUserDetail,
  AdminUserListItem,
  AdminUserSearch,
  AdminUserWorkspace,
  AdminWorkspaceMatch,
} from '../../../domain/admin';

/** Users whose e-mail equals or starts with `email` (case-insensitive). */
export async function searchUsers(email: string): Promise<AdminUserSearch> {
  const body = await api
    .get('admin/users', { searchParams: { email } })
    .json<{ success: true; data: AdminUserListItem[]; hasMore: boolean }>();
  return { users: body.data, hasMore: body.hasMore };
}

/** Workspaces with exactly this name (case aside), with their owners. */
export async function searchWorkspaces(name: string): Promise<{ workspaces: AdminWorkspaceMatch[]; hasMore: boolean }> {
  const body = await api.get('admin/workspaces', { searchParams: { name } }).json<{ success: true; data: AdminWorkspaceMatch[]; hasMore: boolean }>();
  return { workspaces: body.data, hasMore: body.hasMore };
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
