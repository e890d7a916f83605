import { approxClips, displayPriceCents } from '../../../domain/billing';
import { CREDIT_PACKAGES, type CreditPackage } from '../../../domain/constants';

export { approxClips, CREDIT_PACKAGES, type CreditPackage };

const PRICE_FORMAT = new Intl.NumberFormat('en-NZ', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Spec 001 section 9: the displayed price is the stored cents times 1.15, rounded, with two decimals (NZD). */
export function displayPriceNzd(priceCents: number): string {
  return formatCents(displayPriceCents(priceCents));
}

/** An amount in cents as money with two decimals (1,374.25). */
export function formatCents(cents: number): string {
  return PRICE_FORMAT.format(cents / 100);
}
