/** The Generate Clip screen's choices and notices as pure rules (spec 000 sections 2 and 9). */
import { CREDIT_COST, MAIN_SCREEN_EFFECTS, PLATFORM_ASPECT, type Platform, type VideoEffect } from '../../../../domain/constants';
import { CLIP_TYPICAL_SECONDS } from '../../../../domain/clipGeneration';
import type { CanCreateClip, ClipTiming } from '../../api/videoGeneration';

export const EFFECT_DESCRIPTIONS: Record<VideoEffect, string> = {
  'Bring to Life': 'Subtle living motion: light breathes and the scene comes alive',
  'Walk Through': 'A steady walk into the space with a gentle sway',
  'Day to Night': 'Daylight fades into a blue evening',
  'Drone Shot': 'An aerial pull-back that reveals the building',
  'Zoom In': 'A slow push towards the building',
  'Pan Left': 'A smooth pan from right to left',
  'Pan Right': 'A smooth pan from left to right',
};

/** The clip start's originalPrompt: the chosen effect in words (the screen has no free text; the effect is the ask). */
export function clipOriginalPrompt(effect: VideoEffect): string {
  return `${effect}: ${EFFECT_DESCRIPTIONS[effect]}`;
}

/** Step 1: the main screen's four effects. */
export const EFFECT_CHOICES: readonly VideoEffect[] = MAIN_SCREEN_EFFECTS;

/** Step 2: the social platforms; the platform decides the aspect ratio. */
export const PLATFORM_CHOICES: readonly Platform[] = ['YouTube', 'Facebook', 'TikTok', 'Instagram'];

export function aspectLabel(platform: Platform): string {
  const aspect = PLATFORM_ASPECT[platform];
  return `${aspect} ${aspect === '16:9' ? 'Landscape' : aspect === '9:16' ? 'Portrait' : 'Square'}`;
}

export const CLIP_COST = CREDIT_COST.clip;

/** Which credit notice the screen shows before a start, from the server's start rule. */
export type CreditNotice =
  | { kind: 'none' }
  | { kind: 'pending-limit'; limit: number; pendingCount: number }
  | { kind: 'pending-cost'; pendingCost: number; available: number }
  | { kind: 'insufficient'; available: number }
  | { kind: 'cooldown' };

export function creditNotice(check: CanCreateClip): CreditNotice {
  switch (check.reason) {
    case 'pending_limit':
      return { kind: 'pending-limit', limit: check.limit, pendingCount: check.pendingCount };
    case 'pending_cost':
      return { kind: 'pending-cost', pendingCost: check.pendingCost, available: check.available };
    case 'insufficient_credits':
      return { kind: 'insufficient', available: Math.max(0, check.available) };
    case 'cooldown':
      return { kind: 'cooldown' };
    default:
      return { kind: 'none' };
  }
}

/**
 * Fallback polling of a running job's status call (spec 000 section 4): progress and the end arrive through the
 * event stream, so the status is read only every 60 s for portrait (and square) clips, 90 s for landscape ones.
 */
export const CLIP_STATUS_POLL_PORTRAIT_MS = 60_000;
export const CLIP_STATUS_POLL_LANDSCAPE_MS = 90_000;

export function clipStatusPollMs(aspectRatio: string): number {
  return aspectRatio === '16:9' ? CLIP_STATUS_POLL_LANDSCAPE_MS : CLIP_STATUS_POLL_PORTRAIT_MS;
}

export function clampProgress(value: number): number {
  return Math.max(0, Math.min(100, Math.round(Number.isFinite(value) ? value : 0)));
}

/**
 * The wait said before Generate: the spec's "Generation typically takes 7 to 15 minutes." for a hosted provider (and
 * when the server's answer is not known), and this server's own, much shorter, time when it makes clips itself.
 */
export function clipWaitText(timing: ClipTiming | null): string {
  const { min, max } = timing?.typicalSeconds ?? CLIP_TYPICAL_SECONDS.hosted;
  if (max >= 120) return `Generation typically takes ${Math.round(min / 60)} to ${Math.round(max / 60)} minutes.`;
  const where = timing?.maker === 'local' ? ' on this server' : '';
  if (max <= 60) return `Generation typically takes under a minute${where}.`;
  return `Generation typically takes ${min} to ${max} seconds${where}.`;
}
