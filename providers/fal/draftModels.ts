/**
 * Enhance Renders on fal.ai's queue: each draft mode runs the model named by its option (domain/enhanceRenders.ts)
 * with that model's documented input, and the vision prompt runs a vision language model (fal's any-llm/vision).
 *   Nano Banana Edit        { prompt, image_urls: [image, ...references], num_images, output_format } -> { images: [{ url }], description }
 *   FLUX Kontext Max        { prompt, image_url, output_format }                                       -> { images: [{ url }] }
 *   FLUX Kontext Max Multi  { prompt, image_urls: [image, ...references], output_format }              -> { images: [{ url }] }
 *   ESRGAN                  { image_url, scale }                                                       -> { image: { url } }
 *   Creative Upscaler       { image_url, scale, prompt? }                                              -> { image: { url } }
 *   any-llm/vision          { model, system_prompt, prompt, image_urls }                               -> { output }
 */
import type { DraftModelProvider, DraftModelRequest, GeneratedImage, VisionPromptProvider, VisionPromptRequest, VisionPromptResult } from '../types';
import { ProviderError } from '../errors';
import { imageSize } from '../media/images';
import { checkUpscaleScale } from '../local/upscale';
import type { FalQueueClient } from './queueClient';
import { asGeneratedImage, dataUri, resultFileUrl, runToCompletion, type FalPolling } from './providers';

async function uri(image: Buffer): Promise<string> {
  const { mime } = await imageSize(image);
  return dataUri(image, mime);
}

/** Models that take a list of images ("image_urls") rather than one ("image_url"). */
const MULTI_IMAGE_MODELS = /nano-banana|\/multi$|seedream|qwen-image-edit-plus|gemini/;

export class FalDraftModelProvider implements DraftModelProvider {
  constructor(
    private readonly client: FalQueueClient,
    private readonly polling: FalPolling,
  ) {}

  async run(request: DraftModelRequest): Promise<GeneratedImage> {
    const input = await this.inputFor(request);
    const output = await runToCompletion(this.client, request.model, input, this.polling);
    const { data } = await this.client.downloadBuffer(resultFileUrl(output, ['images', 'image']));
    return asGeneratedImage(data, request.model, typeof output.description === 'string' ? output.description : undefined);
  }

  private async inputFor(request: DraftModelRequest): Promise<Record<string, unknown>> {
    const image = await uri(request.image);
    const prompt = request.prompt?.trim() ?? '';
    switch (request.mode) {
      case 'basic_upscale':
        return { image_url: image, scale: checkUpscaleScale(request.scale ?? 2) };
      case 'finish_upscale':
        return { image_url: image, scale: checkUpscaleScale(request.scale ?? 2), ...(prompt ? { prompt } : {}) };
      default: {
        if (!prompt) throw new ProviderError('INPUT', `The ${request.mode} prompt is empty`);
        const references = await Promise.all(request.references.map(uri));
        if (MULTI_IMAGE_MODELS.test(request.model)) return { prompt, image_urls: [image, ...references], num_images: 1, output_format: 'jpeg' };
        return { prompt, image_url: image, output_format: 'jpeg' };
      }
    }
  }
}

const VISION_SYSTEM_PROMPT =
  'You write prompts for an image editing model that edits architectural renders. Answer with the prompt only: one paragraph, ' +
  "no preamble. Keep the user's intent, describe the look to take from the reference images (lighting, colour grading, sky, " +
  'atmosphere, materials), and always say to keep the building geometry, camera angle and composition unchanged.';

export class FalVisionPromptProvider implements VisionPromptProvider {
  constructor(
    private readonly client: FalQueueClient,
    private readonly model: string,
    private readonly llm: string,
    private readonly polling: FalPolling,
  ) {}

  async enhance(request: VisionPromptRequest): Promise<VisionPromptResult> {
    const images = await Promise.all([...request.images, ...request.references].map(uri));
    if (images.length === 0 && !request.prompt.trim()) throw new ProviderError('INPUT', 'Nothing to enhance');
    const task =
      request.mode === 'style_sync'
        ? `The last image is the style reference; the others are renders to restyle to match it. User's words: ${request.prompt.trim() || '(none)'}`
        : `The first ${request.images.length} image(s) are the renders to edit; the rest are attached references. User's words: ${request.prompt.trim() || '(none)'}`;
    const output = await runToCompletion(this.client, this.model, { model: this.llm, system_prompt: VISION_SYSTEM_PROMPT, prompt: task, image_urls: images }, this.polling);
    const text = typeof output.output === 'string' ? output.output.trim() : '';
    if (!text) throw new ProviderError('BAD_RESPONSE', `${this.model} returned no prompt`);
    return { enhancedPrompt: text.slice(0, 4000), method: `${this.model}:${this.llm}` };
  }
}
