import { describe, expect, it } from '@jest/globals';
import { approxClips, CREDIT_PACKAGES, displayPriceNzd } from './creditPackages';

describe('credit package display', () => {
  it('shows the stored cents times 1.15, rounded, with two decimals', () => {
    expect(CREDIT_PACKAGES.map((p) => displayPriceNzd(p.priceCents))).toEqual(['287.50', '746.35', '1,374.25']);
  });

  it('rounds to the nearest cent before formatting', () => {
    expect(displayPriceNzd(101)).toBe('1.16'); // 116.15 cents
    expect(displayPriceNzd(3)).toBe('0.03'); // 3.45 cents
  });

  it('gives approx. clips as credits / 4 rounded down', () => {
    expect(CREDIT_PACKAGES.map((p) => approxClips(p.totalCredits))).toEqual([3, 7, 18]);
  });

  it('marks only the Medium package as Most Popular', () => {
    expect(CREDIT_PACKAGES.filter((p) => p.isPopular).map((p) => p.name)).toEqual(['Medium Project']);
  });
});
