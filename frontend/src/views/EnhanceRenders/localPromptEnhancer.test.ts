import { describe, expect, it } from '@jest/globals';
import { defaultStyleProfile } from './draftState';
import { enhancePromptLocally } from './localPromptEnhancer';

describe('enhancePromptLocally', () => {
  it("keeps the user's words first and adds what it recognises and what must not change", () => {
    const text = enhancePromptLocally({ mode: 'attach', prompt: '  a snowy   evening ', referenceCount: 0, styleProfile: defaultStyleProfile() });
    expect(text.startsWith('A snowy evening.')).toBe(true);
    expect(text).toContain('Fresh snow on roofs and ground');
    expect(text).toContain('dusk sky');
    expect(text).toContain("Keep the building's geometry, materials, background, lighting direction and camera angle unchanged.");
    expect(text).toContain('no artifacts');
  });

  it('names the attached references', () => {
    expect(enhancePromptLocally({ mode: 'attach', prompt: 'add a pool', referenceCount: 1 })).toContain('Use the attached reference image as the guide');
    expect(enhancePromptLocally({ mode: 'attach', prompt: 'add a pool', referenceCount: 3 })).toContain('Use the 3 attached reference images as the guide');
    expect(enhancePromptLocally({ mode: 'attach', prompt: 'add a pool', referenceCount: 0 })).not.toContain('reference');
  });

  it('asks Sync Images to match the pinned style, with or without words', () => {
    const sync = enhancePromptLocally({ mode: 'style_sync', prompt: '', referenceCount: 1 });
    expect(sync.startsWith('Match the colour grading, light, mood and finish of the pinned style reference image.')).toBe(true);
    expect(enhancePromptLocally({ mode: 'style_sync', prompt: 'warmer', referenceCount: 1 })).toContain('Warmer.');
  });

  it('leaves unlocked parts free and drops the artifact guard when it is off', () => {
    const profile = { ...defaultStyleProfile(), locks: { background: false, lighting: false, materials: true, geometry: true }, artifact_guard: false };
    const text = enhancePromptLocally({ mode: 'attach', prompt: 'brighter', referenceCount: 0, styleProfile: profile });
    expect(text).toContain("Keep the building's geometry, materials and camera angle unchanged.");
    expect(text).not.toContain('no artifacts');
  });

  it('gives the same answer for the same input', () => {
    const input = { mode: 'attach' as const, prompt: 'night scene with lights', referenceCount: 2 };
    expect(enhancePromptLocally(input)).toBe(enhancePromptLocally(input));
  });
});
