import { useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import { approvalStatsStateAtom } from '../../atoms/approvals';
import { Icon } from '../../components/Icon';

/**
 * Content Approvals. The queue itself (cards, preview, Save and Reject) comes with the approvals work;
 * this view shows the pending counter from the stats and the empty state.
 */
export function ApprovalsView(): ReactElement {
  const stats = useAtomValue(approvalStatsStateAtom);
  const pending = stats?.ok && stats.data ? stats.data.pending_count : 0;

  return (
    <section className="view" aria-labelledby="approvals-title">
      <header className="view-header">
        <h1 id="approvals-title">Content Approvals</h1>
        <p className="counter" aria-live="polite">
          <strong>{pending}</strong> pending
        </p>
      </header>
      {pending === 0 && (
        <div className="empty-state">
          <span className="empty-icon">
            <Icon name="check" size={28} />
          </span>
          <h2>No pending approvals</h2>
          <p>All your generated content has been reviewed.</p>
        </div>
      )}
    </section>
  );
}
