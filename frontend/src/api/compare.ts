import type { CompareVersions } from '../../../domain/compare';
import { api } from './client';

export type { CompareMedia, CompareVersion, CompareVersions } from '../../../domain/compare';

/** GET /api/content/{id}/compare: the item and the versions before it (its source render first of all). */
export async function fetchCompareVersions(itemId: string, signal?: AbortSignal): Promise<CompareVersions> {
  return api.get(`content/${encodeURIComponent(itemId)}/compare`, { signal }).json<CompareVersions>();
}
