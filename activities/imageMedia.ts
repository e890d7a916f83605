/**
 * sharp work of the image edit job beside the providers: reading the source at a workable size, the watermarked
 * preview and the thumbnail. No policy and no storage: buffers in, buffers out (the benchmark calls these directly).
 */
import sharp from 'sharp';
import { IMAGE_EDIT_SOURCE_MAX_SIDE } from '../domain/imageEdit';

/** The longest side a source is read at (domain/imageEdit.ts; the editor tells the user when a source is larger). */
export const SOURCE_MAX_SIDE = IMAGE_EDIT_SOURCE_MAX_SIDE;
/** Previews are for judging, not for use: at most this long side, JPEG. */
export const PREVIEW_MAX_SIDE = 1024;
export const PREVIEW_TEXT = 'PREVIEW';
export const THUMBNAIL_MAX_SIDE = 480;

export type ImageMime = 'image/jpeg' | 'image/png' | 'image/webp';

export function extensionForMime(mime: ImageMime): 'jpg' | 'png' | 'webp' {
  return mime === 'image/png' ? 'png' : mime === 'image/webp' ? 'webp' : 'jpg';
}

/**
 * A render or image file prepared for a provider: orientation applied, at most SOURCE_MAX_SIDE, JPEG (PNG when it
 * has transparency). Throws when sharp cannot read it.
 */
export async function readSourceImage(path: string): Promise<Buffer> {
  const image = sharp(path, { animated: false, sequentialRead: true }).autoOrient().resize({
    width: SOURCE_MAX_SIDE,
    height: SOURCE_MAX_SIDE,
    fit: 'inside',
    withoutEnlargement: true,
  });
  const meta = await sharp(path, { animated: false }).metadata();
  return meta.hasAlpha ? image.png().toBuffer() : image.jpeg({ quality: 95 }).toBuffer();
}

/** One tile of the watermark: the word twice, offset, so the rotated pattern reads as diagonal bands. */
function watermarkSvg(width: number, height: number): string {
  const fontSize = Math.max(18, Math.round(Math.min(width, height) / 9));
  const tileWidth = Math.round(fontSize * 6.2);
  const tileHeight = Math.round(fontSize * 3.4);
  const stroke = Math.max(1, fontSize / 28).toFixed(1);
  const text = (x: number, y: number) =>
    `<text x="${x}" y="${y}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="${fontSize}" font-weight="700" letter-spacing="2" fill="#ffffff" fill-opacity="0.5" stroke="#000000" stroke-opacity="0.35" stroke-width="${stroke}">${PREVIEW_TEXT}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs><pattern id="wm" width="${tileWidth}" height="${tileHeight}" patternUnits="userSpaceOnUse" patternTransform="rotate(-30)">` +
    `${text(Math.round(fontSize * 0.3), Math.round(fontSize * 1.2))}${text(Math.round(-fontSize * 2.8), Math.round(fontSize * 2.9))}${text(Math.round(fontSize * 3.4), Math.round(fontSize * 2.9))}` +
    `</pattern></defs><rect width="100%" height="100%" fill="url(#wm)"/></svg>`
  );
}

/** The preview shown before approval: at most PREVIEW_MAX_SIDE, with 'PREVIEW' tiled diagonally over all of it. */
export async function watermarkPreview(image: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const resized = await sharp(image)
    .autoOrient()
    .resize({ width: PREVIEW_MAX_SIDE, height: PREVIEW_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = resized.info;
  const { data, info } = await sharp(resized.data, { raw: { width, height, channels: resized.info.channels } })
    .composite([{ input: Buffer.from(watermarkSvg(width, height)) }])
    .jpeg({ quality: 82 })
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The library thumbnail of the approved image (webp, THUMBNAIL_MAX_SIDE), as uploads make them. */
export async function imageThumbnail(image: Buffer): Promise<Buffer> {
  return sharp(image)
    .autoOrient()
    .resize({ width: THUMBNAIL_MAX_SIDE, height: THUMBNAIL_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 78 })
    .toBuffer();
}
