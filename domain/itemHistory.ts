/**
 * An item's history (issue 42, acceptance 5): what happened to it, by whom and when, oldest first. Pure types and
 * texts, shared by the API and the front end.
 */

export const ITEM_HISTORY_KINDS = ['generated', 'added', 'approved', 'saved', 'rejected', 'changes_requested', 'expired', 'comment', 'reply', 'resolved'] as const;
export type ItemHistoryKind = (typeof ITEM_HISTORY_KINDS)[number];

export interface ItemHistoryEntry {
  kind: ItemHistoryKind;
  at: string;
  /** who did it; null for what the system did (saving, expiry) or a time with no person recorded */
  by: { user_id: string; name: string } | null;
  /** a comment's or reply's text, shortened; a request's text */
  text?: string;
  /** which version of the item it happened to, once the item has more than one ("request changes") */
  version?: number;
}

/** "Mia Member approved it", "Saved to the project" ... */
export function historyText(entry: Pick<ItemHistoryEntry, 'kind' | 'by'>): string {
  const who = entry.by?.name ?? 'Someone';
  switch (entry.kind) {
    case 'generated':
      return entry.by ? `${who} generated it` : 'Generated';
    case 'added':
      return 'Added to the project';
    case 'approved':
      return `${who} approved it`;
    case 'saved':
      return 'Saved to the project and charged';
    case 'rejected':
      return `${who} rejected it`;
    case 'changes_requested':
      return `${who} requested changes`;
    case 'expired':
      return 'Expired unreviewed: its credits were released';
    case 'comment':
      return `${who} commented`;
    case 'reply':
      return `${who} replied`;
    case 'resolved':
      return `${who} resolved a thread`;
  }
}
