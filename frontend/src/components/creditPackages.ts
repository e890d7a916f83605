import { CREDIT_COST, CREDIT_PACKAGES, type CreditPackage } from '../../../domain/constants';

export { CREDIT_PACKAGES, type CreditPackage };

/** Spec 001 section 9: the displayed price is the stored cents times 1.15, rounded, with two decimals (NZD). */
export function displayPriceNzd(priceCents: number): string {
  return PRICE_FORMAT.format(Math.round(priceCents * 1.15) / 100);
}

const PRICE_FORMAT = new Intl.NumberFormat('en-NZ', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Approx. clips = floor(credits / 4). */
export function approxClips(credits: number): number {
  return Math.floor(credits / CREDIT_COST.clip);
}
