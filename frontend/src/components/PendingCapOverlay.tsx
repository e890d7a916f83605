import { useAtomValue, useSetAtom } from 'jotai';
import type { ReactElement } from 'react';
import { purchasingStateAtom } from '../atoms/billing';
import { creditSummaryStateAtom } from '../atoms/credits';
import { navigateAtom } from '../atoms/view';
import { countText } from './countText';
import { Icon } from './Icon';
import { pendingCapWayForward } from './purchasingText';
import './PendingCapOverlay.css';

/**
 * Covers a generation screen when the pending-approval cap is reached (000 section 2): nothing new can start
 * until items are saved or rejected. Shared by the image and clip generation screens and Video Assembly. It names
 * only the ways out this user has here: rejecting needs a past purchase, and buying exists only where purchases do.
 */
export function PendingCapOverlay({
  pendingCount,
  limit,
  onOpenApprovals,
  onBack,
  backLabel = 'Back to Project',
}: {
  pendingCount: number;
  limit: number;
  onOpenApprovals: () => void;
  onBack: () => void;
  backLabel?: string;
}): ReactElement {
  const credits = useAtomValue(creditSummaryStateAtom);
  const purchasingState = useAtomValue(purchasingStateAtom);
  const navigate = useSetAtom(navigateAtom);
  const purchasing = purchasingState?.ok ? purchasingState.data : undefined;
  // until the balance is known, the spec's way out (save or reject)
  const canReject = !(credits?.ok === true && credits.data !== null && credits.data.totalCreditsPurchased <= 0);
  const offerPurchase = !canReject && purchasing !== undefined && purchasing !== 'unavailable';
  return (
    <div className="pending-cap-overlay" role="alertdialog" aria-modal="false" aria-labelledby="pending-cap-title" aria-describedby="pending-cap-text">
      <div className="pending-cap-panel panel">
        <span className="empty-icon">
          <Icon name="check" size={28} />
        </span>
        <h2 id="pending-cap-title">Pending approvals limit reached</h2>
        <p id="pending-cap-text">
          You already have {countText(pendingCount, 'pending approval')}. The maximum is {limit}. {pendingCapWayForward(canReject, purchasing)}
        </p>
        <div className="pending-cap-actions">
          <button type="button" className="button button-secondary" onClick={onBack}>
            {backLabel}
          </button>
          {offerPurchase && (
            <button type="button" className="button button-secondary" onClick={() => navigate({ view: 'account', accountTab: 'billing' })}>
              Buy credits
            </button>
          )}
          <button type="button" className="button button-primary" onClick={onOpenApprovals}>
            Open Approvals
          </button>
        </div>
      </div>
    </div>
  );
}
