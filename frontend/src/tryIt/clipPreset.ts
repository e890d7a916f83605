/** The Generate Clip screen's entry from the try-it welcome dialog: the visitor's effect and platform, preset. */
import type { Platform, VideoEffect } from '../../../domain/constants';

export interface ClipPreset {
  /** the render the preset belongs to: another source opens the screen without it */
  renderId: string;
  effect: VideoEffect | null;
  platform: Platform | null;
}

export function presetForSource(preset: ClipPreset | null, sourceId: string): ClipPreset | null {
  return preset && preset.renderId === sourceId ? preset : null;
}

/**
 * The screen's choices, plus the preset one when the screen does not list it (the try-it list has Zoom In,
 * Pan Left, Pan Right and Square, which the main screen does not show; the server takes them all).
 */
export function choicesWith<T extends string>(choices: readonly T[], preset: T | null | undefined): readonly T[] {
  return preset && !choices.includes(preset) ? [...choices, preset] : choices;
}
