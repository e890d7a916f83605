/**
 * The browser's own prompt enhancer, used when POST /api/ai-enhance-prompt/vision fails (spec 001 section 7).
 * Rule-based and deterministic: it keeps the user's words, names what the references are for, adds the
 * looks it recognises (the same families the local image provider understands) and what must not change.
 */
import { FAMILY_PHRASES, detectPromptFamilies } from '../../../../domain/promptFamilies';
import type { StyleProfile } from './draftState';

export type VisionMode = 'attach' | 'style_sync';

export interface LocalEnhanceInput {
  mode: VisionMode;
  prompt: string;
  referenceCount: number;
  styleProfile?: StyleProfile;
}

function sentence(text: string): string {
  const tidy = text.replace(/\s+/g, ' ').trim().replace(/[.!?,;:\s]+$/, '');
  return tidy ? tidy.charAt(0).toUpperCase() + tidy.slice(1) : '';
}

function lockedParts(profile: StyleProfile | undefined): string[] {
  const locks = profile?.locks ?? { geometry: true, materials: true, background: true, lighting: true };
  const names: string[] = [];
  if (locks.geometry) names.push('geometry');
  if (locks.materials) names.push('materials');
  if (locks.background) names.push('background');
  if (locks.lighting) names.push('lighting direction');
  return names;
}

export function enhancePromptLocally(input: LocalEnhanceInput): string {
  const parts: string[] = [];
  const own = sentence(input.prompt);
  if (input.mode === 'style_sync') {
    parts.push('Match the colour grading, light, mood and finish of the pinned style reference image.');
    if (own) parts.push(`${own}.`);
  } else {
    if (own) parts.push(`${own}.`);
    if (input.referenceCount > 0) {
      parts.push(`Use the ${input.referenceCount === 1 ? 'attached reference image' : `${input.referenceCount} attached reference images`} as the guide for the look and the added elements.`);
    }
  }
  const phrases = detectPromptFamilies(input.prompt).map((family) => FAMILY_PHRASES[family]);
  if (phrases.length > 0) parts.push(`${sentence(phrases.join('; '))}.`);
  const locked = lockedParts(input.styleProfile);
  if (locked.length > 0) parts.push(`Keep the building's ${[...locked, 'camera angle'].join(', ').replace(/, ([^,]*)$/, ' and $1')} unchanged.`);
  if (input.styleProfile?.artifact_guard !== false) parts.push('Photorealistic architectural photography, clean edges, no artifacts or distortions.');
  return parts.join(' ');
}
