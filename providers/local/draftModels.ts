/**
 * Enhance Renders' models done offline with sharp, deterministic (same input, same bytes):
 * - edit_render: the prompt-driven grade of the image edit (providers/local/imageEdit.ts) at the draft's own size;
 *   references, when attached, lend their colour statistics at half strength;
 * - style_transfer and style_sync: a statistical colour transfer (Reinhard: each RGB channel's mean and standard
 *   deviation moved to the references'), with sharp's own stats() and a per-channel linear();
 * - basic_upscale (ESRGAN's stand-in): a lanczos3 resample by the factor;
 * - finish_upscale (creative upscale): the resample, then local contrast (CLAHE) and an unsharp mask;
 * - render_enhance: a photoreal finish (contrast, a touch of warmth and vibrance, local contrast, sharpening).
 */
import sharp, { type Sharp } from 'sharp';
import type { DraftModelProvider, DraftModelRequest, GeneratedImage } from '../types';
import { ProviderError } from '../errors';
import { imageSize } from '../media/images';
import { LocalImageEditProvider } from './imageEdit';
import { MAX_UPSCALE_SIDE, checkUpscaleScale } from './upscale';

export const LOCAL_DRAFT_MODEL = 'local/sharp-draft';
/** Longest side of edits and colour transfers (drafts arrive at up to 1920 px; an upscaled version may be larger). */
const EDIT_MAX_SIDE = 4096;
const JPEG_QUALITY = 92;

interface ChannelStats {
  mean: [number, number, number];
  stdev: [number, number, number];
}

/** Mean and standard deviation of R, G and B (alpha dropped), from a small copy: statistics need no detail. */
export async function channelStats(image: Buffer): Promise<ChannelStats> {
  const small = await sharp(image).rotate().resize(512, 512, { fit: 'inside', withoutEnlargement: true }).removeAlpha().toColourspace('srgb').toBuffer();
  const stats = await sharp(small).stats();
  const [r, g, b] = stats.channels;
  return { mean: [r.mean, g.mean, b.mean], stdev: [r.stdev, g.stdev, b.stdev] };
}

function averageStats(all: ChannelStats[]): ChannelStats {
  const avg = (pick: (s: ChannelStats) => [number, number, number]): [number, number, number] => [0, 1, 2].map((i) => all.reduce((sum, s) => sum + pick(s)[i], 0) / all.length) as [number, number, number];
  return { mean: avg((s) => s.mean), stdev: avg((s) => s.stdev) };
}

/**
 * out = (x - mean_t) * (sd_r / sd_t) + mean_r per channel, mixed with the original by `strength` (0..1): one linear()
 * with per-channel factors. The gain is bounded so a flat target (tiny deviation) is not blown up.
 */
export function colourTransferPipeline(image: Buffer, target: ChannelStats, reference: ChannelStats, strength: number): Sharp {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const gain = Math.min(3, Math.max(1 / 3, reference.stdev[i] / Math.max(1, target.stdev[i])));
    const offset = reference.mean[i] - target.mean[i] * gain;
    a.push(1 + (gain - 1) * strength);
    b.push(offset * strength);
  }
  return sharp(image).rotate().removeAlpha().toColourspace('srgb').linear(a, b);
}

async function encode(pipeline: Sharp, model: string, description: string, keepMime?: GeneratedImage['mime']): Promise<GeneratedImage> {
  const encoded = keepMime === 'image/png' ? pipeline.png() : keepMime === 'image/webp' ? pipeline.webp({ quality: JPEG_QUALITY }) : pipeline.jpeg({ quality: JPEG_QUALITY });
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
  const mime = keepMime === 'image/png' || keepMime === 'image/webp' ? keepMime : 'image/jpeg';
  return { image: data, mime, width: info.width, height: info.height, model, description };
}

async function upscaled(image: Buffer, scale: number): Promise<{ pipeline: Sharp; width: number; height: number; mime: GeneratedImage['mime'] }> {
  const factor = checkUpscaleScale(scale);
  const source = await imageSize(image);
  const width = source.width * factor;
  const height = source.height * factor;
  if (Math.max(width, height) > MAX_UPSCALE_SIDE) {
    throw new ProviderError('INPUT', `Upscaled image would be ${width}x${height}; the limit is ${MAX_UPSCALE_SIDE} px per side`);
  }
  return { pipeline: sharp(image).rotate().resize(width, height, { kernel: 'lanczos3' }), width, height, mime: source.mime };
}

export class LocalDraftModelProvider implements DraftModelProvider {
  private readonly edits = new LocalImageEditProvider();

  async run(request: DraftModelRequest): Promise<GeneratedImage> {
    await imageSize(request.image); // unreadable input: ProviderError INPUT
    try {
      return await this.runMode(request);
    } catch (cause) {
      if (cause instanceof ProviderError) throw cause;
      throw new ProviderError('MEDIA', `Local ${request.mode} failed: ${(cause as Error).message}`, { cause });
    }
  }

  private async runMode(request: DraftModelRequest): Promise<GeneratedImage> {
    const model = `${LOCAL_DRAFT_MODEL}:${request.mode}`;
    switch (request.mode) {
      case 'edit_render': {
        const prompt = request.prompt?.trim() ?? '';
        if (!prompt) throw new ProviderError('INPUT', 'The edit prompt is empty');
        const edited = await this.edits.edit({ image: request.image, prompt, format: 'original', quality: 'hd', maxSide: EDIT_MAX_SIDE });
        if (request.references.length === 0) return { ...edited, model };
        const reference = averageStats(await Promise.all(request.references.map(channelStats)));
        return encode(colourTransferPipeline(edited.image, await channelStats(edited.image), reference, 0.5), model, `${edited.description ?? 'local grade'}; look of ${request.references.length} reference(s)`);
      }
      case 'style_transfer':
      case 'style_sync': {
        if (request.references.length === 0) throw new ProviderError('INPUT', 'A style transfer needs at least one reference image');
        const reference = averageStats(await Promise.all(request.references.map(channelStats)));
        const strength = request.mode === 'style_sync' ? 0.85 : 1;
        return encode(colourTransferPipeline(request.image, await channelStats(request.image), reference, strength), model, `colour transfer from ${request.references.length} reference(s)`);
      }
      case 'basic_upscale': {
        const { pipeline, mime } = await upscaled(request.image, request.scale ?? 2);
        return encode(pipeline, model, `lanczos3 x${request.scale ?? 2}`, mime);
      }
      case 'finish_upscale': {
        const { pipeline, width, height } = await upscaled(request.image, request.scale ?? 2);
        const tile = (side: number) => Math.max(8, Math.round(side / 8));
        const detailed = pipeline.clahe({ width: tile(width), height: tile(height), maxSlope: 2 }).sharpen({ sigma: 1.2, m1: 0.6, m2: 2.5 });
        return encode(detailed, model, `lanczos3 x${request.scale ?? 2}, local contrast and sharpening`);
      }
      case 'render_enhance': {
        const meta = await imageSize(request.image);
        const tile = (side: number) => Math.max(8, Math.round(side / 6));
        const finished = sharp(request.image)
          .rotate()
          .removeAlpha()
          .toColourspace('srgb')
          .linear(1.06, -6)
          .recomb([
            [1.03, 0.02, 0.0],
            [0.0, 1.01, 0.0],
            [0.0, 0.0, 0.96],
          ])
          .modulate({ saturation: 1.1 })
          .clahe({ width: tile(meta.width), height: tile(meta.height), maxSlope: 2 })
          .sharpen({ sigma: 0.9 });
        return encode(finished, model, 'photoreal finish');
      }
      default: {
        const unknown: never = request.mode;
        throw new ProviderError('INPUT', `Unknown draft mode ${String(unknown)}`);
      }
    }
  }
}
