/**
 * The framing the editor starts on. The spec's request default is Square (000 section 7, `format default square`),
 * which a request that names no format still gets; the screen names one, and starts on the framing that keeps the
 * whole picture: a fixed format when the render already has its shape (Square for a square render), otherwise "Keep
 * original framing". A 6000 × 4000 render in Square would lose a third of its width before the user chose anything.
 */
import { imageEditOutcome, IMAGE_EDIT_DEFAULTS, type ImageEditFormat } from '../../../../domain/imageEdit';

const FIXED_FORMATS: readonly ImageEditFormat[] = ['square', 'landscape', 'portrait'];

export function initialFormat(width: unknown, height: unknown): ImageEditFormat {
  if (typeof width !== 'number' || typeof height !== 'number' || !(width > 0) || !(height > 0)) return 'original';
  const source = { width, height };
  const keepsAll = FIXED_FORMATS.find((format) => imageEditOutcome(source, format, IMAGE_EDIT_DEFAULTS.quality, IMAGE_EDIT_DEFAULTS.upscaleScale).crop === null);
  return keepsAll ?? 'original';
}
