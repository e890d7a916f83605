/**
 * Rule-based prompt refinement: tidy the user's words, then say what an architectural edit must keep
 * and what each recognised family asks for. Same input, same output.
 */
import type { PromptRefinement, PromptRefinementRequest, PromptRefiner } from '../types';
import { ProviderError } from '../errors';
import { FAMILY_PHRASES, detectPromptFamilies } from '../../domain/promptFamilies';

const PRESERVE = "Keep the building's geometry, materials, proportions and camera angle unchanged";
const FINISH = 'photorealistic architectural photography, natural perspective, high detail';

function sentence(text: string): string {
  const tidy = text.replace(/\s+/g, ' ').trim().replace(/[.!?,;:\s]+$/, '');
  return tidy.charAt(0).toUpperCase() + tidy.slice(1);
}

export class RuleBasedPromptRefiner implements PromptRefiner {
  async refine(request: PromptRefinementRequest): Promise<PromptRefinement> {
    const originalPrompt = request.prompt;
    if (!originalPrompt.trim()) throw new ProviderError('INPUT', 'The prompt is empty');
    const parts = [`${sentence(originalPrompt)}.`];
    if (request.imageDescription?.trim()) parts.push(`Scene: ${sentence(request.imageDescription)}.`);
    const phrases = detectPromptFamilies(originalPrompt).map((family) => FAMILY_PHRASES[family]);
    if (phrases.length > 0) parts.push(`${sentence(phrases.join('; '))}.`);
    else parts.push('Balanced exposure, natural colours, crisp detail.');
    parts.push(`${PRESERVE}; ${FINISH}.`);
    return { originalPrompt, refinedPrompt: parts.join(' '), refinementMethod: 'rule-based' };
  }
}
