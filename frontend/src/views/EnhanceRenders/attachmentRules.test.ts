import { describe, expect, it } from '@jest/globals';
import { modelOption } from '../../../../domain/enhanceRenders';
import { attachmentBlock, attachmentRoom, isAttachableFile, missingReference, referencesToSend } from './attachmentRules';

const nano = modelOption('nano-banana-edit')!;
const style = modelOption('style-transfer')!;
const flux = modelOption('flux-kontext-max')!;
const esrgan = modelOption('esrgan')!;

const refs = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `/files/drafts/ref-${i}.png`, useForLook: true }));

describe('attachment rules', () => {
  it('allows attachments only for Nano Banana Edit and Style Transfer', () => {
    expect(attachmentBlock(nano, false)).toBeNull();
    expect(attachmentBlock(style, false)).toBeNull();
    for (const model of [flux, esrgan]) expect(attachmentBlock(model, false)).toBe('Attachments are available only for Nano Banana and Style Transfer');
  });

  it('disables them while Sync Images is on', () => {
    expect(attachmentBlock(nano, true)).toBe('Attachments are disabled while Sync Images is active');
    expect(attachmentRoom(nano, true, 0, 1)).toEqual({ take: 0, message: 'Attachments are disabled while Sync Images is active' });
  });

  it('takes up to the model limit (Nano Banana 3, Style Transfer 6) and says so beyond it', () => {
    expect(attachmentRoom(nano, false, 0, 3)).toEqual({ take: 3, message: null });
    expect(attachmentRoom(nano, false, 2, 2)).toEqual({ take: 1, message: 'Max 3 attachments for this model' });
    expect(attachmentRoom(nano, false, 3, 1)).toEqual({ take: 0, message: 'Max 3 attachments for this model' });
    expect(attachmentRoom(style, false, 4, 2)).toEqual({ take: 2, message: null });
    expect(attachmentRoom(style, false, 4, 3)).toEqual({ take: 2, message: 'Max 6 attachments for this model' });
  });

  it('counts only image files', () => {
    expect(isAttachableFile({ type: 'image/png' })).toBe(true);
    expect(isAttachableFile({ type: 'text/plain' })).toBe(false);
  });

  it('sends at most 4 references, only those used for the look, none in Sync Images or for other models', () => {
    expect(referencesToSend(style, false, refs(6))).toHaveLength(4);
    expect(referencesToSend(nano, false, refs(3))).toHaveLength(3);
    expect(referencesToSend(nano, false, [{ url: '/a.png', useForLook: false }, { url: '/b.png', useForLook: true }])).toEqual(['/b.png']);
    expect(referencesToSend(nano, true, refs(2))).toEqual([]);
    expect(referencesToSend(flux, false, refs(2))).toEqual([]);
  });

  it('holds a Style Transfer run until a reference is used for the look, with the server’s words for a missing one', () => {
    expect(missingReference(style, false, [])).toBe('Attach at least one reference image for Style Transfer');
    expect(missingReference(style, false, [{ url: '/files/drafts/ref-0.png', useForLook: false }])).toBe('Tick “Use for look” on a reference image for Style Transfer');
    expect(missingReference(style, false, refs(1))).toBeNull();
  });

  it('asks no reference of the other models, nor in Sync Images (the pinned image is the reference)', () => {
    for (const model of [nano, flux, esrgan]) expect(missingReference(model, false, [])).toBeNull();
    expect(missingReference(style, true, [])).toBeNull();
  });
});
