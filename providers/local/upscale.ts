/** Local upscale: lanczos3 resampling by an integer factor, keeping the input's encoding. */
import sharp from 'sharp';
import type { GeneratedImage, UpscaleProvider, UpscaleRequest } from '../types';
import { ProviderError } from '../errors';
import { imageSize } from '../media/images';

export const LOCAL_UPSCALE_MODEL = 'local/lanczos3';
export const MAX_UPSCALE_SIDE = 8192;

export function checkUpscaleScale(scale: number): number {
  if (!Number.isInteger(scale) || scale < 1 || scale > 4) throw new ProviderError('INPUT', `Upscale factor must be an integer from 1 to 4, got ${scale}`);
  return scale;
}

export class LocalUpscaleProvider implements UpscaleProvider {
  async upscale(request: UpscaleRequest): Promise<GeneratedImage> {
    const scale = checkUpscaleScale(request.scale ?? 2);
    const source = await imageSize(request.image);
    const width = source.width * scale;
    const height = source.height * scale;
    if (Math.max(width, height) > MAX_UPSCALE_SIDE) {
      throw new ProviderError('INPUT', `Upscaled image would be ${width}x${height}; the limit is ${MAX_UPSCALE_SIDE} px per side`);
    }
    try {
      const resized = sharp(request.image).rotate().resize(width, height, { kernel: 'lanczos3' });
      const encoded =
        source.mime === 'image/png' ? resized.png() : source.mime === 'image/webp' ? resized.webp({ quality: 92 }) : resized.jpeg({ quality: 92 });
      const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
      return { image: data, mime: source.mime, width: info.width, height: info.height, model: LOCAL_UPSCALE_MODEL };
    } catch (cause) {
      throw new ProviderError('MEDIA', `Local upscale failed: ${(cause as Error).message}`, { cause });
    }
  }
}
