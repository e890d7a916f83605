import { describe, expect, it } from '@jest/globals';
import { compressProgressively, scaledSize } from '../../upload/compressionPlan';
import { DRAFT_COMPRESSION_PLAN, draftCompressionSteps, needsDraftCompression, planDraftUpload } from './draftUploadRules';

const png = (name: string, size = 1000) => ({ name, size, type: 'image/png' });

describe('planDraftUpload', () => {
  it('needs an open draft', () => {
    expect(planDraftUpload(false, 0, [png('a.png')])).toEqual({ ok: false, error: 'Open or create a draft project first' });
  });

  it('takes at most 5 files per drop and only image types', () => {
    const six = ['1', '2', '3', '4', '5', '6'].map((n) => png(`${n}.png`));
    expect(planDraftUpload(true, 0, six)).toEqual({ ok: false, error: 'Maximum 5 files allowed' });
    expect(planDraftUpload(true, 0, [{ name: 'notes.pdf', size: 10, type: 'application/pdf' }])).toEqual({
      ok: false,
      error: 'File "notes.pdf" has invalid type. Accepted types: JPEG, JPG, PNG, GIF, WEBP',
    });
  });

  it('fills the draft up to 4 images and ignores the rest with a notice', () => {
    const three = [png('a.png'), png('b.png'), png('c.png')];
    expect(planDraftUpload(true, 0, three)).toEqual({ ok: true, files: three, notice: null });
    expect(planDraftUpload(true, 2, three)).toEqual({ ok: true, files: three.slice(0, 2), notice: 'Only 2 more images allowed. Ignored 1.' });
    expect(planDraftUpload(true, 3, [png('a.png'), png('b.png'), png('c.png'), png('d.png'), png('e.png')])).toMatchObject({
      ok: true,
      notice: 'Only 1 more image allowed. Ignored 4.',
    });
  });

  it('refuses anything once the draft holds 4 images', () => {
    expect(planDraftUpload(true, 4, [png('a.png')])).toEqual({ ok: false, error: 'Limit reached: maximum 4 images per draft' });
  });
});

describe('draft compression', () => {
  it('compresses files of 4,718,592 bytes and more, never GIFs', () => {
    expect(needsDraftCompression({ size: 4_718_591, type: 'image/png' })).toBe(false);
    expect(needsDraftCompression({ size: 4_718_592, type: 'image/jpeg' })).toBe(true);
    expect(needsDraftCompression({ size: 20_000_000, type: 'image/gif' })).toBe(false);
  });

  it('draws at 1920 px and quality 0.8 first, aiming under 4 MB', () => {
    expect(draftCompressionSteps()[0]).toEqual({ maxSide: 1920, quality: 0.8 });
    expect(DRAFT_COMPRESSION_PLAN.targetBytes).toBe(4 * 1024 * 1024);
    expect(scaledSize(4000, 3000, 1920)).toEqual({ width: 1920, height: 1440 });
    expect(scaledSize(1200, 800, 1920)).toEqual({ width: 1200, height: 800 });
  });

  it('stops at the first result under 4 MB and tries lower settings only when needed', async () => {
    const tried: number[] = [];
    const sizes = [5_000_000, 3_000_000, 1_000_000];
    const outcome = await compressProgressively(
      { size: 9_000_000 },
      async (step) => {
        tried.push(step.quality);
        return { size: sizes[tried.length - 1] };
      },
      DRAFT_COMPRESSION_PLAN.targetBytes,
      DRAFT_COMPRESSION_PLAN.steps,
    );
    expect(tried).toEqual([0.8, 0.65]);
    expect(outcome.blob.size).toBe(3_000_000);
    expect(outcome.step).toEqual({ maxSide: 1920, quality: 0.65 });
  });
});
