import type { ClipJobView, ClipMaker } from '../../../domain/clipGeneration';
import type { Platform, VideoEffect } from '../../../domain/constants';
import type { CanCreateContentResult } from '../../../domain/creditMath';
import { api } from './client';

export type { ClipJobView } from '../../../domain/clipGeneration';

/** The spec's start answer: the job id, and the rejection-streak warning with its code when it applies. */
export interface StartClipAnswer {
  success: true;
  jobId: string;
  warning?: string;
  code?: string;
}

export interface StartClipInput {
  projectId: string;
  userId: string;
  source: { kind: 'render' | 'image'; id: string; fileUrl: string };
  effect: VideoEffect;
  platform: Platform;
  aspectRatio: string;
  /** 000 section 7: the start's options carry the originalPrompt (what the clip was asked to show). */
  originalPrompt: string;
}

/** POST /api/video-generation/start with the spec's options and context. */
export async function startClip(input: StartClipInput): Promise<StartClipAnswer> {
  return api
    .post('video-generation/start', {
      json: {
        options: {
          imageUrl: input.source.fileUrl,
          movement: input.effect,
          originalPrompt: input.originalPrompt,
          duration: 5,
          aspectRatio: input.aspectRatio,
          platform: input.platform,
        },
        context: {
          projectId: input.projectId,
          userId: input.userId,
          renderId: input.source.kind === 'render' ? input.source.id : null,
          imageId: input.source.kind === 'image' ? input.source.id : null,
          isTemporaryImage: false,
        },
      },
      // a start is not idempotent: never resend it on its own
      retry: 0,
      timeout: 60_000,
    })
    .json<StartClipAnswer>();
}

export async function fetchClipStatus(jobId: string): Promise<ClipJobView> {
  const body = await api.get(`video-generation/status/${jobId}`, { retry: 0 }).json<{ success: true; job: ClipJobView }>();
  return body.job;
}

/** The user's pending or processing clip, wherever it was started (another tab, another browser). */
export async function fetchActiveClip(): Promise<ClipJobView | null> {
  const body = await api.get('video-generation/active', { retry: 0 }).json<{ success: true; job: ClipJobView | null }>();
  return body.job;
}

export async function cancelClip(jobId: string): Promise<ClipJobView> {
  const body = await api.post(`video-generation/cancel/${jobId}`, { retry: 0, timeout: 30_000 }).json<{ success: true; job: ClipJobView }>();
  return body.job;
}

export async function retryClip(jobId: string): Promise<StartClipAnswer> {
  return api.post(`video-generation/retry/${jobId}`, { retry: 0, timeout: 60_000 }).json<StartClipAnswer>();
}

/** GET /api/credits/can-create?type=clip's answer. */
export type CanCreateClip = CanCreateContentResult;

export async function fetchCanCreateClip(): Promise<CanCreateClip> {
  const body = await api.get('credits/can-create', { searchParams: { type: 'clip' } }).json<{ success: true; data: CanCreateClip }>();
  return body.data;
}

/** Who makes clips on this server and how long one typically takes (GET /api/video-generation/timing). */
export interface ClipTiming {
  maker: ClipMaker;
  typicalSeconds: { min: number; max: number };
}

export async function fetchClipTiming(): Promise<ClipTiming> {
  const body = await api.get('video-generation/timing').json<{ success: true; data: ClipTiming }>();
  return body.data;
}
