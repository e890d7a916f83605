/**
 * Issue 44, acceptance 2: text for title cards, captions and end cards is drawn with Pango (sharp's text input) into a
 * box, and what does not fit is shrunk or wrapped, never cut off: long names, one very long word, and non-Latin
 * scripts (Greek, Cyrillic, Arabic, Chinese, Japanese, Korean) all land inside the box's padding, with glyphs drawn.
 * Every glyph the brand font lacks comes from the fallback fonts (Noto Sans, Noto Sans Arabic, Noto Sans CJK): each
 * character's ink is compared with Pango's "missing glyph" box for it (the brand font with fallback switched off).
 */
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { BRAND_FALLBACK_FONTS, BRAND_FONTS, BRAND_FONT_FAMILIES, brandFontFamilies } from '../../domain/brandKit';
import { renderTextStill, type TextStillOptions } from '../../providers/media/textStill';
import { inkOf, inkWithoutFallback, sameShape, type Ink } from '../support/glyphInk';

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
    ['a long Japanese name (no spaces to wrap at)', ['ハーバー・ヴィラズ東京湾岸レジデンス・ペントハウスコレクション第二期分譲住宅販売センター']],
    ['a long Chinese name', ['海港别墅豪华公寓住宅项目第二期滨海花园高层景观房销售中心欢迎您预约参观']],
    ['a long Arabic name', ['شركة فلل الميناء الفاخرة للتطوير العقاري والاستثمار والتسويق في دبي وأبوظبي والشارقة']],
    ['Korean, Japanese, Chinese and Latin on one card', ['항구 빌라 부동산', 'ハーバー不動産株式会社', '海港地产有限公司', '+81 3-1234-5678 · harbour.example']],
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

  describe('glyphs the brand font lacks', () => {
    const SIZE = 64;

    /** `char` as the title card, captions and end card draw it. */
    async function inkDrawn(char: string, family: string): Promise<Ink | null> {
      const still = await renderTextStill({ lines: [char], fontFamily: family, color: '#FFFFFF', width: SIZE * 4, height: SIZE * 3, maxFontPx: SIZE, bold: true });
      return inkOf(still.png);
    }

    const SCRIPTS = [
      ['Japanese', 'ハーバー・ヴィラズ東京湾岸', 'Noto Sans CJK JP'],
      ['Chinese', '海港别墅豪华公寓项目', 'Noto Sans CJK SC'],
      ['Korean', '항구빌라부동산', 'Noto Sans CJK KR'],
      ['Arabic', 'فلميناءخرة', 'Noto Sans Arabic'],
    ] as const;

    it('installs every brand and fallback font with the setup scripts, and fontconfig knows each family', () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const tools = require('../../scripts/lib/tools') as { BRAND_FONT_PACKAGES: Array<[string, string]> };
      const packages = new Set(tools.BRAND_FONT_PACKAGES.map(([, pkg]) => pkg));
      const known = new Set(execFileSync('fc-list', [':', 'family'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }).split('\n').flatMap((line) => line.split(',').map((f) => f.trim())));
      for (const font of [...BRAND_FONTS, ...BRAND_FALLBACK_FONTS]) {
        expect({ family: font.family, installedBy: packages.has(font.debianPackage), known: known.has(font.family) }).toEqual({ family: font.family, installedBy: true, known: true });
      }
    });

    it('takes the CJK face by the text: Japanese with kana, Korean with Hangul, else Simplified Chinese; Arabic and Noto Sans before', () => {
      for (const [, text, face] of SCRIPTS) expect(brandFontFamilies('Inter', text)).toEqual(['Inter', 'Noto Sans', 'Noto Sans Arabic', face === 'Noto Sans Arabic' ? 'Noto Sans CJK SC' : face]);
      expect(brandFontFamilies('Noto Sans', 'Harbour')).toEqual(['Noto Sans', 'Noto Sans Arabic', 'Noto Sans CJK SC']);
    });

    it.each(SCRIPTS)('draws every %s character from a font that has it, never as a missing-glyph box', async (_script, text, face) => {
      for (const family of BRAND_FONT_FAMILIES) {
        for (const char of new Set(text)) {
          const missing = await inkWithoutFallback(char, family, SIZE, true);
          const drawn = await inkDrawn(char, family);
          const where = `${char} (U+${char.codePointAt(0)!.toString(16).toUpperCase()}) in ${family}`;
          expect({ where, drawn: drawn !== null }).toEqual({ where, drawn: true });
          // the still never shows the brand font's missing-glyph box for it ...
          expect({ where, tofu: sameShape(drawn!, missing!) }).toEqual({ where, tofu: false });
          // ... which is what the brand font alone draws: it lacks the glyph, the fallback font has it
          expect({ where, brandFontHasIt: sameShape(missing!, (await inkWithoutFallback(char, face, SIZE, true))!) }).toEqual({ where, brandFontHasIt: false });
        }
      }
    });
  });
});
