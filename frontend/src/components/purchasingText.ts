/**
 * What the app says about buying credits on this installation (GET /api/stripe/purchasing: live, test or
 * unavailable), so every screen that stops a user offers only a way forward that exists here: the Buy area, the
 * approval queue's rejection lock and the pending-cap notices.
 */
import { BILLING_MSG, type PurchasingMode } from '../../../domain/billing';
import { MSG } from '../../../domain/messages';
import { completeSpecText } from './specText';

export const TEST_MODE_LABEL = BILLING_MSG.testMode;
export const TEST_MODE_EXPLAINER = 'Checkout here is a test checkout: paying adds the credits to your account without charging a card.';

/** Why the Buy buttons are disabled, and what the user can do meanwhile. */
export const PURCHASES_UNAVAILABLE = `${BILLING_MSG.stripeNotConfigured}. The administrator of this installation can turn purchases on; until then, ask them if you need credits added to your account.`;

/** The rejection lock (001 section 8) where a package can be bought. */
export const REJECTION_NEEDS_PURCHASE = completeSpecText(MSG.rejectionRequiresPurchase, 'Buy any package under Account > Billing to reject items.');

/** The rejection lock where nothing can be bought yet: how it will unlock, and what to do until then. */
export const REJECTION_UNLOCKS_WITH_PURCHASES = completeSpecText(
  MSG.rejectionRequiresPurchase,
  'Credit purchases are not available on this installation yet: rejecting unlocks once its administrator turns purchases on and you buy a package. Until then, save the items you want to keep; the others are released, with their credits, when their approval deadline passes.',
);

export function rejectionLockText(purchasing: PurchasingMode | undefined): string {
  return purchasing === 'unavailable' ? REJECTION_UNLOCKS_WITH_PURCHASES : REJECTION_NEEDS_PURCHASE;
}

/** What frees a place below the pending cap for this user here: reject only when they may, buy only where it exists. */
export function pendingCapWayForward(canReject: boolean, purchasing: PurchasingMode | undefined): string {
  if (canReject) return 'Save or reject items in Approvals to generate more.';
  if (purchasing === 'unavailable') {
    return 'Save items in Approvals to generate more. Rejecting needs a credit purchase, which this installation does not offer yet.';
  }
  return 'Save items in Approvals to generate more, or buy a credit package to unlock rejecting.';
}
