import { countText, pluralWord } from './plural';

describe('countText', () => {
  it('uses the singular for one and the plural for zero, many and fractions', () => {
    expect(countText(1, 'file')).toBe('1 file');
    expect(countText(0, 'file')).toBe('0 files');
    expect(countText(3, 'credit')).toBe('3 credits');
    expect(countText(1.5, 'second')).toBe('1.5 seconds');
  });

  it('takes an irregular plural', () => {
    expect(countText(2, 'match', 'matches')).toBe('2 matches');
    expect(countText(1, 'match', 'matches')).toBe('1 match');
  });
});

describe('pluralWord', () => {
  it('agrees a verb with its count', () => {
    expect(`${countText(1, 'credit')} ${pluralWord(1, 'is', 'are')} available`).toBe('1 credit is available');
    expect(`${countText(4, 'credit')} ${pluralWord(4, 'is', 'are')} available`).toBe('4 credits are available');
  });
});
