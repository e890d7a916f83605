/**
 * Rule-based prompt enhancer for Enhance Renders' attachments and Sync Images: it "looks" at the images through
 * their colour statistics (brightness, warmth, contrast, colourfulness) and writes them into the prompt, with what
 * an architectural edit must keep. Same input, same output.
 */
import type { VisionPromptProvider, VisionPromptRequest, VisionPromptResult } from '../types';
import { ProviderError } from '../errors';
import { channelStats } from './draftModels';

const PRESERVE = "Keep the building's geometry, materials, proportions, camera angle and composition unchanged";

function sentence(text: string): string {
  const tidy = text.replace(/\s+/g, ' ').trim().replace(/[.!?,;:\s]+$/, '');
  return tidy.charAt(0).toUpperCase() + tidy.slice(1);
}

/** A few words for how an image looks, from its channel means and deviations. */
export async function describeLook(image: Buffer): Promise<string> {
  const { mean, stdev } = await channelStats(image);
  const luma = 0.2126 * mean[0] + 0.7152 * mean[1] + 0.0722 * mean[2];
  const warmth = mean[0] - mean[2];
  const contrast = (stdev[0] + stdev[1] + stdev[2]) / 3;
  const chroma = Math.max(...mean) - Math.min(...mean);
  const words = [
    luma < 70 ? 'low-key, dim lighting' : luma > 170 ? 'bright, airy lighting' : 'balanced daylight',
    warmth > 18 ? 'warm golden tones' : warmth < -12 ? 'cool blue tones' : 'neutral colour balance',
    contrast > 65 ? 'strong contrast' : contrast < 35 ? 'soft, low contrast' : 'moderate contrast',
    chroma > 40 ? 'rich colour' : chroma < 12 ? 'muted palette' : 'natural saturation',
  ];
  return words.join(', ');
}

export class RuleBasedVisionPromptProvider implements VisionPromptProvider {
  async enhance(request: VisionPromptRequest): Promise<VisionPromptResult> {
    const prompt = request.prompt.trim();
    const looks = await Promise.all(request.references.map(describeLook));
    const parts: string[] = [];
    if (request.mode === 'style_sync') {
      if (looks.length === 0) throw new ProviderError('INPUT', 'Sync Images needs the pinned reference image');
      parts.push(`Match the reference image's look: ${looks[0]}.`);
      parts.push('Carry over its lighting, colour grading, sky and atmosphere so every render reads as one set.');
      if (prompt) parts.push(`${sentence(prompt)}.`);
    } else {
      if (!prompt && looks.length === 0) throw new ProviderError('INPUT', 'Describe the edit or attach a reference image');
      if (prompt) parts.push(`${sentence(prompt)}.`);
      looks.forEach((look, i) => parts.push(`Use reference ${i + 1} for the look: ${look}.`));
    }
    if (request.images.length > 0) parts.push(`The render now has ${await describeLook(request.images[0])}; change only what is asked.`);
    parts.push(`${PRESERVE}; photorealistic architectural visualisation, high detail.`);
    return { enhancedPrompt: parts.join(' '), method: 'rule-based' };
  }
}
