import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useRef, useState, type ReactElement } from 'react';
import { HTTPError } from 'ky';
import { fetchPurchaseStatus, type PurchaseStatusReply } from '../../api/billing';
import { refreshBillingAtom } from '../../atoms/billing';
import { balanceKeyAtom, creditSummaryStateAtom } from '../../atoms/credits';
import { hrefWithParams } from '../../atoms/viewUrl';
import { BILLING_MSG } from '../../../../domain/billing';
import { purchaseReturnFromSearch, type PurchaseReturn } from './checkoutReturn';
import { countText } from '../../components/countText';

/** How often the return page asks where the purchase stands: quickly at first, then every 5 s for as long as it takes. */
export const CONFIRM_POLL_MS = 1500;
export const CONFIRM_FAST_POLLS = 40;
export const CONFIRM_SLOW_POLL_MS = 5000;

export function nextPollDelay(polls: number): number {
  return polls < CONFIRM_FAST_POLLS ? CONFIRM_POLL_MS : CONFIRM_SLOW_POLL_MS;
}

type Confirmation =
  /** Stripe reports the payment paid; the webhook has not credited it yet */
  | { state: 'confirming' }
  /** Stripe reports the session open, or complete with the payment still processing (a delayed method) */
  | { state: 'processing' }
  | { state: 'completed'; credits: number; packageName: string; balance: Balance }
  | { state: 'failed' }
  | { state: 'cancelled' };

/** The workspace's credits as the Credit Balance card shows them: in total, and available (the total less what is reserved). */
export interface Balance {
  credits: number;
  availableCredits: number;
}

/**
 * The balance after a purchase, in the Credit Balance card's words: the available figure the card shows large, and
 * while items wait for approval, the total and what they reserve, as the card says below it.
 */
export function balanceText({ credits, availableCredits }: Balance): string {
  const available = `You now have ${countText(availableCredits, 'credit')} available`;
  const reserved = credits - availableCredits;
  return reserved > 0 ? `${available}: ${credits} in total, ${reserved} reserved for items waiting for approval.` : `${available}.`;
}

function initial(ret: PurchaseReturn | null): Confirmation | null {
  if (!ret) return null;
  if (ret.outcome === 'cancelled') return { state: 'cancelled' };
  return ret.sessionId ? { state: 'confirming' } : { state: 'failed' };
}

/** What the page says for a status reply: only a failed or expired checkout is a failure; anything unsettled waits. */
export function confirmationOf(reply: PurchaseStatusReply): Confirmation {
  const { purchase, checkout } = reply;
  if (checkout.state === 'credited') {
    return { state: 'completed', credits: purchase.credits, packageName: purchase.packageName, balance: { credits: reply.credits, availableCredits: reply.availableCredits } };
  }
  if (checkout.state === 'failed' || checkout.state === 'expired') return { state: 'failed' };
  return checkout.state === 'confirming' ? { state: 'confirming' } : { state: 'processing' };
}

/** A reply that will not change by asking again (the session is not this user's, or the user is signed out). */
function finalRefusal(err: unknown): boolean {
  const status = err instanceof HTTPError ? err.response.status : null;
  return status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/**
 * Back from Stripe Checkout: says the payment is being confirmed for as long as Stripe reports the session open or
 * its payment processing, and until the webhook has credited it (read from the purchase-status endpoint, which asks
 * Stripe), then shows the new balance; the spec's failure text only for a failed or expired checkout (or a session
 * that is not the user's); after a cancel, that nothing was charged. A reload asks again and shows the same.
 * The balance it states is the Credit Balance card's: the status reply's figures until the card has read the balance
 * again, then the card's own (a credit event, a charge or a release afterwards change both alike).
 */
export function PurchaseReturnNotice(): ReactElement | null {
  const [ret] = useState(() => purchaseReturnFromSearch(window.location.search));
  const [confirmation, setConfirmation] = useState<Confirmation | null>(() => initial(ret));
  const refreshBilling = useSetAtom(refreshBillingAtom);
  const summary = useAtomValue(creditSummaryStateAtom);
  const balanceKey = useAtomValue(balanceKeyAtom);
  // the card's balance when the purchase was confirmed: once it reads anything else, the card is the newer figure
  const keyAtCompletion = useRef<string | null>(null);
  const latestKey = useRef(balanceKey);
  latestKey.current = balanceKey;

  useEffect(() => {
    if (ret?.outcome !== 'success' || !ret.sessionId) return undefined;
    const sessionId = ret.sessionId;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let polls = 0;
    const check = async () => {
      polls += 1;
      try {
        const next = confirmationOf(await fetchPurchaseStatus(sessionId));
        if (cancelled) return;
        if (next.state === 'completed') keyAtCompletion.current = latestKey.current;
        setConfirmation(next);
        if (next.state === 'completed') refreshBilling();
        if (next.state === 'completed' || next.state === 'failed') return;
      } catch (err) {
        if (cancelled) return;
        if (finalRefusal(err)) {
          setConfirmation({ state: 'failed' });
          return;
        }
        // a network blip or a server error says nothing about the payment: ask again
      }
      timer = setTimeout(() => void check(), nextPollDelay(polls));
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
    case 'processing':
      return (
        <div className="purchase-notice purchase-notice-pending" role="status" aria-live="polite">
          <span className="spinner" aria-hidden="true" />
          <p>Your payment is being confirmed. Some payment methods take a while to clear; your credits are added as soon as Stripe confirms the payment.</p>
        </div>
      );
    case 'completed': {
      const card = summary?.ok && summary.data && balanceKey !== keyAtCompletion.current ? summary.data : null;
      return (
        <div className="purchase-notice purchase-notice-success" role="status" aria-live="polite">
          <p>
            <strong>
              Purchase complete: +{confirmation.credits} credits ({confirmation.packageName}).
            </strong>{' '}
            {balanceText(card ?? confirmation.balance)}
          </p>
          {dismissButton}
        </div>
      );
    }
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
