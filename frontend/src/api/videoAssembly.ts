import type { AestheticChatState, AssemblyClip, AssemblyFormat, AssemblyJobView, AssemblyPlatform, ChatHistoryMessage } from '../../../domain/assembly';
import type { AssemblyEdit } from '../../../domain/assemblyTimeline';
import { api } from './client';

export type { AestheticChatState, AssemblyClip, AssemblyJobStatus, AssemblyJobView, ChatHistoryMessage, EditingConfig } from '../../../domain/assembly';

/** The user's approved clips across projects, for the clip selector (links signed). */
export async function fetchAssemblyClips(): Promise<AssemblyClip[]> {
  const body = await api.get('video-assembly/clips').json<{ success: true; clips: AssemblyClip[] }>();
  return body.clips;
}

/** The dry run: the edit the assembly will run (Shotstack-shaped, see domain/assemblyTimeline.ts) and a preview summary. */
export interface DryRunAnswer {
  success: true;
  request: AssemblyEdit;
  preview: unknown;
}

export interface AssembleInput {
  projectId: string;
  platform: AssemblyPlatform;
  clips: readonly Pick<AssemblyClip, 'id' | 'file_url' | 'file_name'>[];
  /** The formats to render (issue 44 item 4); absent or empty: the platform's own. */
  formats?: readonly AssemblyFormat[];
}

/** GET /api/projects/{id}/aesthetic: the project's chat state. */
export async function fetchChatState(projectId: string): Promise<AestheticChatState> {
  return api.get(`projects/${projectId}/aesthetic`).json<AestheticChatState>();
}

/** PUT /api/projects/{id}/aesthetic/clips: the selection as it is now (no message); answers the chat state. */
export async function syncChatSelection(projectId: string, clipIds: readonly string[], signal?: AbortSignal): Promise<AestheticChatState> {
  return api.put(`projects/${projectId}/aesthetic/clips`, { json: { selected_clips: clipIds }, signal }).json<AestheticChatState>();
}

/** POST /api/projects/{id}/aesthetic: a message ('__SYNC_CLIPS__' and '__CLEAR_CONVERSATION__' are actions). */
export async function sendChatMessage(
  projectId: string,
  input: { message: string; chatHistory: readonly ChatHistoryMessage[]; selectedClips: readonly AssemblyClip[]; aspectRatio: string | null },
): Promise<AestheticChatState> {
  return api
    .post(`projects/${projectId}/aesthetic`, {
      json: {
        message: input.message,
        chat_history: input.chatHistory,
        selected_clips: input.selectedClips.map((clip) => ({
          id: clip.id,
          file_name: clip.file_name,
          custom_name: clip.custom_name,
          duration: clip.duration,
          camera_movement: clip.camera_movement,
          aspect_ratio: clip.aspect_ratio,
          project_name: clip.project_name,
        })),
        aspect_ratio: input.aspectRatio,
      },
      retry: 0,
      timeout: 60_000,
    })
    .json<AestheticChatState>();
}

/** POST /api/video-assembly/dry-run: what the assembly of these clips, in this order, would render. */
export async function dryRunAssembly(input: { projectId: string; clipIds: readonly string[]; aspectRatio: string }, signal?: AbortSignal): Promise<DryRunAnswer> {
  return api.post('video-assembly/dry-run', { json: { projectId: input.projectId, clipIds: input.clipIds, aspectRatio: input.aspectRatio }, retry: 0, signal }).json<DryRunAnswer>();
}

/** POST /api/video/assemble: starts the assembly; answers its job id. */
export async function startAssembly(input: AssembleInput): Promise<string> {
  const body = await api
    .post('video/assemble', {
      json: {
        projectId: input.projectId,
        platform: input.platform,
        contentItems: input.clips.map((clip) => ({ id: clip.id, type: 'clip', file_url: clip.file_url, file_name: clip.file_name })),
        clipOrder: input.clips.map((clip) => clip.id),
        ...(input.formats && input.formats.length > 0 ? { formats: input.formats } : {}),
      },
      // a start is not idempotent: never resend it on its own
      retry: 0,
      timeout: 60_000,
    })
    .json<{ success: true; jobId: string }>();
  return body.jobId;
}

export async function fetchAssemblyJob(jobId: string): Promise<AssemblyJobView> {
  const body = await api.get('video/assemble', { searchParams: { jobId }, retry: 0 }).json<{ success: true; job: AssemblyJobView }>();
  return body.job;
}

export interface ProjectBrandPartsInput {
  titleCard?: boolean;
  titleText?: string | null;
  titleStyle?: 'overlay' | 'card';
  /** seconds, 1.5-3 */
  titleSeconds?: number;
  captions?: boolean;
  logo?: boolean;
  logoCorner?: 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';
  /** the logo's longer side as a fraction of the frame's shorter side, 0.06-0.3 */
  logoSize?: number;
  /** 0.2-1 */
  logoOpacity?: number;
  endCard?: boolean;
  /** seconds, 2-6 */
  endCardSeconds?: number;
}

/** The formats of the project's next assembly (null: the platform's own); answers the chat's state with the new editing config. */
export async function setProjectFormats(projectId: string, formats: AssemblyFormat[] | null): Promise<AestheticChatState> {
  return api.put(`projects/${encodeURIComponent(projectId)}/aesthetic/formats`, { json: { formats } }).json<AestheticChatState>();
}

/** The brand part switches of the project's assemblies; answers the chat's state with the new editing config. */
export async function setProjectBrandParts(projectId: string, input: ProjectBrandPartsInput): Promise<AestheticChatState> {
  return api.put(`projects/${encodeURIComponent(projectId)}/aesthetic/brand`, { json: input }).json<AestheticChatState>();
}
