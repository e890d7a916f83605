/**
 * Local image edit: a colour grade per prompt family, done with sharp. Deterministic (the snow speckle
 * uses a PRNG seeded by the image size), so the same render and prompt always give the same bytes.
 * A prompt that names no family gets a tasteful enhance: a little contrast, saturation and sharpening.
 */
import sharp, { type Blend, type Sharp } from 'sharp';
import type { GeneratedImage, ImageEditProvider, ImageEditRequest, ImageQuality } from '../types';
import { ProviderError } from '../errors';
import { FORMAT_ASPECT, coverTarget, encodeJpeg, imageSize } from '../media/images';
import { detectPromptFamilies, type PromptFamily } from '../../domain/promptFamilies';

export const LOCAL_IMAGE_EDIT_MODEL = 'local/sharp-grade';
const MAX_SIDE: Record<ImageQuality, number> = { hd: 1024, standard: 768 };
const JPEG_QUALITY: Record<ImageQuality, number> = { hd: 92, standard: 85 };

interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

type Grade = (input: RawImage) => Promise<RawImage>;

function load(input: RawImage): Sharp {
  return sharp(input.data, { raw: { width: input.width, height: input.height, channels: 3 } });
}

async function toRaw(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Blend an SVG the size of the image over it. */
async function overlay(input: RawImage, svg: string, blend: Blend): Promise<RawImage> {
  return toRaw(load(input).composite([{ input: Buffer.from(svg), blend }]));
}

function svg(input: RawImage, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${input.width}" height="${input.height}">${body}</svg>`;
}

function vignette(input: RawImage, strength: number): string {
  const edge = Math.round(255 * (1 - strength));
  return svg(
    input,
    `<defs><radialGradient id="v" cx="50%" cy="50%" r="75%"><stop offset="50%" stop-color="#fff"/><stop offset="100%" stop-color="rgb(${edge},${edge},${edge})"/></radialGradient></defs><rect width="100%" height="100%" fill="url(#v)"/>`,
  );
}

/** Mulberry32: a tiny seeded PRNG, so the speckle is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function snowSpeckle(input: RawImage): string {
  const random = prng(input.width * 7919 + input.height);
  const count = Math.round((input.width * input.height) / 700);
  const unit = Math.max(input.width, input.height) / 1024;
  const flakes: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const x = (random() * input.width).toFixed(1);
    const y = (random() * input.height).toFixed(1);
    const r = Math.max(1, (0.8 + random() * 2.2) * unit).toFixed(2);
    const o = (0.6 + random() * 0.4).toFixed(2);
    flakes.push(`<circle cx="${x}" cy="${y}" r="${r}" fill="#fff" fill-opacity="${o}"/>`);
  }
  return svg(input, flakes.join(''));
}

const GRADES: Record<PromptFamily | 'enhance', Grade> = {
  // darker, cooler, a blue cast and a vignette
  night: async (input) => {
    const graded = await toRaw(
      load(input)
        .modulate({ brightness: 0.5, saturation: 0.75 })
        .recomb([
          [0.7, 0.05, 0.0],
          [0.0, 0.82, 0.06],
          [0.04, 0.16, 1.2],
        ]),
    );
    return overlay(graded, vignette(graded, 0.45), 'multiply');
  },
  // an orange horizon under a purple sky, slightly dimmed
  dusk: async (input) => {
    const graded = await toRaw(
      load(input)
        .modulate({ brightness: 0.82, saturation: 1.1 })
        .recomb([
          [1.1, 0.05, 0.0],
          [0.0, 0.88, 0.0],
          [0.05, 0.0, 0.96],
        ]),
    );
    return overlay(
      graded,
      svg(
        graded,
        '<defs><linearGradient id="d" x1="0" y1="0" x2="0" y2="1"><stop offset="0%" stop-color="#5b2a86"/><stop offset="45%" stop-color="#c2457a"/><stop offset="75%" stop-color="#ff8a3d"/><stop offset="100%" stop-color="#ffb36b"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#d)" fill-opacity="0.75"/>',
      ),
      'soft-light',
    );
  },
  // desaturated, brighter, cool, with falling snow
  snow: async (input) => {
    const graded = await toRaw(
      load(input)
        .modulate({ brightness: 1.12, saturation: 0.35 })
        .linear(0.88, 34)
        .recomb([
          [0.96, 0.0, 0.04],
          [0.0, 1.0, 0.03],
          [0.0, 0.02, 1.06],
        ]),
    );
    return overlay(graded, snowSpeckle(graded), 'over');
  },
  warm: async (input) =>
    toRaw(
      load(input)
        .recomb([
          [1.12, 0.04, 0.0],
          [0.02, 1.02, 0.0],
          [0.0, 0.0, 0.82],
        ])
        .modulate({ brightness: 1.03, saturation: 1.08 }),
    ),
  // lifted exposure
  bright: async (input) => toRaw(load(input).linear(1.08, 16).modulate({ brightness: 1.08, saturation: 1.05 })),
  // muted and hazy
  fog: async (input) => {
    const graded = await toRaw(load(input).modulate({ saturation: 0.55 }).linear(0.72, 48));
    return overlay(
      graded,
      svg(
        graded,
        '<defs><linearGradient id="f" x1="0" y1="0" x2="0" y2="1"><stop offset="0%" stop-color="#e8ecef" stop-opacity="0.15"/><stop offset="100%" stop-color="#e8ecef" stop-opacity="0.4"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#f)"/>',
      ),
      'over',
    );
  },
  enhance: async (input) => toRaw(load(input).linear(1.08, -10).modulate({ saturation: 1.15 }).sharpen({ sigma: 1 })),
};

export class LocalImageEditProvider implements ImageEditProvider {
  async edit(request: ImageEditRequest): Promise<GeneratedImage> {
    const prompt = request.prompt.trim();
    if (!prompt) throw new ProviderError('INPUT', 'The edit prompt is empty');
    const format = request.format ?? 'square';
    const quality = request.quality ?? 'hd';
    const source = await imageSize(request.image);
    const aspect = format === 'original' ? source.width / source.height : FORMAT_ASPECT[format];
    const size = coverTarget(source, aspect, request.maxSide ?? MAX_SIDE[quality]);

    let image: RawImage;
    try {
      image = await toRaw(sharp(request.image).rotate().resize(size.width, size.height, { fit: 'cover', position: 'centre', kernel: 'lanczos3' }).toColourspace('srgb'));
      const families = detectPromptFamilies(prompt);
      const applied: Array<PromptFamily | 'enhance'> = families.length > 0 ? families : ['enhance'];
      for (const grade of applied) image = await GRADES[grade](image);
      return await encodeJpeg(load(image), JPEG_QUALITY[quality], LOCAL_IMAGE_EDIT_MODEL, `local grade: ${applied.join(', ')}`);
    } catch (cause) {
      if (cause instanceof ProviderError) throw cause;
      throw new ProviderError('MEDIA', `Local image edit failed: ${(cause as Error).message}`, { cause });
    }
  }
}
