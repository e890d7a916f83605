/**
 * Credit packages as sold and shown (spec 001 sections 3 and 9): the one table lives in constants.ts; these are the
 * rules around it, shared by the API (what a checkout charges), the landing page and the Billing tab (what they show),
 * and the answer shapes of the billing endpoints. Pure: no env, no I/O.
 */
import { CREDIT_COST, CREDIT_PACKAGES, type CreditPackage } from './constants';

export const PACKAGE_CURRENCY = 'nzd';
/** The displayed price is the stored cents times 1.15 (NZ GST), rounded to the cent. */
export const DISPLAY_PRICE_FACTOR = 1.15;
/** The Billing tab's low-credit hint shows under this balance. */
export const LOW_CREDIT_THRESHOLD = 100;

export const BILLING_MSG = {
  signInToPurchase: 'Please sign in to purchase credits',
  checkoutFailed: 'Failed to create checkout session',
  purchaseFailed: 'Failed to process credit purchase',
  stripeNotConfigured: 'Credit purchases are not available: Stripe is not configured on this server',
  unknownPackage: 'Unknown credit package',
  foreignReturnUrl: 'Return URLs must point to this app',
  purchaseNotFound: 'Purchase not found',
  packageUnavailable: 'This credit package cannot be bought right now. Please try again later or choose another package.',
  testMode: 'Test mode: no real payment',
} as const;

/**
 * How credits are bought on this installation (GET /api/stripe/purchasing): `live` (Stripe, real payments), `test`
 * (a Stripe test key, or `npm start`'s local test-mode checkout: no real payment) or `unavailable` (no key or no
 * webhook secret: nothing can be credited, so nothing is sold).
 */
export const PURCHASING_MODES = ['live', 'test', 'unavailable'] as const;
export type PurchasingMode = (typeof PURCHASING_MODES)[number];

export interface PurchasingReply {
  mode: PurchasingMode;
}

/** The mode from the Stripe secret key and webhook secret: a test key (`sk_test_`, `rk_test_`) is Stripe's test mode. */
export function purchasingMode(stripe: { secretKey: string; webhookSecret: string }): PurchasingMode {
  if (!stripe.secretKey || !stripe.webhookSecret) return 'unavailable';
  return /^(sk|rk)_test_/.test(stripe.secretKey) ? 'test' : 'live';
}

export function findCreditPackage(id: string): CreditPackage | undefined {
  return CREDIT_PACKAGES.find((p) => p.id === id);
}

/** What a package costs the buyer, in cents: the stored cents times 1.15, rounded. Checkout charges exactly this. */
export function displayPriceCents(priceCents: number): number {
  return Math.round(priceCents * DISPLAY_PRICE_FACTOR);
}

/** Approx. clips = floor(credits / 4). */
export function approxClips(credits: number): number {
  return Math.floor(credits / CREDIT_COST.clip);
}

/** The spec's "pricing display": id, name, credits, clips, price (two decimals, NZD). */
export interface PricingDisplay {
  id: string;
  name: string;
  credits: number;
  clips: number;
  price: string;
  isPopular: boolean;
}

export function pricingDisplay(pkg: CreditPackage): PricingDisplay {
  return {
    id: pkg.id,
    name: pkg.name,
    credits: pkg.totalCredits,
    clips: approxClips(pkg.totalCredits),
    price: (displayPriceCents(pkg.priceCents) / 100).toFixed(2),
    isPopular: pkg.isPopular,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Answers of /api/stripe/* and /api/credits/weekly-usage (the front end imports these types)

export const PURCHASE_STATUSES = ['open', 'completed', 'failed', 'expired', 'refunded', 'partially_refunded'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

export interface PurchaseView {
  id: string;
  sessionId: string | null;
  packageId: string;
  packageName: string;
  credits: number;
  amountCents: number;
  currency: string;
  status: PurchaseStatus;
  createdAt: string;
  completedAt: string | null;
  creditsReversed: number;
}

/**
 * Where a checkout stands, from our records and Stripe's session:
 * - awaiting_payment: Stripe reports the session open (not paid yet);
 * - processing: the session is complete but the payment is still unpaid (a delayed method such as a bank debit);
 * - confirming: Stripe reports it paid, the webhook has not credited it yet (or Stripe did not answer);
 * - credited: the webhook credited the package (a later refund does not change this);
 * - failed: the delayed payment failed; expired: the session expired unpaid.
 */
export const CHECKOUT_STATES = ['awaiting_payment', 'processing', 'confirming', 'credited', 'failed', 'expired'] as const;
export type CheckoutState = (typeof CHECKOUT_STATES)[number];

export interface CheckoutProgress {
  state: CheckoutState;
  /** Stripe's session status (open, complete, expired); null when Stripe was not asked or did not answer. */
  sessionStatus: string | null;
  /** Stripe's payment status (paid, unpaid, no_payment_required); null likewise. */
  paymentStatus: string | null;
}

/** GET /api/stripe/purchases/:sessionId: the purchase, where its checkout stands, and the balance (the return page). */
export interface PurchaseStatusReply {
  purchase: PurchaseView;
  checkout: CheckoutProgress;
  availableCredits: number;
  credits: number;
}

export const USAGE_KINDS = ['image', 'clip', 'assembly'] as const;

/** One week (Monday, UTC) of ledger activity: credits added, spent per content kind, refunded and corrected. */
export interface WeeklyCreditUsage {
  weekStart: string;
  /** bought, welcome and other grants (admin corrections apart) */
  added: number;
  spent: { image: number; clip: number; assembly: number };
  /** credits Stripe refunds took back */
  refunded: number;
  /** admin corrections, up and down */
  adjusted: { added: number; removed: number };
  /** credits taken otherwise (deductions) */
  removed: number;
}
