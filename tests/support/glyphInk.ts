/**
 * Telling a drawn glyph from a font's missing-glyph box (tofu): the drawn part of a text image as a mask, compared by
 * shape. Used by the text still tests (every brand font) and the plain captions' test.
 */
import sharp from 'sharp';

/** The drawn part of an image: its size and a 1/0 mask of its pixels. */
export interface Ink {
  width: number;
  height: number;
  mask: Uint8Array;
}

/** The drawn part of a transparent RGBA image: its alpha above half, cropped to its bounding box (null: nothing drawn). */
export async function inkOf(png: Buffer): Promise<Ink | null> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let [x0, y0, x1, y1] = [info.width, info.height, -1, -1];
  const on = (x: number, y: number) => data[(y * info.width + x) * info.channels + 3] > 128;
  for (let y = 0; y < info.height; y += 1)
    for (let x = 0; x < info.width; x += 1)
      if (on(x, y)) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  if (x1 < 0) return null;
  const width = x1 - x0 + 1;
  const height = y1 - y0 + 1;
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y += 1) for (let x = 0; x < width; x += 1) mask[y * width + x] = on(x0 + x, y0 + y) ? 1 : 0;
  return { width, height, mask };
}

/** Whether two inks are the same shape: sizes within a pixel and nine in ten of their pixels alike. */
export function sameShape(a: Ink, b: Ink): boolean {
  if (Math.abs(a.width - b.width) > 1 || Math.abs(a.height - b.height) > 1) return false;
  const [w, h] = [Math.min(a.width, b.width), Math.min(a.height, b.height)];
  let alike = 0;
  for (let y = 0; y < h; y += 1) for (let x = 0; x < w; x += 1) if (a.mask[y * a.width + x] === b.mask[y * b.width + x]) alike += 1;
  return alike / (w * h) >= 0.9;
}

/** `char` in `family` alone at `sizePx`, fallback switched off: Pango's missing-glyph box where the family lacks it. */
export async function inkWithoutFallback(char: string, family: string, sizePx: number, bold: boolean): Promise<Ink | null> {
  const text = `<span fallback="false" foreground="#FFFFFF"${bold ? ' weight="bold"' : ''} size="${sizePx * 1024}">${char}</span>`;
  return inkOf(await sharp({ text: { text, font: `${family},`, dpi: 72, rgba: true } }).png().toBuffer());
}
