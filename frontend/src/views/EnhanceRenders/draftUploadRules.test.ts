import { describe, expect, it } from '@jest/globals';
import { modelInputMaxSide, workingCopyNote } from '../../../../domain/enhanceRenders';
import { planDraftUpload } from './draftUploadRules';

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

describe('the working copy note', () => {
  it('names the size a model works at, and for an upscale the size of its result', () => {
    expect(modelInputMaxSide({ mode: 'edit_render' })).toBe(4096);
    expect(modelInputMaxSide({ mode: 'basic_upscale', scale: 2 })).toBe(4096);
    expect(modelInputMaxSide({ mode: 'finish_upscale', scale: 4 })).toBe(2048);
    expect(workingCopyNote({ mode: 'render_enhance' })).toBe('Images over 4096 px are worked on as a 4096 px copy; your uploads stay as they are.');
    expect(workingCopyNote({ mode: 'basic_upscale', scale: 2 })).toBe('Images over 4096 px are worked on as a 4096 px copy (results up to 8192 px); your uploads stay as they are.');
  });
});
