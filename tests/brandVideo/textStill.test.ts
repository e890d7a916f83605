/**
 * Issue 44, acceptance 2: text for title cards, captions and end cards is drawn with Pango (sharp's text input) into a
 * box, and what does not fit is shrunk or wrapped, never cut off: long names, one very long word, and non-Latin
 * scripts (Greek, Cyrillic, Arabic) all land inside the box's padding, with glyphs drawn.
 */
import sharp from 'sharp';
import { renderTextStill, type TextStillOptions } from '../../providers/media/textStill';

const BOX: Omit<TextStillOptions, 'lines'> = { fontFamily: 'Inter', color: '#FFFFFF', width: 900, height: 300, background: '#1F2A44', padding: 24, maxFontPx: 96, bold: true };

/** Whether any pixel of the rows/columns outside the padding differs from the background (text reaching the edge). */
async function edgeTouched(png: Buffer, padding: number): Promise<{ edge: boolean; textPixels: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  let edge = false;
  let textPixels = 0;
  for (let y = 0; y < info.height; y += 1) {
    for (let x = 0; x < info.width; x += 1) {
      const i = (y * info.width + x) * info.channels;
      const bright = data[i] > 128 && data[i + 1] > 128 && data[i + 2] > 128;
      if (!bright) continue;
      textPixels += 1;
      if (x < padding || y < padding || x >= info.width - padding || y >= info.height - padding) edge = true;
    }
  }
  return { edge, textPixels };
}

describe('renderTextStill', () => {
  it('draws a short name at the largest size asked for, centred in the box', async () => {
    const still = await renderTextStill({ ...BOX, lines: ['Harbour Villas'] });
    expect([still.width, still.height]).toEqual([900, 300]);
    expect(still.textHeight).toBeGreaterThan(60);
    expect(still.textHeight).toBeLessThanOrEqual(BOX.height - 2 * (BOX.padding ?? 0));
    expect(await edgeTouched(still.png, BOX.padding ?? 0)).toMatchObject({ edge: false });
  });

  it.each([
    ['a long name', ['The Extraordinarily Long-Named Residences at Kensington Gardens Square, Penthouse Collection Phase Two']],
    ['one very long word', ['Supercalifragilisticexpialidocious-Pneumonoultramicroscopicsilicovolcanoconiosis-Apartments']],
    ['Greek, Cyrillic and Arabic', ['Βίλες του Λιμανιού — Πεντχάουζ', 'Гаванские виллы у моря', 'فلل الميناء الفاخرة']],
    ['many contact lines', ['Harbour Estates Ltd', '+44 20 7946 0000', 'www.harbour-estates.example', 'Book your private viewing today']],
  ])('shrinks and wraps %s to fit inside the box, never past its padding', async (_name, lines) => {
    const still = await renderTextStill({ ...BOX, lines });
    const inner = { width: BOX.width - 2 * (BOX.padding ?? 0), height: BOX.height - 2 * (BOX.padding ?? 0) };
    expect(still.textWidth).toBeLessThanOrEqual(inner.width);
    expect(still.textHeight).toBeLessThanOrEqual(inner.height);
    const { edge, textPixels } = await edgeTouched(still.png, BOX.padding ?? 0);
    expect(edge).toBe(false);
    // glyphs were drawn (a box with nothing in it would pass the rest)
    expect(textPixels).toBeGreaterThan(2000);
  });

  it('keeps the box transparent without a background, and never reads the text as markup', async () => {
    const still = await renderTextStill({ ...BOX, background: undefined, lines: ['<b>Tom & Jerry</b> "Cottage"'] });
    const { data, info } = await sharp(still.png).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect(data[3]).toBe(0);
  });
});
