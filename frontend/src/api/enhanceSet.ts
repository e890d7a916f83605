/**
 * Enhance Renders calls (spec 001 section 7): access, draft projects, draft images, job dispatch and the vision
 * prompt enhancer. The server acts for the session's user; every call answers 403 until the code was accepted.
 */
import { HTTPError, TimeoutError } from 'ky';
import { withDispatchRetry, type DispatchReply } from '../views/EnhanceRenders/dispatchRules';
import type { DraftJobMode, VisionPromptMode } from '../../../domain/enhanceRenders';
import { api } from './client';

export interface DraftSummary {
  id: string;
  name: string;
  status: string;
  updated_at: string;
  image_count?: number;
  thumbnail_url?: string | null;
}

/** One version of an image: its stable address (what restore names) and a signed link to show it. */
export interface DraftHistoryEntry {
  url: string;
  signed_url?: string;
  created_at?: string;
  source?: string;
}

export interface DraftImageMetadata {
  storage?: unknown;
  /** a link to the previous version (history[1]), or null when there is none */
  previous_url?: string | null;
  /** newest first; the first entry is the current version */
  history?: DraftHistoryEntry[];
  /** the current version's pixel size */
  width?: number;
  height?: number;
}

export interface DraftImageJob {
  id: string;
  status: string;
  mode?: string;
  error?: string | null;
  /** a failed job whose notice the user dismissed */
  dismissed?: boolean;
}

/** A draft image as GET drafts/get answers it. */
export interface DraftImage {
  id: string;
  name: string;
  /** the stable address of the uploaded original */
  source_url: string;
  /** a signed link to the current version */
  resolved_url: string | null;
  metadata: DraftImageMetadata;
  order_index: number;
  source_type: string;
  /** the image's unfinished job ('Processing…'), or null */
  job?: DraftImageJob | null;
  /** its latest job, finished or not */
  last_job?: DraftImageJob | null;
}

export interface DraftDetail {
  id: string;
  name: string;
  status?: string;
  images: DraftImage[];
}

export interface NewDraftImage {
  source_type: 'uploaded';
  source_url: string;
  name: string;
  order_index: number;
  metadata: Record<string, unknown>;
}

/** Whether the server remembers the unlock for this account. */
export async function fetchEnhanceAccess(): Promise<{ configured: boolean; unlocked: boolean }> {
  const body = await api.get('enhance-set/access').json<{ success: true; configured: boolean; unlocked: boolean }>();
  return { configured: body.configured, unlocked: body.unlocked };
}

/** Sends the access code; true when the server accepted it, false when it refused it (wrong code). */
export async function unlockEnhance(code: string): Promise<boolean> {
  try {
    const body = await api.post('enhance-set/access/unlock', { json: { code } }).json<{ success: boolean; unlocked?: boolean }>();
    return body.success === true && body.unlocked !== false;
  } catch (error) {
    if (error instanceof HTTPError && error.response.status < 500 && error.response.status !== 429) return false;
    throw error;
  }
}

export async function fetchDrafts(): Promise<DraftSummary[]> {
  const body = await api.get('enhance-set/drafts/list').json<{ success: true; drafts: DraftSummary[] }>();
  return body.drafts;
}

export async function createDraft(name: string): Promise<string> {
  const body = await api.post('enhance-set/drafts/create', { json: { name } }).json<{ success: true; draft: { id: string } }>();
  return body.draft.id;
}

export async function commitDraft(draftId: string, newProjectName: string): Promise<{ projectId: string; projectName: string }> {
  return api.post('enhance-set/drafts/commit', { json: { draftId, newProjectName } }).json<{ success: true; projectId: string; projectName: string }>();
}

export async function deleteDraft(draftId: string): Promise<void> {
  await api.post('enhance-set/drafts/delete', { json: { draftId } });
}

/** Read fresh every time: the server answers `Cache-Control: no-store` and the browser is told the same. */
export async function fetchDraft(draftId: string): Promise<DraftDetail> {
  const body = await api
    .get('enhance-set/drafts/get', { searchParams: { draftId }, cache: 'no-store' })
    .json<{ success: true; draft: { id: string; name: string; status?: string }; images: DraftImage[] }>();
  return { id: body.draft.id, name: body.draft.name, status: body.draft.status, images: [...body.images].sort((a, b) => a.order_index - b.order_index) };
}

/** A stored upload: `url` is a signed link (to show it), `file_url` its stable address (what add-images takes). */
export interface DraftUpload {
  url: string;
  file_url: string;
  storage: unknown;
}

/**
 * Stores one file in the draft's folder: an image to register with add-images, or a reference attachment. The
 * fields go before the file, so the server checks them before it stores a byte.
 */
export async function uploadDraftFile(draftId: string, file: File, purpose: 'image' | 'reference' = 'image'): Promise<DraftUpload> {
  const form = new FormData();
  form.append('draftId', draftId);
  form.append('purpose', purpose);
  form.append('file', file, file.name);
  const body = await api.post('enhance-set/drafts/upload', { body: form, timeout: 120_000 }).json<{ success: true } & Partial<DraftUpload> & { url: string }>();
  return { url: body.url, file_url: body.file_url ?? body.url, storage: body.storage };
}

export async function addDraftImages(draftId: string, images: NewDraftImage[]): Promise<void> {
  await api.post('enhance-set/drafts/add-images', { json: { draftId, images } });
}

export async function removeDraftImage(draftId: string, imageId: string, sourceUrl: string): Promise<void> {
  await api.post('enhance-set/drafts/remove-image', { json: { draftId, imageId, sourceUrl } });
}

export async function restoreDraftVersion(draftId: string, imageId: string, versionUrl: string): Promise<void> {
  await api.post('enhance-set/drafts/restore-version', { json: { draftId, imageId, versionUrl } });
}

export interface DispatchRequest {
  draftId: string;
  imageIds: string[];
  prompt: string;
  modelId: string;
  mode: DraftJobMode;
  references: string[];
  /** Sync Images: the pinned image, whose look the targets take */
  syncImageId?: string | null;
}

/** A failure that never reached the server's answer: offline, connection reset, timed out. */
export function isNetworkFailure(error: unknown): boolean {
  if (error instanceof HTTPError) return false;
  return error instanceof TimeoutError || error instanceof TypeError;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts one job per image. A network failure is retried after 700 ms, then 1400 ms; an answer of the server
 * (also a refusal such as 400 or 403) is returned as its reply, for the caller's toast.
 */
/** Runs a failed job again on its image with the same model, prompt and references. */
export async function retryDraftJob(jobId: string): Promise<DispatchReply> {
  return api.post('enhance-set/jobs/retry', { json: { jobId }, retry: 0 }).json<DispatchReply>();
}

/** The user has read a failed job's notice: its card shows it no more. */
export async function dismissDraftJob(jobId: string): Promise<void> {
  await api.post('enhance-set/jobs/dismiss', { json: { jobId } });
}

export async function dispatchJobs(request: DispatchRequest): Promise<DispatchReply> {
  return withDispatchRetry(
    async () => {
      try {
        return await api.post('enhance-set/jobs/dispatch', { json: request, retry: 0 }).json<DispatchReply>();
      } catch (error) {
        if (error instanceof HTTPError) {
          try {
            const body = (await error.response.clone().json()) as Partial<DispatchReply>;
            return { success: false, dispatched: 0, results: body.results ?? [], error: typeof body.error === 'string' ? body.error : error.message };
          } catch {
            return { success: false, dispatched: 0, results: [], error: error.message };
          }
        }
        throw error;
      }
    },
    { isNetworkFailure, sleep },
  );
}

export async function enhancePromptWithVision(input: { mode: VisionPromptMode; prompt: string; imageUrls: string[]; referenceUrls: string[] }): Promise<string> {
  const body = await api.post('ai-enhance-prompt/vision', { json: input, timeout: 60_000 }).json<{ success: boolean; enhancedPrompt?: string }>();
  if (!body.success || typeof body.enhancedPrompt !== 'string' || !body.enhancedPrompt.trim()) throw new Error('No enhanced prompt');
  return body.enhancedPrompt;
}
