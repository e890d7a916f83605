import { describe, expect, it } from '@jest/globals';
import { COMPRESSION_THRESHOLD_BYTES, compressProgressively, compressionSteps, needsCompression, scaledSize } from './compressionPlan';

describe('compression plan', () => {
  it('compresses images of 4718592 bytes and more, except GIFs', () => {
    expect(COMPRESSION_THRESHOLD_BYTES).toBe(4718592);
    expect(needsCompression({ size: 4718591, type: 'image/png' })).toBe(false);
    expect(needsCompression({ size: 4718592, type: 'image/png' })).toBe(true);
    expect(needsCompression({ size: 9_000_000, type: 'image/jpeg' })).toBe(true);
    expect(needsCompression({ size: 9_000_000, type: 'image/gif' })).toBe(false);
  });

  it('steps down 0.15 quality and 512 px per try from 2048 px at 0.8, three tries, side never under 1024', () => {
    expect(compressionSteps()).toEqual([
      { maxSide: 2048, quality: 0.8 },
      { maxSide: 1536, quality: 0.65 },
      { maxSide: 1024, quality: 0.5 },
    ]);
  });

  it('scales the longest side down and never up', () => {
    expect(scaledSize(4000, 3000, 2048)).toEqual({ width: 2048, height: 1536 });
    expect(scaledSize(1080, 1920, 1536)).toEqual({ width: 864, height: 1536 });
    expect(scaledSize(800, 600, 2048)).toEqual({ width: 800, height: 600 });
  });

  it('stops at the first try under the threshold', async () => {
    const tried: number[] = [];
    const outcome = await compressProgressively({ size: 20_000_000 }, async (step) => {
      tried.push(step.maxSide);
      return { size: step.maxSide === 2048 ? 6_000_000 : 3_000_000 };
    });
    expect(tried).toEqual([2048, 1536]);
    expect(outcome).toEqual({ blob: { size: 3_000_000 }, step: { maxSide: 1536, quality: 0.65 }, tries: 2 });
  });

  it('keeps the smallest result when no try gets under the threshold, and the original when nothing is smaller', async () => {
    const sizes = [9_000_000, 7_000_000, 8_000_000];
    let i = 0;
    const outcome = await compressProgressively({ size: 20_000_000 }, async () => ({ size: sizes[i++] }));
    expect(outcome.blob.size).toBe(7_000_000);
    expect(outcome.tries).toBe(3);
    const original = { size: 5_000_000 };
    expect((await compressProgressively(original, async () => ({ size: 6_000_000 }))).blob).toBe(original);
  });

  it('takes a lower threshold where the result must fit somewhere smaller (the try-it area keeps 1 MB)', async () => {
    expect(needsCompression({ size: 1_048_576, type: 'image/png' }, 1_048_576)).toBe(true);
    expect(needsCompression({ size: 1_048_575, type: 'image/png' }, 1_048_576)).toBe(false);
    expect(needsCompression({ size: 3_000_000, type: 'image/gif' }, 1_048_576)).toBe(false);
    const sizes: Record<number, number> = { 2048: 2_000_000, 1536: 1_200_000, 1024: 600_000 };
    const outcome = await compressProgressively({ size: 3_000_000 }, async (step) => ({ size: sizes[step.maxSide] }), 1_048_576);
    expect(outcome).toEqual({ blob: { size: 600_000 }, step: { maxSide: 1024, quality: 0.5 }, tries: 3 });
  });
});
