import { describe, expect, it } from '@jest/globals';
import { MSG } from '../../../domain/messages';
import { countText } from './countText';
import { completeSpecText } from './specText';

describe('countText', () => {
  it('puts the noun in the number of its count', () => {
    expect(countText(1, 'render')).toBe('1 render');
    expect(countText(0, 'clip')).toBe('0 clips');
    expect(countText(2, 'image')).toBe('2 images');
    expect(countText(1, 'entry', 'entries')).toBe('1 entry');
    expect(countText(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('completeSpecText', () => {
  it("ends a spec text cut short with '...' and adds what it goes on to say", () => {
    expect(completeSpecText(MSG.rejectionRequiresPurchase, 'Buy a package first.')).toBe(
      'Rejections are disabled until you purchase a credit package. Buy a package first.',
    );
    expect(completeSpecText('The maximum is 5…')).toBe('The maximum is 5.');
    expect(completeSpecText('Nothing cut here.')).toBe('Nothing cut here.');
  });
});
