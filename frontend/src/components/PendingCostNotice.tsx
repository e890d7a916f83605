import { useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import { purchasingStateAtom } from '../atoms/billing';
import './PendingCostNotice.css';

function credits(n: number): string {
  return `${n} ${n === 1 ? 'credit' : 'credits'}`;
}

/**
 * The amber notice of 000 section 2: the balance alone would pay for another item, but pending approvals hold
 * the credits it needs. Deciding them (or adding credits) frees the way, so both actions are offered.
 * Shared by the clip and image generation screens. Where credits cannot be bought, adding credits is not offered.
 */
export function PendingCostNotice({
  item,
  cost,
  pendingCost,
  available,
  onReviewApprovals,
  onAddCredits,
}: {
  item: 'clip' | 'image';
  cost: number;
  pendingCost: number;
  available: number;
  onReviewApprovals: () => void;
  onAddCredits: () => void;
}): ReactElement {
  const purchasing = useAtomValue(purchasingStateAtom);
  const canBuy = !(purchasing?.ok === true && purchasing.data === 'unavailable');
  return (
    <div className="notice notice-amber" role="status">
      <p>
        Your pending approvals reserve {credits(pendingCost)}, so {credits(Math.max(0, available))} available {available === 1 ? 'is' : 'are'} not enough for another {item} ({credits(cost)}).
        {canBuy ? 'Review your pending items or add credits to continue.' : 'Review your pending items to continue.'}
      </p>
      <div className="notice-actions">
        <button type="button" className="button button-secondary" onClick={onReviewApprovals}>
          Review approvals
        </button>
        {canBuy && (
          <button type="button" className="button button-secondary" onClick={onAddCredits}>
            Add credits
          </button>
        )}
      </div>
    </div>
  );
}
