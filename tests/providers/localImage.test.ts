import sharp from 'sharp';
import { LocalImageEditProvider } from '../../providers/local/imageEdit';
import { LocalUpscaleProvider } from '../../providers/local/upscale';
import { RuleBasedPromptRefiner } from '../../providers/local/promptRefiner';
import { RuleBasedChatProvider } from '../../providers/local/chat';
import { ProviderError } from '../../providers/errors';
import { houseStill } from '../support/stills';

/** A small stand-in for an architectural render: sky gradient, a building with windows and a door, a lawn. */
async function render(width = 800, height = 450, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const image = houseStill(width, height);
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 95 }).toBuffer();
}

interface PixelStats {
  r: number;
  g: number;
  b: number;
  luma: number;
  chroma: number;
  spread: number;
  nearWhiteInLawn: number;
}

async function pixelStats(image: Buffer): Promise<PixelStats> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let r = 0, g = 0, b = 0, chroma = 0, luma2 = 0, nearWhiteInLawn = 0;
  const n = info.width * info.height;
  for (let i = 0; i < n; i += 1) {
    const [pr, pg, pb] = [data[i * 3], data[i * 3 + 1], data[i * 3 + 2]];
    r += pr; g += pg; b += pb;
    const y = 0.299 * pr + 0.587 * pg + 0.114 * pb;
    luma2 += y * y;
    chroma += Math.max(pr, pg, pb) - Math.min(pr, pg, pb);
    const row = Math.floor(i / info.width);
    if (row > info.height * 0.75 && pr > 225 && pg > 225 && pb > 225) nearWhiteInLawn += 1;
  }
  const luma = (0.299 * r + 0.587 * g + 0.114 * b) / n;
  return { r: r / n, g: g / n, b: b / n, luma, chroma: chroma / n, spread: Math.sqrt(luma2 / n - luma * luma), nearWhiteInLawn };
}

describe('LocalImageEditProvider', () => {
  const provider = new LocalImageEditProvider();
  let source: Buffer;
  let original: PixelStats;
  const results = new Map<string, PixelStats>();
  const prompts: Record<string, string> = {
    enhance: 'Make it look more polished',
    night: 'Show the house at night',
    dusk: 'Dusk with a sunset sky',
    snow: 'Covered in snow in winter',
    warm: 'Give it a warm, cozy feel',
    bright: 'A bright sunny summer day',
    fog: 'Foggy, overcast morning',
  };

  beforeAll(async () => {
    source = await render();
    // the same framing without any grade, to compare against
    original = await pixelStats(await sharp(source).resize(768, 432).jpeg({ quality: 92 }).toBuffer());
    for (const [family, prompt] of Object.entries(prompts)) {
      const edited = await provider.edit({ image: source, prompt, format: 'landscape', quality: 'standard' });
      expect(edited).toMatchObject({ mime: 'image/jpeg', width: 768, height: 432, model: 'local/sharp-grade' });
      results.set(family, await pixelStats(edited.image));
    }
  });

  it('gives every prompt family a visibly different image', () => {
    const families = [...results.keys()];
    for (const a of families) {
      for (const b of families) {
        if (a >= b) continue;
        const x = results.get(a)!;
        const y = results.get(b)!;
        const distance = Math.hypot(x.r - y.r, x.g - y.g, x.b - y.b, x.chroma - y.chroma, x.spread - y.spread);
        expect({ pair: `${a}/${b}`, distinct: distance > 8 }).toEqual({ pair: `${a}/${b}`, distinct: true });
      }
    }
  });

  it('night is darker with a blue cast', () => {
    const night = results.get('night')!;
    expect(night.luma).toBeLessThan(original.luma * 0.6);
    expect(night.b / night.r).toBeGreaterThan((original.b / original.r) * 1.3);
  });

  it('dusk is dimmer and shifted towards orange and purple', () => {
    const dusk = results.get('dusk')!;
    expect(dusk.luma).toBeLessThan(original.luma);
    expect(dusk.r / dusk.g).toBeGreaterThan((original.r / original.g) * 1.1);
  });

  it('snow is desaturated, brighter and speckled white over the lawn', () => {
    const snow = results.get('snow')!;
    expect(snow.chroma).toBeLessThan(original.chroma * 0.6);
    expect(snow.luma).toBeGreaterThan(original.luma + 10);
    expect(snow.nearWhiteInLawn).toBeGreaterThan(50);
    expect(original.nearWhiteInLawn).toBe(0);
  });

  it('warm raises red against blue', () => {
    const warm = results.get('warm')!;
    expect(warm.r / warm.b).toBeGreaterThan((original.r / original.b) * 1.2);
  });

  it('bright lifts the exposure', () => {
    expect(results.get('bright')!.luma).toBeGreaterThan(original.luma + 12);
  });

  it('fog mutes colour and contrast', () => {
    const fog = results.get('fog')!;
    expect(fog.chroma).toBeLessThan(original.chroma * 0.7);
    expect(fog.spread).toBeLessThan(original.spread * 0.8);
  });

  it('enhances a prompt that names no family: more saturated, same framing', () => {
    expect(results.get('enhance')!.chroma).toBeGreaterThan(original.chroma * 1.05);
  });

  it('is deterministic: the same render and prompt give the same bytes', async () => {
    const a = await provider.edit({ image: source, prompt: 'a snowy night', format: 'square' });
    const b = await provider.edit({ image: source, prompt: 'a snowy night', format: 'square' });
    expect(a.image.equals(b.image)).toBe(true);
    expect(a.description).toBe('local grade: snow, night');
  });

  it('frames to the format (square by default) without enlarging the source', async () => {
    const big = await render(1600, 900);
    await expect(provider.edit({ image: big, prompt: 'night' })).resolves.toMatchObject({ width: 900, height: 900 });
    await expect(provider.edit({ image: big, prompt: 'night', format: 'original', quality: 'hd' })).resolves.toMatchObject({ width: 1024, height: 576 });
    await expect(provider.edit({ image: big, prompt: 'night', format: 'portrait', quality: 'hd' })).resolves.toMatchObject({ width: 506, height: 900 });
    await expect(provider.edit({ image: source, prompt: 'night', format: 'square', quality: 'hd' })).resolves.toMatchObject({ width: 450, height: 450 });
  });

  it('refuses an empty prompt and an unreadable image', async () => {
    await expect(provider.edit({ image: source, prompt: '   ' })).rejects.toMatchObject({ code: 'INPUT' });
    await expect(provider.edit({ image: Buffer.from('not an image'), prompt: 'night' })).rejects.toBeInstanceOf(ProviderError);
  });
});

describe('LocalUpscaleProvider', () => {
  const provider = new LocalUpscaleProvider();

  it('doubles both dimensions by default and keeps the picture', async () => {
    const source = await render(400, 225);
    const up = await provider.upscale({ image: source });
    expect(up).toMatchObject({ width: 800, height: 450, mime: 'image/jpeg', model: 'local/lanczos3' });
    const meta = await sharp(up.image).metadata();
    expect([meta.width, meta.height]).toEqual([800, 450]);
    const back = await pixelStats(await sharp(up.image).resize(400, 225).toBuffer());
    const before = await pixelStats(source);
    expect(Math.abs(back.luma - before.luma)).toBeLessThan(2);
  });

  it('takes other integer factors and keeps PNG as PNG', async () => {
    const up = await provider.upscale({ image: await render(200, 100, 'png'), scale: 3 });
    expect(up).toMatchObject({ width: 600, height: 300, mime: 'image/png' });
    expect((await sharp(up.image).metadata()).format).toBe('png');
  });

  it('refuses factors that are not integers from 1 to 4, and outputs over 8192 px', async () => {
    const source = await render(200, 100);
    await expect(provider.upscale({ image: source, scale: 1.5 })).rejects.toMatchObject({ code: 'INPUT' });
    await expect(provider.upscale({ image: source, scale: 0 })).rejects.toMatchObject({ code: 'INPUT' });
    await expect(provider.upscale({ image: await render(3000, 100), scale: 3 })).rejects.toThrow('8192');
  });
});

describe('RuleBasedPromptRefiner', () => {
  const refiner = new RuleBasedPromptRefiner();

  it('keeps the original, adds what the families ask for and what must not change', async () => {
    const result = await refiner.refine({ prompt: '  make it a snowy   night ', imageDescription: 'a two-storey villa with a lawn' });
    expect(result.originalPrompt).toBe('  make it a snowy   night ');
    expect(result.refinementMethod).toBe('rule-based');
    expect(result.refinedPrompt).toMatch(/^Make it a snowy night\. Scene: A two-storey villa with a lawn\. /);
    expect(result.refinedPrompt).toMatch(/fresh snow/i);
    expect(result.refinedPrompt).toContain('night scene');
    expect(result.refinedPrompt).toContain("Keep the building's geometry");
  });

  it('refines a prompt with no family into a neutral enhancement', async () => {
    const result = await refiner.refine({ prompt: 'make it nicer' });
    expect(result.refinedPrompt).toContain('Balanced exposure');
    expect(result.refinedPrompt).not.toContain('night');
  });

  it('refuses an empty prompt', async () => {
    await expect(refiner.refine({ prompt: ' ' })).rejects.toMatchObject({ code: 'INPUT' });
  });
});

describe('RuleBasedChatProvider', () => {
  const chat = new RuleBasedChatProvider();

  it('asks for what is missing, one thing at a time', async () => {
    const reply = await chat.reply({ message: 'Hi, I want a video', history: [], selectedClipCount: 2 });
    expect(reply.analysis).toEqual({ ready_to_create: false, confidence_score: 0.25, missing_info: ['aesthetic', 'energy_level', 'copy_style'] });
    expect(reply.reply).toContain('What look are you after');
  });

  it('collects preferences across the conversation and is ready once all are known', async () => {
    const reply = await chat.reply({
      message: 'Keep the captions professional',
      history: [{ role: 'user', content: 'Something luxury and calm' }, { role: 'assistant', content: '...' }],
      selectedClipCount: 3,
      aspectRatio: '9:16',
    });
    expect(reply.preferences).toEqual({ aesthetic: 'luxury', energy_level: 'calm', copy_style: 'professional', generated_texts: [] });
    expect(reply.analysis).toEqual({ ready_to_create: true, confidence_score: 1, missing_info: [] });
    expect(reply.reply).toContain('Ready to create');
  });

  it('is not ready without clips and refuses an empty message', async () => {
    const reply = await chat.reply({ message: 'luxury, energetic, playful', history: [], selectedClipCount: 0 });
    expect(reply.analysis.missing_info).toEqual(['clips']);
    await expect(chat.reply({ message: ' ', history: [], selectedClipCount: 1 })).rejects.toThrow('Please type a message');
  });
});
