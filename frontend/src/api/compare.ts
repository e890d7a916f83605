import { api } from './client';

export interface CompareMedia {
  kind: string;
  id: string;
  name: string;
  media: 'image' | 'video';
  url: string | null;
  created_at: string | null;
}

export interface CompareVersion extends CompareMedia {
  relation: 'source' | 'earlier';
  depth: number;
}

export interface CompareVersions {
  item: CompareMedia;
  versions: CompareVersion[];
}

/** GET /api/content/{id}/compare: the item and the versions before it (its source render first of all). */
export async function fetchCompareVersions(itemId: string, signal?: AbortSignal): Promise<CompareVersions> {
  return api.get(`content/${encodeURIComponent(itemId)}/compare`, { signal }).json<CompareVersions>();
}
