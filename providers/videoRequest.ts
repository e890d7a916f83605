/** Checks and wording shared by the image-to-video providers. */
import { PLATFORMS, VIDEO_EFFECTS, type VideoEffect } from '../domain/constants';
import type { ClipAspectRatio, VideoJobRequest } from './types';
import { ProviderError } from './errors';

const ASPECTS: readonly ClipAspectRatio[] = ['16:9', '9:16', '1:1'];

export function checkVideoJobRequest(request: VideoJobRequest): void {
  if (!VIDEO_EFFECTS.includes(request.effect)) throw new ProviderError('INPUT', `Unknown video effect "${request.effect}"`);
  if (!PLATFORMS.includes(request.platform)) throw new ProviderError('INPUT', `Unknown platform "${request.platform}"`);
  if (!ASPECTS.includes(request.aspectRatio)) throw new ProviderError('INPUT', `Unsupported aspect ratio "${request.aspectRatio}"`);
  if (!Number.isFinite(request.durationSeconds) || request.durationSeconds <= 0 || request.durationSeconds > 10) {
    throw new ProviderError('INPUT', `Clip duration must be between 0 and 10 seconds, got ${request.durationSeconds}`);
  }
  if (!Buffer.isBuffer(request.image) || request.image.length === 0) throw new ProviderError('INPUT', 'The source image is empty');
}

/** Camera direction for hosted image-to-video models, one per effect. */
export const EFFECT_PROMPTS: Record<VideoEffect, string> = {
  'Zoom In': 'Slow, smooth camera zoom in towards the building',
  'Pan Left': 'Smooth horizontal camera pan from right to left across the scene',
  'Pan Right': 'Smooth horizontal camera pan from left to right across the scene',
  'Drone Shot': 'Aerial drone shot pulling back and rising to reveal the building and its surroundings',
  'Walk Through': 'Steady first-person walk-through moving forward into the space, gentle natural sway',
  'Bring to Life': 'Subtle living motion: trees swaying, soft light changes, people and water moving naturally, camera almost still',
  'Day to Night': 'Time-lapse from daylight to night, sky darkening to deep blue, interior and exterior lights turning on',
};

export const VIDEO_PROMPT_SUFFIX = 'Keep the architecture, geometry and materials unchanged; photorealistic, stable, no warping.';
