import { describe, expect, it } from '@jest/globals';
import {
  COMPRESSION_THRESHOLD_BYTES,
  COMPRESSION_TRIGGER_BYTES,
  UPLOAD_COMPRESSION_TARGET_BYTES,
  compressProgressively,
  compressionSteps,
  compressionTargetBytes,
  needsCompression,
  scaledSize,
} from './compressionPlan';

describe('compression plan', () => {
  it('compresses images above 4 MB (000 section 9), GIFs too, so 4-4.5 MB files are no longer sent as they are', () => {
    expect(COMPRESSION_TRIGGER_BYTES).toBe(4194304);
    expect(needsCompression({ size: 4194304, type: 'image/png' })).toBe(false);
    expect(needsCompression({ size: 4194305, type: 'image/png' })).toBe(true);
    expect(needsCompression({ size: 4_500_000, type: 'image/jpeg' })).toBe(true);
    expect(needsCompression({ size: 9_000_000, type: 'image/jpeg' })).toBe(true);
    expect(needsCompression({ size: 9_000_000, type: 'image/gif' })).toBe(true);
    expect(needsCompression({ size: 4_000_000, type: 'image/gif' })).toBe(false);
  });

  it('targets 8 MB in general and under 4.5 MB (4718592 bytes) for the upload API route', () => {
    expect(UPLOAD_COMPRESSION_TARGET_BYTES).toBe(8 * 1024 * 1024);
    expect(COMPRESSION_THRESHOLD_BYTES).toBe(4718592);
    expect(compressionTargetBytes(false)).toBe(8388608);
    expect(compressionTargetBytes(true)).toBe(4718592);
  });

  it('keeps a 4-4.5 MB file as it was when its redrawn copy would be larger, and takes the copy when smaller', async () => {
    const original = { size: 4_300_000 };
    const larger = await compressProgressively(original, async () => ({ size: 4_400_000 }));
    expect(larger).toEqual({ blob: original, step: null, tries: 1 });
    const smaller = await compressProgressively(original, async () => ({ size: 900_000 }));
    expect(smaller).toEqual({ blob: { size: 900_000 }, step: { maxSide: 2048, quality: 0.8 }, tries: 1 });
  });

  it('tries until the result is under the 8 MB target where the API route does not apply', async () => {
    const sizes: Record<number, number> = { 2048: 9_000_000, 1536: 6_000_000, 1024: 3_000_000 };
    const outcome = await compressProgressively({ size: 30_000_000 }, async (step) => ({ size: sizes[step.maxSide] }), compressionTargetBytes(false));
    expect(outcome).toEqual({ blob: { size: 6_000_000 }, step: { maxSide: 1536, quality: 0.65 }, tries: 2 });
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
    expect(needsCompression({ size: 3_000_000, type: 'image/gif' }, 1_048_576)).toBe(true);
    const sizes: Record<number, number> = { 2048: 2_000_000, 1536: 1_200_000, 1024: 600_000 };
    const outcome = await compressProgressively({ size: 3_000_000 }, async (step) => ({ size: sizes[step.maxSide] }), 1_048_576);
    expect(outcome).toEqual({ blob: { size: 600_000 }, step: { maxSide: 1024, quality: 0.5 }, tries: 3 });
  });
});
