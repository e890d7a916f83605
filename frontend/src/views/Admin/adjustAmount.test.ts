import { describe, expect, it } from '@jest/globals';
import { parseCreditAmount } from './adjustAmount';

describe('parseCreditAmount', () => {
  it('accepts whole numbers from 1 to a million, spaces around them ignored', () => {
    expect(parseCreditAmount('10')).toBe(10);
    expect(parseCreditAmount(' 7 ')).toBe(7);
    expect(parseCreditAmount('1000000')).toBe(1_000_000);
  });

  it('explains what is wrong with anything else', () => {
    expect(parseCreditAmount('')).toBe('Enter how many credits');
    expect(parseCreditAmount('   ')).toBe('Enter how many credits');
    for (const raw of ['1.5', '-3', '+3', '1e3', 'ten', '0x10']) expect([raw, parseCreditAmount(raw)]).toEqual([raw, 'Credits are whole numbers']);
    expect(parseCreditAmount('0')).toBe('Enter at least 1 credit');
    expect(parseCreditAmount('1000001')).toBe('At most 1,000,000 credits at a time');
  });
});
