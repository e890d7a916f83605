/** Pure rules of the Approvals cards (001 section 2): type badge, deadline badge, Save's cost label. */
import type { ApprovalListItem } from '../../api/approvals';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** 'Expired'; hours remaining under 24 hours; otherwise days remaining. */
export function deadlineBadge(deadline: string, now: number): string {
  const left = Date.parse(deadline) - now;
  if (!Number.isFinite(left) || left <= 0) return 'Expired';
  if (left < DAY_MS) {
    const hours = Math.max(1, Math.floor(left / HOUR_MS));
    return `${hours} ${hours === 1 ? 'hour' : 'hours'} left`;
  }
  // a new item reads '7 days left', not '6' a second after it was made
  const days = Math.max(1, Math.round(left / DAY_MS));
  return `${days} ${days === 1 ? 'day' : 'days'} left`;
}

/** A clip shows its aspect label; an image 'AI Generated Image'; an assembly 'Assembled Video'; anything else 'Preview'. */
export function approvalTypeBadge(item: Pick<ApprovalListItem, 'content_type' | 'aspect_ratio'>): string {
  switch (item.content_type) {
    case 'clip':
      return item.aspect_ratio ? `Clip ${item.aspect_ratio}` : 'Clip';
    case 'image':
      return 'AI Generated Image';
    case 'assembly':
      return 'Assembled Video';
    default:
      return 'Preview';
  }
}

/** Save's cost label: the credits still to be charged, or 'Free'. */
export function saveCostLabel(remainingCost: number): string {
  if (remainingCost <= 0) return 'Free';
  return `${remainingCost} ${remainingCost === 1 ? 'credit' : 'credits'}`;
}

export function isVideoItem(item: Pick<ApprovalListItem, 'content_type'>): boolean {
  return item.content_type === 'clip' || item.content_type === 'assembly';
}
