/** sharp wrappers shared by the providers: framing to an aspect, size bounds, output encoding. No policy. */
import sharp, { type Metadata, type Sharp } from 'sharp';
import type { ClipAspectRatio, GeneratedImage, ImageFormat } from '../types';
import { ProviderError } from '../errors';

export const FORMAT_ASPECT: Record<Exclude<ImageFormat, 'original'>, number> = { square: 1, landscape: 16 / 9, portrait: 9 / 16 };

export function aspectValue(aspect: ClipAspectRatio): number {
  const [w, h] = aspect.split(':').map(Number);
  return w / h;
}

export interface ImageSize {
  width: number;
  height: number;
}

export async function imageSize(image: Buffer): Promise<ImageSize & { mime: GeneratedImage['mime'] }> {
  let meta: Metadata;
  try {
    meta = await sharp(image).metadata();
  } catch (cause) {
    throw new ProviderError('INPUT', 'The image could not be read', { cause });
  }
  if (!meta.width || !meta.height) throw new ProviderError('INPUT', 'The image has no dimensions');
  const rotated = (meta.orientation ?? 1) >= 5;
  const mime = meta.format === 'png' ? 'image/png' : meta.format === 'webp' ? 'image/webp' : 'image/jpeg';
  return rotated ? { width: meta.height, height: meta.width, mime } : { width: meta.width, height: meta.height, mime };
}

/**
 * The largest size of the given aspect that fits `maxSide` and, unless `enlarge`, the source's own
 * cover crop (never invent pixels). Even numbers, as video encoders want them.
 */
export function coverTarget(source: ImageSize, aspect: number, maxSide: number, enlarge = false): ImageSize {
  let width = aspect >= 1 ? maxSide : maxSide * aspect;
  let height = aspect >= 1 ? maxSide / aspect : maxSide;
  if (!enlarge) {
    const cropWidth = Math.min(source.width, source.height * aspect);
    if (cropWidth < width) {
      width = cropWidth;
      height = cropWidth / aspect;
    }
  }
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);
  return { width: even(width), height: even(height) };
}

/** Cover-crops (centre) and resizes with lanczos3, honouring EXIF orientation. */
export function coverCrop(image: Buffer, size: ImageSize): Sharp {
  return sharp(image).rotate().resize(size.width, size.height, { fit: 'cover', position: 'centre', kernel: 'lanczos3' });
}

/** A still prepared for a clip: cover-cropped to the aspect at exactly `size`, as JPEG. */
export async function prepareStillForAspect(image: Buffer, size: ImageSize): Promise<Buffer> {
  return coverCrop(image, size).removeAlpha().jpeg({ quality: 95 }).toBuffer();
}

export async function encodeJpeg(pipeline: Sharp, quality: number, model: string, description?: string): Promise<GeneratedImage> {
  const { data, info } = await pipeline.jpeg({ quality }).toBuffer({ resolveWithObject: true });
  return { image: data, mime: 'image/jpeg', width: info.width, height: info.height, model, description };
}
