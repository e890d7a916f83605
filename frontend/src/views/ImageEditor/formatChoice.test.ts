import { describe, expect, it } from '@jest/globals';
import { initialFormat } from './formatChoice';

describe('the editor’s starting framing', () => {
  it('keeps the original framing of a render no fixed format fits, such as a 6000 × 4000 (3:2) render', () => {
    expect(initialFormat(6000, 4000)).toBe('original');
    expect(initialFormat(1200, 800)).toBe('original');
    expect(initialFormat(3000, 4000)).toBe('original');
  });

  it('starts on the fixed format a render already has: Square, Landscape (16:9) or Portrait (9:16)', () => {
    expect(initialFormat(2048, 2048)).toBe('square');
    expect(initialFormat(1920, 1080)).toBe('landscape');
    expect(initialFormat(1080, 1920)).toBe('portrait');
  });

  it('keeps the original framing when the render’s size is unknown, so nothing is cut unseen', () => {
    expect(initialFormat(undefined, undefined)).toBe('original');
    expect(initialFormat(0, 800)).toBe('original');
    expect(initialFormat(1200, null)).toBe('original');
  });
});
