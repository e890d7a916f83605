import type { ReactElement } from 'react';
import { Icon } from './Icon';
import './PendingCapOverlay.css';

/**
 * Covers a generation screen when the pending-approval cap is reached (000 section 2): nothing new can start
 * until items are saved or rejected. Shared by the image and clip generation screens and Video Assembly.
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
  return (
    <div className="pending-cap-overlay" role="alertdialog" aria-modal="false" aria-labelledby="pending-cap-title" aria-describedby="pending-cap-text">
      <div className="pending-cap-panel panel">
        <span className="empty-icon">
          <Icon name="check" size={28} />
        </span>
        <h2 id="pending-cap-title">Pending approvals limit reached</h2>
        <p id="pending-cap-text">
          You already have {pendingCount} pending approvals. The maximum is {limit}. Save or reject items in Approvals to generate more.
        </p>
        <div className="pending-cap-actions">
          <button type="button" className="button button-secondary" onClick={onBack}>
            {backLabel}
          </button>
          <button type="button" className="button button-primary" onClick={onOpenApprovals}>
            Open Approvals
          </button>
        </div>
      </div>
    </div>
  );
}
