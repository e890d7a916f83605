import { useAtomValue, useSetAtom } from 'jotai';
import type { ReactElement } from 'react';
import { creditSummaryStateAtom } from '../../atoms/credits';
import { navigateAtom } from '../../atoms/view';
import { workspaceAllowsAtom } from '../../atoms/workspace';
import { Icon } from '../../components/Icon';

/** The sidebar's credit box: available credits, reserved ones when any, and a way to buy more. */
export function SidebarCredits(): ReactElement {
  const summary = useAtomValue(creditSummaryStateAtom);
  const navigate = useSetAtom(navigateAtom);
  // the workspace's admins buy its credits (the Billing tab tells the others whom to ask)
  const canBuy = useAtomValue(workspaceAllowsAtom)('billing');

  let body: ReactElement;
  if (summary === undefined) {
    body = <p className="credits-muted">Loading credits...</p>;
  } else if (!summary.ok || !summary.data) {
    body = <p className="credits-error">Unable to load credits</p>;
  } else {
    const { availableCredits, reservedCredits } = summary.data;
    body = (
      <>
        <p className="credits-amount">
          <strong>{availableCredits}</strong> {availableCredits === 1 ? 'credit' : 'credits'}
        </p>
        {reservedCredits > 0 && <p className="credits-muted">{reservedCredits} reserved for pending approvals</p>}
      </>
    );
  }

  return (
    <section className="sidebar-credits" aria-labelledby="sidebar-credits-title">
      <div className="sidebar-credits-head">
        <h2 id="sidebar-credits-title">
          <Icon name="coins" size={16} /> Credits
        </h2>
        {canBuy && (
          <button type="button" className="link-button" onClick={() => navigate({ view: 'account', accountTab: 'billing' })}>
            Buy credits
          </button>
        )}
      </div>
      {body}
    </section>
  );
}
