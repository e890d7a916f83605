/**
 * Enhance Renders' model runs behind the provider interface: the local sharp implementations do the work their mode
 * names (colour statistics moved to the references', x2 resamples, a deterministic photoreal finish), and the fal
 * implementations send each named model its documented input over the queue protocol (a local server speaking it).
 */
import sharp from 'sharp';
import { ENHANCE_MODEL_OPTIONS, modelOption } from '../../domain/enhanceRenders';
import { createProviders } from '../../providers';
import { ProviderError } from '../../providers/errors';
import { LocalDraftModelProvider, channelStats } from '../../providers/local/draftModels';
import { RuleBasedVisionPromptProvider } from '../../providers/local/visionPrompt';
import { houseStill } from '../support/stills';
import { startFakeFal, type FakeFal } from '../support/fakeFal';

const KEY = 'draft-key-1';

async function render(width = 240, height = 160): Promise<Buffer> {
  return houseStill(width, height).jpeg({ quality: 95 }).toBuffer();
}

async function solid(r: number, g: number, b: number, size = 64): Promise<Buffer> {
  // a little noise so the reference has a deviation of its own
  const noise = await sharp({ create: { width: size, height: size, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 0, sigma: 20 } } }).png().toBuffer();
  return sharp({ create: { width: size, height: size, channels: 3, background: { r, g, b } } })
    .composite([{ input: noise, blend: 'soft-light' }])
    .png()
    .toBuffer();
}

describe('local draft models', () => {
  const local = new LocalDraftModelProvider();

  it('moves each channel\'s mean and deviation to the references\' in a style transfer (and most of the way in Sync Images)', async () => {
    const image = await render();
    const reference = await solid(40, 90, 200);
    const target = await channelStats(reference);
    const transferred = await local.run({ mode: 'style_transfer', model: 'x', image, references: [reference], prompt: 'p' });
    const after = await channelStats(transferred.image);
    for (let i = 0; i < 3; i += 1) expect(Math.abs(after.mean[i] - target.mean[i])).toBeLessThan(12);
    const before = await channelStats(image);
    const synced = await channelStats((await local.run({ mode: 'style_sync', model: 'x', image, references: [reference], prompt: 'p' })).image);
    for (let i = 0; i < 3; i += 1) {
      const share = (synced.mean[i] - before.mean[i]) / (target.mean[i] - before.mean[i]);
      expect(share).toBeGreaterThan(0.7);
      expect(share).toBeLessThan(1.05);
    }
    await expect(local.run({ mode: 'style_transfer', model: 'x', image, references: [], prompt: 'p' })).rejects.toMatchObject({ code: 'INPUT' });
  });

  it('resamples x2 for the upscales; the creative one adds local contrast and sharpening', async () => {
    const image = await render(200, 100);
    const basic = await local.run({ mode: 'basic_upscale', model: 'x', image, references: [], scale: 2 });
    const creative = await local.run({ mode: 'finish_upscale', model: 'x', image, references: [], scale: 2 });
    expect([basic.width, basic.height, creative.width, creative.height]).toEqual([400, 200, 400, 200]);
    const edges = async (bytes: Buffer) => (await sharp(bytes).greyscale().convolve({ width: 3, height: 3, kernel: [0, -1, 0, -1, 4, -1, 0, -1, 0] }).stats()).channels[0].stdev;
    expect(await edges(creative.image)).toBeGreaterThan(await edges(basic.image));
    await expect(local.run({ mode: 'basic_upscale', model: 'x', image: await render(4200, 30), references: [], scale: 2 })).rejects.toThrow('the limit is 8192 px per side');
  });

  it('is deterministic: the same render and mode give the same bytes', async () => {
    const image = await render();
    const one = await local.run({ mode: 'render_enhance', model: 'x', image, references: [], prompt: 'fixed' });
    const two = await local.run({ mode: 'render_enhance', model: 'x', image, references: [], prompt: 'fixed' });
    expect(Buffer.compare(one.image, two.image)).toBe(0);
    expect(Buffer.compare(one.image, image)).not.toBe(0);
    const edit = await local.run({ mode: 'edit_render', model: 'x', image, references: [], prompt: 'night' });
    expect((await channelStats(edit.image)).mean[0]).toBeLessThan((await channelStats(image)).mean[0]);
    await expect(local.run({ mode: 'edit_render', model: 'x', image, references: [], prompt: ' ' })).rejects.toBeInstanceOf(ProviderError);
    await expect(local.run({ mode: 'render_enhance', model: 'x', image: Buffer.from('not an image'), references: [] })).rejects.toMatchObject({ code: 'INPUT' });
  });

  it('refuses a PNG whose header reads but whose pixels do not as an input fault (libpng read error), not a media failure', async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
    const corrupt = Buffer.from(png);
    const idat = corrupt.indexOf(Buffer.from('IDAT'));
    for (let i = idat + 200; i < idat + 600; i += 1) corrupt[i] ^= 0x5a;
    // the header still reads: the failure comes from decoding the pixels
    expect((await sharp(corrupt).metadata()).width).toBe(400);
    const refused = local.run({ mode: 'render_enhance', model: 'x', image: corrupt, references: [] });
    await expect(refused).rejects.toMatchObject({ code: 'INPUT' });
    await expect(refused).rejects.toThrow('libpng read error');
  });

  it('enhances prompts by rule from what the references look like', async () => {
    const vision = new RuleBasedVisionPromptProvider();
    const warm = await solid(240, 160, 60);
    const attach = await vision.enhance({ mode: 'attach', prompt: 'add a pool', images: [], references: [warm] });
    expect(attach.enhancedPrompt).toMatch(/^Add a pool\. Use reference 1 for the look: .*warm golden tones/);
    expect(attach).toEqual(await vision.enhance({ mode: 'attach', prompt: 'add a pool', images: [], references: [warm] }));
    const sync = await vision.enhance({ mode: 'style_sync', prompt: '', images: [await render()], references: [await solid(20, 30, 90)] });
    expect(sync.enhancedPrompt).toMatch(/^Match the reference image's look: low-key, dim lighting, cool blue tones/);
    await expect(vision.enhance({ mode: 'style_sync', prompt: 'x', images: [], references: [] })).rejects.toMatchObject({ code: 'INPUT' });
  });
});

describe('local draft models: bounded work and per-user breakers', () => {
  /** Resolves once libvips has had no queued or running operation for five looks in a row (an abandoned run goes
   * through several sharp stages, with a moment of JavaScript between them). */
  async function libvipsIdle(): Promise<void> {
    for (let idleLooks = 0; idleLooks < 5; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const { queue, process } = sharp.counters();
      idleLooks = queue + process === 0 ? idleLooks + 1 : 0;
    }
  }

  const LOCAL = { providerKind: 'local', falBaseUrl: '', falApiKey: '', falImageEditModel: 'x/y', falUpscaleModel: 'x/y', falVideoModel: 'x/y' } as const;

  it('finishes the largest model input (4096 px) inside the 30 s call limit, at the size the effect promises', async () => {
    // the spec's breaker defaults: every call races 30 s
    const providers = createProviders(LOCAL);
    const image = await houseStill(4096, 2731).jpeg({ quality: 90 }).toBuffer();
    const enhanced = await providers.draftModels.run({ mode: 'render_enhance', model: 'x', image, references: [], caller: 'u1' });
    expect([enhanced.width, enhanced.height]).toEqual([4096, 2731]);
    expect(enhanced.description).toContain('worked at 2048 px on the long side');
    const creative = await providers.draftModels.run({ mode: 'finish_upscale', model: 'x', image, references: [], scale: 2, caller: 'u1' });
    expect([creative.width, creative.height]).toEqual([8192, 5462]);
    const edited = await providers.draftModels.run({ mode: 'edit_render', model: 'x', image: await houseStill(2048, 1365).jpeg().toBuffer(), references: [], prompt: 'warm dusk light', caller: 'u1' });
    // the edit keeps the source's exact size (no even-number rounding)
    expect([edited.width, edited.height]).toEqual([2048, 1365]);
    expect(providers.draftModelBreakers?.for('u1').recentFailures).toBe(0);
  }, 120_000);

  it("opens only the failing user's breaker: another user's run goes on; refused inputs count for nobody", async () => {
    // a short call limit makes A's large input a provider-side timeout; two of them open A's breaker
    const providers = createProviders(LOCAL, { breaker: { callTimeoutMs: 400, failureThreshold: 2 } });
    const large = await houseStill(4096, 2731).png().toBuffer();
    const small = await render(96, 64);
    for (let i = 0; i < 2; i += 1) {
      await expect(providers.draftModels.run({ mode: 'render_enhance', model: 'x', image: large, references: [], caller: 'user-a' })).rejects.toMatchObject({ code: 'CIRCUIT_TIMEOUT' });
    }
    await expect(providers.draftModels.run({ mode: 'render_enhance', model: 'x', image: small, references: [], caller: 'user-a' })).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
    // a timed-out call is abandoned, not stopped: A's large images are still in libvips' queue, and B's small run would
    // wait behind them past the 400 ms limit on a busy machine. B's run starts once that work has drained.
    await libvipsIdle();
    const forB = await providers.draftModels.run({ mode: 'render_enhance', model: 'x', image: small, references: [], caller: 'user-b' });
    expect([forB.width, forB.height]).toEqual([96, 64]);
    expect(providers.draftModelBreakers?.for('user-a').state).toBe('OPEN');
    expect(providers.draftModelBreakers?.for('user-b').state).toBe('CLOSED');

    // oversized and unreadable inputs are the caller's problem: never counted
    const wide = await sharp({ create: { width: 4200, height: 30, channels: 3, background: '#808080' } }).png().toBuffer();
    const truncated = (await render(400, 300)).subarray(0, 2000);
    for (let i = 0; i < 3; i += 1) {
      await expect(providers.draftModels.run({ mode: 'basic_upscale', model: 'x', image: wide, references: [], scale: 2, caller: 'user-c' })).rejects.toMatchObject({ code: 'INPUT' });
      await expect(providers.draftModels.run({ mode: 'render_enhance', model: 'x', image: truncated, references: [], caller: 'user-c' })).rejects.toMatchObject({ code: 'INPUT' });
    }
    expect(providers.draftModelBreakers?.for('user-c').recentFailures).toBe(0);
    expect(providers.draftModelBreakers?.for('user-c').state).toBe('CLOSED');
  }, 120_000);
});

describe('fal draft models over the queue protocol', () => {
  let fal: FakeFal;

  beforeAll(async () => {
    fal = await startFakeFal({
      apiKey: KEY,
      models: {
        'fal-ai/nano-banana/edit': { kind: 'image-edit', behaviour: 'succeed' },
        'fal-ai/flux-pro/kontext/max': { kind: 'image-edit', behaviour: 'succeed' },
        'fal-ai/flux-pro/kontext/max/multi': { kind: 'image-edit', behaviour: 'succeed' },
        'fal-ai/esrgan': { kind: 'upscale', behaviour: 'succeed' },
        'fal-ai/creative-upscaler': { kind: 'upscale', behaviour: 'succeed' },
        'fal-ai/any-llm/vision': { kind: 'vision-llm', behaviour: 'succeed' },
      },
    });
  });

  afterAll(async () => {
    await fal.close();
  });

  const providers = () =>
    createProviders(
      { providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falImageEditModel: 'x/y', falUpscaleModel: 'x/y', falVideoModel: 'x/y', falVisionModel: 'fal-ai/any-llm/vision', falVisionLlm: 'google/gemini-flash-1.5' },
      { imagePollIntervalMs: 5 },
    );

  it('runs every model option by its id with that model\'s input shape', async () => {
    const image = await render(120, 80);
    const reference = await solid(10, 200, 10, 16);
    const expected: Record<string, (input: Record<string, unknown>) => void> = {
      'nano-banana-edit': (input) => expect(input).toMatchObject({ prompt: 'warm', image_urls: [expect.stringMatching(/^data:image\/jpeg;base64,/), expect.stringMatching(/^data:image\/png;base64,/)], num_images: 1 }),
      'flux-kontext-max': (input) => expect(Object.keys(input).sort()).toEqual(['image_url', 'output_format', 'prompt']),
      'style-transfer': (input) => expect((input.image_urls as string[]).length).toBe(2),
      esrgan: (input) => expect(input).toEqual({ image_url: expect.any(String), scale: 2 }),
      'creative-upscale': (input) => expect(input).toEqual({ image_url: expect.any(String), scale: 2 }),
      'render-enhance': (input) => expect(input.prompt).toMatch(/^Turn this architectural render into a photorealistic photograph/),
    };
    const p = providers();
    for (const option of ENHANCE_MODEL_OPTIONS) {
      const before = fal.jobs.length;
      const references = option.allowsAttachments ? [reference] : [];
      const prompt = option.id === 'render-enhance' ? 'Turn this architectural render into a photorealistic photograph, test' : option.promptEnabled ? 'warm' : null;
      const result = await p.draftModels.run({ mode: option.mode, model: option.model, image, references, prompt, scale: option.scale });
      const job = fal.jobs[before];
      expect({ id: option.id, model: job.model, resultModel: result.model }).toEqual({ id: option.id, model: option.model, resultModel: option.model });
      expected[option.id](job.input);
      if (option.scale) expect([result.width, result.height]).toEqual([240, 160]);
      else expect([result.width, result.height]).toEqual([120, 80]);
    }
    // Sync Images runs Nano Banana with the pinned image as its one reference
    const before = fal.jobs.length;
    const nano = modelOption('nano-banana-edit');
    await p.draftModels.run({ mode: 'style_sync', model: nano?.model ?? '', image, references: [reference], prompt: 'match it' });
    expect((fal.jobs[before].input.image_urls as string[]).length).toBe(2);
  });

  it('asks a vision language model for the prompt', async () => {
    const result = await providers().visionPrompt.enhance({ mode: 'attach', prompt: 'add trees', images: [await render(120, 80)], references: [await solid(1, 2, 3, 16)] });
    expect(result.method).toBe('fal-ai/any-llm/vision:google/gemini-flash-1.5');
    expect(result.enhancedPrompt).toMatch(/^\[google\/gemini-flash-1\.5 saw 120x80, 16x16\] The first 1 image\(s\) are the renders to edit.*add trees/);
    const job = fal.jobs.at(-1);
    expect(job?.input).toMatchObject({ model: 'google/gemini-flash-1.5', system_prompt: expect.stringContaining('architectural renders') });
  });
});
