/**
 * Rule-based assistant for the assembly chat (spec 001: preferences and a readiness analysis).
 * It reads the whole conversation for an aesthetic, an energy level and a copy style, and asks for
 * whatever is still missing.
 */
import type { ChatPreferences, ChatProvider, ChatReply, ChatRequest } from '../types';
import { ProviderError } from '../errors';

const AESTHETICS: Array<[string, RegExp]> = [
  ['luxury', /\b(luxur\w*|premium|elegant|high[- ]end|upscale)\b/],
  ['modern minimal', /\b(minimal\w*|modern|clean|sleek|simple)\b/],
  ['cinematic', /\b(cinematic|dramatic|epic|film\w*)\b/],
  ['warm and cosy', /\b(warm|cos[yi]|homely|inviting|family)\b/],
  ['vibrant', /\b(vibrant|colou?rful|bold|punchy|fun)\b/],
];
const ENERGY: Array<[NonNullable<ChatPreferences['energy_level']>, RegExp]> = [
  ['energetic', /\b(energetic|upbeat|fast|dynamic|exciting|quick)\b/],
  ['calm', /\b(calm|slow|relaxed|gentle|serene|peaceful)\b/],
  ['balanced', /\b(balanced|medium|moderate|steady)\b/],
];
const COPY: Array<[string, RegExp]> = [
  ['professional', /\b(professional|corporate|formal|informative)\b/],
  ['playful', /\b(playful|casual|friendly|witty)\b/],
  ['aspirational', /\b(aspirational|inspiring|emotional|lifestyle)\b/],
  ['no text', /\b(no (text|copy|captions?))\b/],
];

function firstMatch<T extends string>(text: string, table: Array<[T, RegExp]>): T | undefined {
  return table.find(([, pattern]) => pattern.test(text))?.[0];
}

export class RuleBasedChatProvider implements ChatProvider {
  async reply(request: ChatRequest): Promise<ChatReply> {
    if (!request.message.trim()) throw new ProviderError('INPUT', 'Please type a message');
    const text = [...request.history.filter((m) => m.role === 'user').map((m) => m.content), request.message].join(' ').toLowerCase();
    const preferences: ChatPreferences = {
      aesthetic: firstMatch(text, AESTHETICS),
      energy_level: firstMatch(text, ENERGY),
      copy_style: firstMatch(text, COPY),
    };
    const missing: string[] = [];
    if (request.selectedClipCount < 1) missing.push('clips');
    if (!preferences.aesthetic) missing.push('aesthetic');
    if (!preferences.energy_level) missing.push('energy_level');
    if (!preferences.copy_style) missing.push('copy_style');
    const known = 4 - missing.length;
    const ready = missing.length === 0;
    const questions: Record<string, string> = {
      clips: 'Select at least one clip to assemble.',
      aesthetic: 'What look are you after: luxury, modern minimal, cinematic, warm and cosy or vibrant?',
      energy_level: 'Should the pace be calm, balanced or energetic?',
      copy_style: 'What tone for the captions: professional, playful, aspirational, or no text?',
    };
    const summary = [preferences.aesthetic, preferences.energy_level && `${preferences.energy_level} pace`, preferences.copy_style && `${preferences.copy_style} captions`]
      .filter(Boolean)
      .join(', ');
    const reply = ready
      ? `Great: ${summary}${request.aspectRatio ? ` in ${request.aspectRatio}` : ''} with ${request.selectedClipCount} clip${request.selectedClipCount === 1 ? '' : 's'}. Ready to create your video.`
      : `${summary ? `Noted: ${summary}. ` : ''}${questions[missing[0]]}`;
    return { reply, preferences, analysis: { ready_to_create: ready, confidence_score: Math.round((known / 4) * 100) / 100, missing_info: missing } };
  }
}
