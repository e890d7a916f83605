import { describe, expect, it } from '@jest/globals';
import { checkoutReturnUrl, purchaseReturnFromSearch } from './checkoutReturn';

describe('checkout return addresses', () => {
  it('sends the browser back to the Billing tab, with the session placeholder unencoded on success', () => {
    expect(checkoutReturnUrl('https://studio.example/?view=account&tab=billing&project=p1#x', 'success')).toBe(
      'https://studio.example/?project=p1&view=account&tab=billing&purchase=success&session_id={CHECKOUT_SESSION_ID}',
    );
    expect(checkoutReturnUrl('https://studio.example/?purchase=success&session_id=cs_old', 'cancelled')).toBe(
      'https://studio.example/?view=account&tab=billing&purchase=cancelled',
    );
  });

  it('reads the outcome and a well-formed session id back', () => {
    expect(purchaseReturnFromSearch('?view=account&purchase=success&session_id=cs_test_a1')).toEqual({ outcome: 'success', sessionId: 'cs_test_a1' });
    expect(purchaseReturnFromSearch('?purchase=success&session_id=../../admin')).toEqual({ outcome: 'success', sessionId: null });
    expect(purchaseReturnFromSearch('?purchase=success')).toEqual({ outcome: 'success', sessionId: null });
    expect(purchaseReturnFromSearch('?purchase=cancelled')).toEqual({ outcome: 'cancelled' });
    expect(purchaseReturnFromSearch('?view=account')).toBeNull();
  });
});
