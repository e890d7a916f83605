import { api } from './client';

export type LineageKind = 'render' | 'image' | 'clip' | 'compiled_video' | 'generated' | 'draft_image';

export interface LineageNode {
  kind: LineageKind;
  id: string;
  exists: boolean;
  name: string | null;
  project_id: string | null;
  created_at: string | null;
  thumbnail_url: string | null;
  depth?: number;
  workflow_id: string | null;
  /** admins only */
  temporal_url?: string | null;
}

export interface Lineage {
  item: LineageNode;
  ancestors: LineageNode[];
  descendants: LineageNode[];
}

/** GET /api/content/{id}/lineage: what the item was made from and what was made from it. */
export async function fetchLineage(itemId: string, signal?: AbortSignal): Promise<Lineage> {
  return api.get(`content/${encodeURIComponent(itemId)}/lineage`, { signal }).json<Lineage>();
}

/** Oldest source first, then the item, then what was made from it (nearest first). */
export function chainOrder(lineage: Lineage): Array<LineageNode & { current: boolean }> {
  const up = [...lineage.ancestors].sort((a, b) => (b.depth ?? 0) - (a.depth ?? 0));
  const down = [...lineage.descendants].sort((a, b) => (a.depth ?? 0) - (b.depth ?? 0));
  return [...up.map((n) => ({ ...n, current: false })), { ...lineage.item, current: true }, ...down.map((n) => ({ ...n, current: false }))];
}

export const LINEAGE_KIND_LABEL: Record<LineageKind, string> = {
  render: 'Render',
  image: 'AI image',
  clip: 'Clip',
  compiled_video: 'Video',
  generated: 'Generated',
  draft_image: 'Draft image',
};
