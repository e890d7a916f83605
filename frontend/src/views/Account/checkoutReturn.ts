/** The addresses Stripe Checkout sends the browser back to, and reading them again on return. Pure. */

const SESSION_ID_PLACEHOLDER = '{CHECKOUT_SESSION_ID}';

/** This app's Billing tab with the outcome (and, on success, the session id Stripe fills in). */
export function checkoutReturnUrl(href: string, outcome: 'success' | 'cancelled'): string {
  const url = new URL(href);
  const params = new URLSearchParams(url.search);
  for (const key of ['purchase', 'session_id', 'view', 'tab']) params.delete(key);
  params.set('view', 'account');
  params.set('tab', 'billing');
  params.set('purchase', outcome);
  // the placeholder must reach Stripe unencoded
  const sessionId = outcome === 'success' ? `&session_id=${SESSION_ID_PLACEHOLDER}` : '';
  return `${url.origin}${url.pathname}?${params.toString()}${sessionId}`;
}

export type PurchaseReturn = { outcome: 'success'; sessionId: string | null } | { outcome: 'cancelled' };

/** `?purchase=success&session_id=cs_...` or `?purchase=cancelled`; null when the page was not opened by Checkout. */
export function purchaseReturnFromSearch(search: string): PurchaseReturn | null {
  const params = new URLSearchParams(search);
  const outcome = params.get('purchase');
  if (outcome === 'cancelled') return { outcome: 'cancelled' };
  if (outcome !== 'success') return null;
  const sessionId = params.get('session_id');
  return { outcome: 'success', sessionId: sessionId && /^cs_[A-Za-z0-9_]+$/.test(sessionId) ? sessionId : null };
}
