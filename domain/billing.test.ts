import { describe, expect, it } from '@jest/globals';
import { approxClips, displayPriceCents, findCreditPackage, pricingDisplay } from './billing';
import { CREDIT_PACKAGES } from './constants';

describe('credit package pricing', () => {
  it('gives the spec table: 12 / 30 / 72 credits, 3 / 7 / 18 clips, prices x 1.15 with two decimals, Medium most popular', () => {
    expect(CREDIT_PACKAGES.map(pricingDisplay)).toEqual([
      { id: 'small', name: 'Small Project', credits: 12, clips: 3, price: '287.50', isPopular: false },
      { id: 'medium', name: 'Medium Project', credits: 30, clips: 7, price: '746.35', isPopular: true },
      { id: 'large', name: 'Large Project', credits: 72, clips: 18, price: '1374.25', isPopular: false },
    ]);
  });

  it('rounds the displayed cents and floors the clips', () => {
    expect(displayPriceCents(101)).toBe(116);
    expect(displayPriceCents(3)).toBe(3);
    expect(approxClips(7)).toBe(1);
  });

  it('finds packages by id only', () => {
    expect(findCreditPackage('medium')?.totalCredits).toBe(30);
    expect(findCreditPackage('Medium')).toBeUndefined();
    expect(findCreditPackage('__proto__')).toBeUndefined();
  });
});
