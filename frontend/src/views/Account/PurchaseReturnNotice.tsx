import { useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { fetchPurchaseStatus } from '../../api/billing';
import { refreshBillingAtom } from '../../atoms/billing';
import { hrefWithParams } from '../../atoms/viewUrl';
import { BILLING_MSG } from '../../../../domain/billing';
import { purchaseReturnFromSearch, type PurchaseReturn } from './checkoutReturn';
import { countText } from '../../components/countText';

/** How often and how long the return page asks whether the webhook has credited the purchase. */
export const CONFIRM_POLL_MS = 1500;
export const CONFIRM_MAX_POLLS = 40;

type Confirmation =
  | { state: 'confirming' }
  | { state: 'completed'; credits: number; packageName: string; availableCredits: number }
  | { state: 'failed' }
  | { state: 'cancelled' };

function initial(ret: PurchaseReturn | null): Confirmation | null {
  if (!ret) return null;
  if (ret.outcome === 'cancelled') return { state: 'cancelled' };
  return ret.sessionId ? { state: 'confirming' } : { state: 'failed' };
}

/**
 * Back from Stripe Checkout: says the purchase is being confirmed until the webhook has credited it (read from the
 * purchase-status endpoint), then shows the new balance; or the spec's failure text; or, after a cancel, that
 * nothing was charged.
 */
export function PurchaseReturnNotice(): ReactElement | null {
  const [ret] = useState(() => purchaseReturnFromSearch(window.location.search));
  const [confirmation, setConfirmation] = useState<Confirmation | null>(() => initial(ret));
  const refreshBilling = useSetAtom(refreshBillingAtom);

  useEffect(() => {
    if (ret?.outcome !== 'success' || !ret.sessionId) return undefined;
    const sessionId = ret.sessionId;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let polls = 0;
    const check = async () => {
      polls += 1;
      try {
        const status = await fetchPurchaseStatus(sessionId);
        if (cancelled) return;
        const { purchase } = status;
        if (purchase.status === 'completed' || purchase.status === 'refunded' || purchase.status === 'partially_refunded') {
          setConfirmation({ state: 'completed', credits: purchase.credits, packageName: purchase.packageName, availableCredits: status.availableCredits });
          refreshBilling();
          return;
        }
        if (purchase.status === 'failed' || purchase.status === 'expired') {
          setConfirmation({ state: 'failed' });
          return;
        }
      } catch {
        if (cancelled) return;
        // a session that is not this user's, or a server that keeps failing: give up at once on 404
        setConfirmation({ state: 'failed' });
        return;
      }
      if (polls >= CONFIRM_MAX_POLLS) setConfirmation({ state: 'failed' });
      else timer = setTimeout(() => void check(), CONFIRM_POLL_MS);
    };
    void check();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [ret, refreshBilling]);

  if (!confirmation) return null;

  const dismiss = () => {
    window.history.replaceState(null, '', hrefWithParams(window.location.href, { purchase: null, session_id: null }));
    setConfirmation(null);
  };
  const dismissButton = (
    <button type="button" className="button button-secondary button-small" onClick={dismiss}>
      Dismiss
    </button>
  );

  switch (confirmation.state) {
    case 'confirming':
      return (
        <div className="purchase-notice purchase-notice-pending" role="status" aria-live="polite">
          <span className="spinner" aria-hidden="true" />
          <p>Payment received. We are confirming your purchase with Stripe...</p>
        </div>
      );
    case 'completed':
      return (
        <div className="purchase-notice purchase-notice-success" role="status" aria-live="polite">
          <p>
            <strong>
              Purchase complete: +{confirmation.credits} credits ({confirmation.packageName}).
            </strong>{' '}
            Your balance is now {countText(confirmation.availableCredits, 'credit')}.
          </p>
          {dismissButton}
        </div>
      );
    case 'failed':
      return (
        <div className="purchase-notice purchase-notice-error" role="alert">
          <p>{BILLING_MSG.purchaseFailed}</p>
          {dismissButton}
        </div>
      );
    case 'cancelled':
      return (
        <div className="purchase-notice" role="status">
          <p>Checkout was cancelled. Nothing was charged.</p>
          {dismissButton}
        </div>
      );
  }
}
