/**
 * Clip generation rules shared by the API, the clip workflow, its activities and the front end (spec 000
 * sections 2, 4, 5, 7, 9). Pure: no Node APIs, importable from workflows/.
 */
import { CLIP_DURATION_SECONDS, PLATFORM_ASPECT, PLATFORMS, VIDEO_EFFECTS, type Platform, type VideoEffect } from './constants';

export type ClipAspectRatio = '16:9' | '9:16' | '1:1';
export type ClipJobStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const CLIP_JOB_FINAL_STATUSES: readonly ClipJobStatus[] = ['completed', 'failed', 'cancelled'];
export const CLIP_JOB_ACTIVE_STATUSES: readonly ClipJobStatus[] = ['pending', 'processing'];

export function isFinalClipStatus(status: ClipJobStatus): boolean {
  return CLIP_JOB_FINAL_STATUSES.includes(status);
}

/** Where the clip's source comes from: a render or an AI image of the project, never both (spec 000 section 5). */
export type ClipSourceKind = 'render' | 'image';

/** What the user asked for; kept on the job row so a failed or cancelled job can be retried with the same inputs. */
export interface ClipJobOptions {
  effect: VideoEffect;
  platform: Platform;
  aspectRatio: ClipAspectRatio;
  durationSeconds: number;
  prompt: string | null;
  sourceKind: ClipSourceKind;
  sourceId: string;
  /** The spec's isTemporaryImage flag, recorded as given. */
  isTemporaryImage: boolean;
  /** Which start call made the job ('start' or 'portrait'). */
  startedBy: 'start' | 'portrait';
}

export interface ClipResultSummary {
  approvalId: string;
  approvalWorkflowId: string;
  fileName: string;
  durationSeconds: number;
  fileSize: number;
  width: number;
  height: number;
  aspectRatio: ClipAspectRatio;
  platform: Platform;
  effect: VideoEffect;
}

/** The job as the status call answers it (spec 000 section 7: status, progress, message, error, result). */
export interface ClipJobView {
  id: string;
  status: ClipJobStatus;
  progress: number;
  message: string;
  error: string | null;
  code: string | null;
  result: ClipResultSummary | null;
  projectId: string;
  options: ClipJobOptions;
  createdAt: string;
}

/**
 * Retries of the clip workflow's submit and finish steps: 8 attempts, 2, 4, 8, 16, then 30 s apart (about 2 minutes
 * in all), longer than a database breaker stays open (CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs, 60 s). With 5 attempts
 * (30 s) the breaker's fast refusals used up a step's attempts under load and failed the clip.
 */
export const CLIP_STEP_RETRY = { initialIntervalMs: 2_000, backoffCoefficient: 2, maximumIntervalMs: 30_000, maximumAttempts: 8 } as const;

/** How long a step's retries wait in all, between its first attempt and its last (the attempts' own time aside). */
export function retryWaitMs(retry: { initialIntervalMs: number; backoffCoefficient: number; maximumIntervalMs: number; maximumAttempts: number }): number {
  let total = 0;
  for (let n = 1; n < retry.maximumAttempts; n++) total += Math.min(retry.initialIntervalMs * retry.backoffCoefficient ** (n - 1), retry.maximumIntervalMs);
  return total;
}

/** Who makes the clips: the hosted provider (AI_PROVIDER=fal) or this server's own ffmpeg (AI_PROVIDER=local). */
export type ClipMaker = 'hosted' | 'local';

/**
 * How long a clip typically takes from start to its preview, by who makes it: a hosted provider 7 to 15 minutes
 * (spec 000 sections 1 and 9); this server's ffmpeg about 10 to 25 s on a quiet machine (issue 41 measured 10-22 s),
 * up to a minute with other jobs on the worker. GET /api/video-generation/timing answers it; Generate Clip says it.
 */
export const CLIP_TYPICAL_SECONDS: Record<ClipMaker, { min: number; max: number }> = {
  hosted: { min: 7 * 60, max: 15 * 60 },
  local: { min: 10, max: 60 },
};

export const CLIP_MESSAGES = {
  workspaceClipCap: (cap: number) =>
    `This workspace runs at most ${cap} ${cap === 1 ? 'clip' : 'clips'} at a time. Please wait for one to finish, or ask an admin to raise the limit.`,
  queued: 'Queued',
  checking: 'Checking credit availability...',
  preparing: 'Preparing your image',
  submitting: 'Starting video generation',
  rendering: 'Generating video',
  storing: 'Saving your clip',
  finishing: 'Creating preview and thumbnail',
  approval: 'Sending for approval',
  completed: 'Your clip is ready for approval',
  failed: 'Video generation failed. Your reserved credits were released.',
  cancelled: 'Video generation cancelled. Your reserved credits were released.',
  sourceMissing: 'The source image is no longer available.',
  insufficientCredits: (available: number, cost: number) =>
    `Not enough credits for video generation. A clip needs ${cost} credits and you have ${available} available.`,
  pendingCost: 'Your pending approvals reserve too many credits. Review your approvals or add credits to continue.',
} as const;

/** Codes beside those of domain/messages.ts ERROR_CODES. */
export const CLIP_ERROR_CODES = {
  pendingCost: 'PENDING_COST_EXCEEDS_AVAILABLE',
  sourceMissing: 'SOURCE_NOT_AVAILABLE',
  generationFailed: 'VIDEO_GENERATION_FAILED',
  cancelled: 'VIDEO_GENERATION_CANCELLED',
  jobNotFound: 'VIDEO_JOB_NOT_FOUND',
  jobFinished: 'VIDEO_JOB_FINISHED',
  jobNotRetryable: 'VIDEO_JOB_NOT_RETRYABLE',
  workspaceClipCap: 'WORKSPACE_CLIP_CAP',
} as const;

/** The most a workspace's clips-in-flight cap may be set to (it is off when unset). */
export const MAX_CLIPS_IN_FLIGHT_CAP = 100;

/**
 * Progress 0-100 through the job: the admission and source steps take the first few percent, the provider's
 * render maps onto RENDER_START..RENDER_END, storing and the preview take the rest. Never decreases.
 */
export const CLIP_PROGRESS = {
  admitted: 2,
  preparing: 5,
  submitted: 10,
  renderStart: 10,
  renderEnd: 85,
  stored: 88,
  finished: 95,
  approval: 97,
  completed: 100,
} as const;

export function renderProgress(providerProgress: number): number {
  const p = Math.max(0, Math.min(100, Number.isFinite(providerProgress) ? providerProgress : 0));
  return Math.floor(CLIP_PROGRESS.renderStart + ((CLIP_PROGRESS.renderEnd - CLIP_PROGRESS.renderStart) * p) / 100);
}

export function aspectForPlatform(platform: Platform): ClipAspectRatio {
  return PLATFORM_ASPECT[platform];
}

export function isPlatform(value: string): value is Platform {
  return (PLATFORMS as readonly string[]).includes(value);
}

export const PORTRAIT_PLATFORMS: readonly Platform[] = PLATFORMS.filter((p) => PLATFORM_ASPECT[p] === '9:16');

function slug(value: string): string {
  return value.trim().toLowerCase().replace(/[\s_-]+/g, '-');
}

/** 'Zoom In', 'zoom-in', 'zoom_in' and 'ZOOM IN' all name the Zoom In effect; anything else is null. */
export function parseVideoEffect(value: string): VideoEffect | null {
  const wanted = slug(value);
  return VIDEO_EFFECTS.find((effect) => slug(effect) === wanted) ?? null;
}

/** 'youtube', 'YouTube' and ' TikTok ' name platforms; anything else is null. */
export function parsePlatform(value: string): Platform | null {
  const wanted = value.trim().toLowerCase();
  return PLATFORMS.find((p) => p.toLowerCase() === wanted) ?? null;
}

/** The clip's file name: "<source name> - <effect> (<aspect>).mp4", safe for download headers. */
export function clipFileName(sourceName: string, effect: VideoEffect, aspectRatio: ClipAspectRatio): string {
  const base = sourceName.replace(/^.*[\\/]/, '').replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/[^\p{L}\p{N} ._-]+/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 80);
  return `${base || 'Clip'} - ${effect} (${aspectRatio.replace(':', 'x')}).mp4`;
}

/**
 * How a still is framed for the clip's aspect: a centre crop while it keeps at least this share of the
 * source's width (or height); otherwise the whole image is kept and padded (a 16:9 render in a 9:16 clip
 * would lose two thirds of the building to a crop).
 */
export const CROP_KEEPS_AT_LEAST = 0.55;

export type ClipFraming = 'crop' | 'pad';

export function framingFor(width: number, height: number, aspectRatio: ClipAspectRatio): ClipFraming {
  const [w, h] = aspectRatio.split(':').map(Number);
  const source = width / height;
  const target = w / h;
  const kept = Math.min(source / target, target / source);
  return kept >= CROP_KEEPS_AT_LEAST ? 'crop' : 'pad';
}

export const DEFAULT_CLIP_DURATION_SECONDS = CLIP_DURATION_SECONDS;
