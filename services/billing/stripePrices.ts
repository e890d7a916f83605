/**
 * The Stripe Prices configured for the credit packages (STRIPE_PRICE_<ID>) checked against what the app shows: the
 * Price must exist, be active, be a one-time NZD price, and its unit_amount must equal the package's displayed
 * amount (stored cents x 1.15, rounded). Checked at API start, by the readiness check and before each checkout of a
 * package with a Price; a package whose Price does not match is not sold (a 503 to the buyer, an error in the log),
 * never charged at another amount. Answers are kept a few minutes per Price (a fixed Price is picked up then); a
 * check Stripe did not answer is not kept, and refuses the purchase too.
 */
import Stripe from 'stripe';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { PACKAGE_CURRENCY, displayPriceCents } from '../../domain/billing';
import { CREDIT_PACKAGES, type CreditPackage } from '../../domain/constants';
import { stripeClient } from './stripeClient';

export type PriceCheckConfig = Pick<AppConfig, 'stripeSecretKey' | 'stripeApiBase' | 'stripePriceIds'>;

export interface PackagePriceCheck {
  packageId: string;
  priceId: string;
  ok: boolean;
  /** What is wrong, for operators (the buyer sees a generic text). */
  problem: string | null;
  /** Stripe did not answer: nothing is known about the Price yet. */
  unverified: boolean;
}

export const PRICE_CHECK_MAX_AGE_MS = 5 * 60_000;
const PRICE_CHECK_TIMEOUT_MS = 5_000;

function money(cents: number): string {
  return `${(cents / 100).toFixed(2)} ${PACKAGE_CURRENCY.toUpperCase()}`;
}

/** What is wrong with `price` as the Price of `pkg`; null when it charges exactly the displayed amount, once, in NZD. */
export function pricePackageProblem(pkg: CreditPackage, price: Pick<Stripe.Price, 'id' | 'active' | 'type' | 'currency' | 'unit_amount'>): string | null {
  const label = `Stripe Price ${price.id} of package "${pkg.id}"`;
  const expected = displayPriceCents(pkg.priceCents);
  if (!price.active) return `${label} is archived (inactive)`;
  if (price.type !== 'one_time') return `${label} is a ${price.type} price; a credit package needs a one-time price`;
  if (price.currency !== PACKAGE_CURRENCY) return `${label} is in ${price.currency.toUpperCase()}; credit packages are sold in ${PACKAGE_CURRENCY.toUpperCase()}`;
  if (price.unit_amount !== expected) {
    const actual = price.unit_amount === null ? 'no fixed amount' : money(price.unit_amount);
    return `${label} charges ${actual} but the package is shown at ${money(expected)}`;
  }
  return null;
}

interface Kept {
  check: PackagePriceCheck;
  at: number;
}

const kept = new Map<string, Kept>();

function keyOf(config: PriceCheckConfig, priceId: string): string {
  return `${config.stripeSecretKey}\u0000${config.stripeApiBase}\u0000${priceId}`;
}

async function fetchCheck(config: PriceCheckConfig, pkg: CreditPackage, priceId: string, logger: Logger): Promise<PackagePriceCheck> {
  const base = { packageId: pkg.id, priceId };
  const stripe = stripeClient(config);
  if (!stripe) return { ...base, ok: false, unverified: true, problem: 'Stripe is not configured (STRIPE_SECRET_KEY unset)' };
  try {
    const price = await stripe.prices.retrieve(priceId, {}, { timeout: PRICE_CHECK_TIMEOUT_MS, maxNetworkRetries: 0 });
    const problem = pricePackageProblem(pkg, price);
    return { ...base, ok: problem === null, unverified: false, problem };
  } catch (err) {
    if (err instanceof Stripe.errors.StripeInvalidRequestError && (err.statusCode === 404 || err.code === 'resource_missing')) {
      return { ...base, ok: false, unverified: false, problem: `Stripe Price ${priceId} of package "${pkg.id}" does not exist in this Stripe account` };
    }
    logger.warn({ err, packageId: pkg.id, priceId }, 'stripe price check: Stripe did not answer');
    return { ...base, ok: false, unverified: true, problem: `Stripe Price ${priceId} of package "${pkg.id}" could not be checked: Stripe did not answer` };
  }
}

/** The check of one package's configured Price (kept up to `maxAgeMs`); null when the package has no Price configured. */
export async function checkPackagePrice(
  config: PriceCheckConfig,
  pkg: CreditPackage,
  logger: Logger,
  maxAgeMs = PRICE_CHECK_MAX_AGE_MS,
  /** Log a mismatch even when the last check found the same (at start); otherwise only a new or changed one. */
  logEvery = false,
): Promise<PackagePriceCheck | null> {
  const priceId = config.stripePriceIds[pkg.id];
  if (!priceId) return null;
  const key = keyOf(config, priceId);
  const earlier = kept.get(key);
  if (earlier && Date.now() - earlier.at < maxAgeMs) return earlier.check;
  const check = await fetchCheck(config, pkg, priceId, logger);
  if (!check.unverified) kept.set(key, { check, at: Date.now() });
  else kept.delete(key);
  const changed = earlier?.check.problem !== check.problem;
  if (!check.ok && !check.unverified && (changed || logEvery)) {
    logger.error({ packageId: pkg.id, priceId, problem: check.problem }, `credit package "${pkg.id}" is not sold: ${check.problem}`);
  }
  return check;
}

/** Every package with a configured Price, checked (in parallel). Empty when no STRIPE_PRICE_* is set. */
export async function checkConfiguredPrices(config: PriceCheckConfig, logger: Logger, maxAgeMs = PRICE_CHECK_MAX_AGE_MS, logEvery = false): Promise<PackagePriceCheck[]> {
  const checks = await Promise.all(CREDIT_PACKAGES.map((pkg) => checkPackagePrice(config, pkg, logger, maxAgeMs, logEvery)));
  return checks.filter((c): c is PackagePriceCheck => c !== null);
}

/** At API start: checks the configured Prices and logs the outcome (a problem is logged as an error by the check). */
export async function checkPricesAtStart(config: PriceCheckConfig, logger: Logger): Promise<PackagePriceCheck[]> {
  const checks = await checkConfiguredPrices(config, logger, 0, true);
  if (checks.length > 0 && checks.every((c) => c.ok)) logger.info({ packages: checks.map((c) => c.packageId) }, 'stripe prices match the credit packages');
  return checks;
}
