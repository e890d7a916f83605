/**
 * Enhance Renders' models done offline with sharp, deterministic (same input, same bytes):
 * - edit_render: the prompt-driven grade of the image edit (providers/local/imageEdit.ts) at the draft's own size;
 *   references, when attached, lend their colour statistics at half strength;
 * - style_transfer and style_sync: a statistical colour transfer (Reinhard: each RGB channel's mean and standard
 *   deviation moved to the references'), with sharp's own stats() and a per-channel linear();
 * - basic_upscale (ESRGAN's stand-in): a lanczos3 resample by the factor;
 * - finish_upscale (creative upscale): local contrast (a wide unsharp mask) and a fine one, then the resample;
 * - render_enhance: a photoreal finish (contrast, a touch of warmth and vibrance, local contrast, sharpening).
 *
 * Bounded work: every mode works on a copy whose longest side is at most `workMaxSide` (DRAFT_MODEL_WORK_MAX_SIDE,
 * 2048 px) and resamples the result (lanczos3) to the size the effect promises: the source's own size for edits,
 * transfers and the finish, the source's size times the factor for upscales (basic_upscale, a resample alone, works
 * at full size). Local contrast is a wide unsharp mask (a separable blur: time in proportion to the pixels), not
 * CLAHE, whose cost grows with pixels times tile and took minutes on a 4096 px image. So any supported input finishes
 * in seconds, inside the breaker's 30 s call limit, whatever its resolution.
 */
import sharp, { type Sharp } from 'sharp';
import type { DraftModelProvider, DraftModelRequest, GeneratedImage } from '../types';
import { ProviderError } from '../errors';
import { imageSize } from '../media/images';
import { LocalImageEditProvider } from './imageEdit';
import { MAX_UPSCALE_SIDE, checkUpscaleScale } from './upscale';

export const LOCAL_DRAFT_MODEL = 'local/sharp-draft';
/** The longest side a local draft model works at; larger sources are worked on as a smaller copy (see above). */
export const DRAFT_MODEL_WORK_MAX_SIDE = 2048;
const JPEG_QUALITY = 92;

/** sharp's messages for input it cannot decode past the header: the input's fault, not the model's. */
const UNREADABLE_INPUT = /corrupt|premature end|invalid|truncated|unsupported image format|bad seek|not a known file format|VipsJpeg|pngload|webpload|libpng read error/i;

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

/** The output size an upscale promises: the source's sides times the factor, refused past the upscale limit. */
function upscaledSize(source: { width: number; height: number }, scale: number): { width: number; height: number } {
  const factor = checkUpscaleScale(scale);
  const width = source.width * factor;
  const height = source.height * factor;
  if (Math.max(width, height) > MAX_UPSCALE_SIDE) {
    throw new ProviderError('INPUT', `Upscaled image would be ${width}x${height}; the limit is ${MAX_UPSCALE_SIDE} px per side`);
  }
  return { width, height };
}

/** The working size: the source's aspect with its longest side at most `maxSide` (never enlarged). */
export function workingSize(source: { width: number; height: number }, maxSide: number): { width: number; height: number } {
  const ratio = Math.min(1, maxSide / Math.max(source.width, source.height));
  return { width: Math.max(1, Math.round(source.width * ratio)), height: Math.max(1, Math.round(source.height * ratio)) };
}

/** Local contrast ("clarity"): an unsharp mask of wide radius, its lift and its darkening capped. */
function localContrast(pipeline: Sharp): Sharp {
  return pipeline.sharpen({ sigma: 8, m1: 0.6, m2: 0.6, x1: 2, y2: 14, y3: 20 });
}

export interface LocalDraftModelOptions {
  /** Longest side the models work at (px); DRAFT_MODEL_WORK_MAX_SIDE unless given. */
  workMaxSide?: number;
}

export class LocalDraftModelProvider implements DraftModelProvider {
  private readonly edits = new LocalImageEditProvider();
  private readonly workMaxSide: number;

  constructor(options: LocalDraftModelOptions = {}) {
    this.workMaxSide = options.workMaxSide ?? DRAFT_MODEL_WORK_MAX_SIDE;
  }

  async run(request: DraftModelRequest): Promise<GeneratedImage> {
    const source = await imageSize(request.image); // unreadable input: ProviderError INPUT
    try {
      return await this.runMode(request, source);
    } catch (cause) {
      if (cause instanceof ProviderError) throw cause;
      const message = (cause as Error).message;
      // a file whose header reads but whose pixels do not: the input's fault (the breaker does not count it)
      if (UNREADABLE_INPUT.test(message)) throw new ProviderError('INPUT', `The image could not be read: ${message.split('\n')[0]}`, { cause });
      throw new ProviderError('MEDIA', `Local ${request.mode} failed: ${message}`, { cause });
    }
  }

  /** The source as raw sRGB pixels at the working size, ready for the effect. */
  private async working(image: Buffer, source: { width: number; height: number }): Promise<{ pipeline: Sharp; width: number; height: number; reduced: boolean }> {
    const size = workingSize(source, this.workMaxSide);
    const reduced = size.width !== source.width || size.height !== source.height;
    const base = sharp(image).rotate().removeAlpha().toColourspace('srgb');
    const { data, info } = await (reduced ? base.resize(size.width, size.height, { kernel: 'lanczos3' }) : base).raw().toBuffer({ resolveWithObject: true });
    return { pipeline: sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } }), width: info.width, height: info.height, reduced };
  }

  /** The effect's result resampled to the promised output size (nothing happens when it already is). */
  private async finish(pipeline: Sharp, size: { width: number; height: number }): Promise<Sharp> {
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    const result = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
    return info.width === size.width && info.height === size.height ? result : result.resize(size.width, size.height, { fit: 'fill', kernel: 'lanczos3' });
  }

  private workNote(reduced: boolean): string {
    return reduced ? `; worked at ${this.workMaxSide} px on the long side, then resampled` : '';
  }

  private async runMode(request: DraftModelRequest, source: { width: number; height: number; mime: GeneratedImage['mime'] }): Promise<GeneratedImage> {
    const model = `${LOCAL_DRAFT_MODEL}:${request.mode}`;
    switch (request.mode) {
      case 'edit_render': {
        const prompt = request.prompt?.trim() ?? '';
        if (!prompt) throw new ProviderError('INPUT', 'The edit prompt is empty');
        const work = workingSize(source, this.workMaxSide);
        const edited = await this.edits.edit({ image: request.image, prompt, format: 'original', quality: 'hd', maxSide: Math.max(work.width, work.height) });
        const graded =
          request.references.length === 0
            ? sharp(edited.image)
            : colourTransferPipeline(edited.image, await channelStats(edited.image), averageStats(await Promise.all(request.references.map(channelStats))), 0.5);
        const looks = request.references.length === 0 ? '' : `; look of ${request.references.length} reference(s)`;
        const reduced = work.width !== source.width || work.height !== source.height;
        return encode(await this.finish(graded, source), model, `${edited.description ?? 'local grade'}${looks}${this.workNote(reduced)}`);
      }
      case 'style_transfer':
      case 'style_sync': {
        if (request.references.length === 0) throw new ProviderError('INPUT', 'A style transfer needs at least one reference image');
        const reference = averageStats(await Promise.all(request.references.map(channelStats)));
        const strength = request.mode === 'style_sync' ? 0.85 : 1;
        const work = await this.working(request.image, source);
        const transferred = colourTransferPipeline(await work.pipeline.png({ compressionLevel: 0 }).toBuffer(), await channelStats(request.image), reference, strength);
        return encode(await this.finish(transferred, source), model, `colour transfer from ${request.references.length} reference(s)${this.workNote(work.reduced)}`);
      }
      case 'basic_upscale': {
        const size = upscaledSize(source, request.scale ?? 2);
        const pipeline = sharp(request.image).rotate().resize(size.width, size.height, { kernel: 'lanczos3' });
        return encode(pipeline, model, `lanczos3 x${request.scale ?? 2}`, source.mime);
      }
      case 'finish_upscale': {
        const size = upscaledSize(source, request.scale ?? 2);
        const work = await this.working(request.image, source);
        const detailed = localContrast(work.pipeline).sharpen({ sigma: 1.2, m1: 0.6, m2: 2.5 });
        return encode(await this.finish(detailed, size), model, `local contrast and sharpening, lanczos3 x${request.scale ?? 2}${this.workNote(work.reduced)}`);
      }
      case 'render_enhance': {
        const work = await this.working(request.image, source);
        const graded = work.pipeline
          .linear(1.06, -6)
          .recomb([
            [1.03, 0.02, 0.0],
            [0.0, 1.01, 0.0],
            [0.0, 0.0, 0.96],
          ])
          .modulate({ saturation: 1.1 });
        const finished = localContrast(graded).sharpen({ sigma: 0.9 });
        return encode(await this.finish(finished, source), model, `photoreal finish${this.workNote(work.reduced)}`);
      }
      default: {
        const unknown: never = request.mode;
        throw new ProviderError('INPUT', `Unknown draft mode ${String(unknown)}`);
      }
    }
  }
}
