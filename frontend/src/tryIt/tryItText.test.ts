import { describe, expect, it } from '@jest/globals';
import { choicesWith, presetForSource } from './clipPreset';
import { formatFileSize, formatLabel, platformLabel } from './tryItText';

describe('try-it texts', () => {
  it('names the square option with its ratio and formats with the aspect', () => {
    expect(platformLabel('Square')).toBe('Square 1:1');
    expect(platformLabel('TikTok')).toBe('TikTok');
    expect(formatLabel('TikTok')).toBe('TikTok (9:16)');
    expect(formatLabel('YouTube')).toBe('YouTube (16:9)');
  });

  it('formats file sizes in B, KB and MB', () => {
    expect(formatFileSize(812)).toBe('812 B');
    expect(formatFileSize(52_340)).toBe('51.1 KB');
    expect(formatFileSize(2_621_440)).toBe('2.5 MB');
    expect(formatFileSize(Number.NaN)).toBe('Size unknown');
  });
});

describe('clip preset from the welcome dialog', () => {
  it('applies only to its own render', () => {
    const preset = { renderId: 'r-1', effect: 'Pan Left' as const, platform: 'Square' as const };
    expect(presetForSource(preset, 'r-1')).toBe(preset);
    expect(presetForSource(preset, 'r-2')).toBeNull();
    expect(presetForSource(null, 'r-1')).toBeNull();
  });

  it('adds a preset choice the screen does not list, once', () => {
    const main = ['Bring to Life', 'Walk Through'] as const;
    expect(choicesWith(main, 'Zoom In' as string)).toEqual(['Bring to Life', 'Walk Through', 'Zoom In']);
    expect(choicesWith(main, 'Walk Through')).toBe(main);
    expect(choicesWith(main, null)).toBe(main);
  });
});
