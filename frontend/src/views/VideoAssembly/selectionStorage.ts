/**
 * The clip selection kept in browser storage (spec 001 section 3, "Saved clip selection": keys starting
 * rs:assembly:, fields selected, order and ts; the alternative field names selectedClips and clipOrder are read
 * too), one record per user so a shared browser never mixes two accounts' selections.
 */
import { ASSEMBLY_STORAGE_PREFIX } from '../../../../domain/assembly';

export { ASSEMBLY_STORAGE_PREFIX };
/** A selection older than this is not restored (the approval window: the clips behind it may be long gone). */
export const SAVED_SELECTION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export interface SavedSelection {
  /** the selected clip ids */
  selected: string[];
  /** the same ids in the order the video plays them */
  order: string[];
  /** when it was saved (ms since the epoch) */
  ts: number;
  /** the project chosen to save the video into */
  projectId: string | null;
}

export function selectionKey(userId: string): string {
  return `${ASSEMBLY_STORAGE_PREFIX}selection:${userId}`;
}

function ids(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const out: string[] = [];
  for (const entry of value) {
    const id = typeof entry === 'string' ? entry : entry && typeof entry === 'object' && typeof (entry as { id?: unknown }).id === 'string' ? (entry as { id: string }).id : null;
    if (id && !out.includes(id)) out.push(id);
  }
  return out;
}

/** The record to store for a selection (in play order). */
export function serializeSelection(order: readonly string[], projectId: string | null, now: number): string {
  const saved: SavedSelection = { selected: [...order], order: [...order], ts: now, projectId };
  return JSON.stringify(saved);
}

/**
 * The stored selection in play order, or null when there is none, it cannot be read, or it is too old.
 * The order lists the selected ids first as ordered, then any selected id the order missed.
 */
export function parseSavedSelection(raw: string | null, now: number): { order: string[]; projectId: string | null } | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  const selected = ids(record.selected) ?? ids(record.selectedClips);
  if (!selected) return null;
  const ts = typeof record.ts === 'number' ? record.ts : null;
  if (ts === null || now - ts > SAVED_SELECTION_MAX_AGE_MS || ts - now > SAVED_SELECTION_MAX_AGE_MS) return null;
  const order = (ids(record.order) ?? ids(record.clipOrder) ?? []).filter((id) => selected.includes(id));
  for (const id of selected) if (!order.includes(id)) order.push(id);
  const projectId = typeof record.projectId === 'string' ? record.projectId : null;
  return { order, projectId };
}
