/** sharp wrappers for brand logos: what format a file is by its content, and its PNG with transparency kept. No policy. */
import sharp from 'sharp';

export type LogoFormat = 'png' | 'jpeg' | 'webp' | 'svg';

/** The file's format read from its content (sharp's metadata), or null for anything sharp cannot read or is not one of the four. */
export async function detectLogoFormat(file: Buffer): Promise<LogoFormat | null> {
  try {
    const meta = await sharp(file, { failOn: 'error' }).metadata();
    return meta.format === 'png' || meta.format === 'jpeg' || meta.format === 'webp' || meta.format === 'svg' ? meta.format : null;
  } catch {
    return null;
  }
}

/**
 * The logo as a PNG that fits in `maxSide` x `maxSide`, alpha kept (an SVG is drawn at a density that makes its
 * longer side `maxSide`). Throws when the pixels cannot be decoded (a truncated file).
 */
export async function rasteriseLogo(file: Buffer, format: LogoFormat, maxSide: number): Promise<{ png: Buffer; width: number; height: number }> {
  let density: number | undefined;
  if (format === 'svg') {
    const meta = await sharp(file).metadata();
    const longer = Math.max(meta.width ?? maxSide, meta.height ?? maxSide);
    density = Math.min(2400, Math.max(1, (72 * maxSide) / longer));
  }
  const { data, info } = await sharp(file, { failOn: 'error', ...(density ? { density } : {}) })
    .rotate()
    .ensureAlpha()
    .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: format !== 'svg' })
    .png({ compressionLevel: 9 })
    .toBuffer({ resolveWithObject: true });
  return { png: data, width: info.width, height: info.height };
}
