/**
 * Enhance Renders (Beta, spec 001 sections 2-9): the one table of job modes and model options, the limits and
 * the texts, and the shapes the API, the draft-job workflow, its activities and the front end share.
 * Pure: no Node APIs (imported by workflows/ and the browser).
 */
import type { WorkspaceInput } from './workflowContracts/workspaceInput';
import type { StoredFile } from './approvals';
import { countText } from './plural';

/** The job modes of spec 001 section 7. `style_sync` is Sync Images: one pinned draft image is the style reference. */
export const ENHANCE_MODES = ['edit_render', 'style_transfer', 'basic_upscale', 'finish_upscale', 'render_enhance'] as const;
export type EnhanceMode = (typeof ENHANCE_MODES)[number];
export type DraftJobMode = EnhanceMode | 'style_sync';

export const ENHANCE_MODEL_IDS = ['nano-banana-edit', 'flux-kontext-max', 'style-transfer', 'esrgan', 'creative-upscale', 'render-enhance'] as const;
export type EnhanceModelId = (typeof ENHANCE_MODEL_IDS)[number];

/** The spec's model option (section 3): id, label, model identifier, allowsAttachments, promptEnabled, maxReferences, mode. */
export interface EnhanceModelOption {
  id: EnhanceModelId;
  label: string;
  /** The hosted model's identifier (fal.ai queue); the local provider does the same kind of work with sharp. */
  model: string;
  mode: EnhanceMode;
  allowsAttachments: boolean;
  promptEnabled: boolean;
  /** Attachments the user may add for this model (Nano Banana 3, Style Transfer 6, others none). */
  maxReferences: number;
  /** Whether a run needs the user's words (edits do; style transfer has a default instruction; the rest take none). */
  promptRequired: boolean;
  /** Upscale factor of the upscale modes. */
  scale?: number;
  /** Shown beside the option (Creative Upscale takes about a minute). */
  hint?: string;
}

/** The fixed photoreal architectural prompt of render_enhance (run on FLUX Kontext Max). */
export const RENDER_ENHANCE_PROMPT =
  'Turn this architectural render into a photorealistic photograph: natural daylight and soft shadows, true-to-life materials ' +
  '(glass reflections, timber grain, concrete and stone texture), realistic vegetation and sky, balanced exposure and subtle depth. ' +
  'Keep the building geometry, camera angle, composition and every design element exactly as they are.';

/** What a style transfer asks for when the user adds no words. */
export const STYLE_TRANSFER_DEFAULT_PROMPT =
  'Apply the colour palette, lighting, mood and material look of the reference images to the first image, keeping its architecture, geometry and composition unchanged.';

/** What Sync Images asks for: the targets take the pinned image's look. */
export const STYLE_SYNC_DEFAULT_PROMPT =
  'Match the lighting, colour grading, sky and atmosphere of the reference image, keeping the geometry, materials and composition of this render unchanged.';

export const ENHANCE_MODEL_OPTIONS: readonly EnhanceModelOption[] = [
  { id: 'nano-banana-edit', label: 'Nano Banana Edit', model: 'fal-ai/nano-banana/edit', mode: 'edit_render', allowsAttachments: true, promptEnabled: true, promptRequired: true, maxReferences: 3 },
  { id: 'flux-kontext-max', label: 'FLUX Kontext Max', model: 'fal-ai/flux-pro/kontext/max', mode: 'edit_render', allowsAttachments: false, promptEnabled: true, promptRequired: true, maxReferences: 0 },
  { id: 'style-transfer', label: 'Style Transfer', model: 'fal-ai/flux-pro/kontext/max/multi', mode: 'style_transfer', allowsAttachments: true, promptEnabled: true, promptRequired: false, maxReferences: 6 },
  { id: 'esrgan', label: 'Basic Upscale', model: 'fal-ai/esrgan', mode: 'basic_upscale', allowsAttachments: false, promptEnabled: false, promptRequired: false, maxReferences: 0, scale: 2 },
  {
    id: 'creative-upscale',
    label: 'Creative Upscale',
    model: 'fal-ai/creative-upscaler',
    mode: 'finish_upscale',
    allowsAttachments: false,
    promptEnabled: false,
    promptRequired: false,
    maxReferences: 0,
    scale: 2,
    hint: 'Takes about 1 minute',
  },
  { id: 'render-enhance', label: 'Render Enhance', model: 'fal-ai/flux-pro/kontext/max', mode: 'render_enhance', allowsAttachments: false, promptEnabled: false, promptRequired: false, maxReferences: 0 },
];

/** The model Sync Images switches to (spec 001 section 4). */
export const SYNC_MODEL_ID: EnhanceModelId = 'nano-banana-edit';

export function modelOption(id: string): EnhanceModelOption | null {
  return ENHANCE_MODEL_OPTIONS.find((m) => m.id === id) ?? null;
}

/** The mode's default model (the first option of that mode). */
export function defaultModelFor(mode: EnhanceMode): EnhanceModelOption {
  const found = ENHANCE_MODEL_OPTIONS.find((m) => m.mode === mode);
  if (!found) throw new Error(`no model for mode ${mode}`);
  return found;
}

/**
 * Spec 001 section 9, except its compression of uploads (4,718,592 bytes and more to 1920 px): drafts keep each upload
 * exactly as it was sent, up to 150 MB, and the models work on a copy (DRAFT_MODEL_INPUT, docs/architecture.md).
 */
export const DRAFT_LIMITS = {
  maxImagesPerDraft: 4,
  dropZoneMaxFiles: 5,
  parallelUploads: 3,
  /** Versions the history dialog shows (Current, Previous, Back 2 ... Back 7); older files are removed. */
  historyVersions: 8,
  /** At most this many references go with one job, whatever the model allows as attachments. */
  maxReferencesSent: 4,
  autosaveDebounceMs: 800,
  quickToolPolls: 6,
  quickToolPollIntervalMs: 3000,
  dispatchRetryWaitsMs: [700, 1400],
  /** Characters of 'Failed to start jobs: {detail}'. */
  dispatchErrorMaxLength: 160,
  draftNameMaxLength: 200,
  promptMaxLength: 2000,
} as const;

/**
 * What a model is given: a copy of the image (the stored upload or version is never changed), reduced only when it is
 * larger than the model takes. Up to `maxSide` px on the longest side; an upscale's input so that its result stays
 * within `upscaleResultMaxSide` (the largest image a draft version may be); references, which lend only their look,
 * up to `referenceMaxSide`. The activity makes the copy (activities/draftJob.ts); the prompt bar says so.
 */
export const DRAFT_MODEL_INPUT = {
  maxSide: 4096,
  upscaleResultMaxSide: 8192,
  referenceMaxSide: 2048,
} as const;

/** The longest side of the copy `option` works on. */
export function modelInputMaxSide(option: Pick<EnhanceModelOption, 'mode' | 'scale'>): number {
  const isUpscale = option.mode === 'basic_upscale' || option.mode === 'finish_upscale';
  if (!isUpscale) return DRAFT_MODEL_INPUT.maxSide;
  return Math.min(DRAFT_MODEL_INPUT.maxSide, Math.floor(DRAFT_MODEL_INPUT.upscaleResultMaxSide / Math.max(1, option.scale ?? 2)));
}

/** The prompt bar's note on the working copy of `option` (shown near Run). */
export function workingCopyNote(option: Pick<EnhanceModelOption, 'mode' | 'scale'>): string {
  const side = modelInputMaxSide(option);
  const upscale = option.mode === 'basic_upscale' || option.mode === 'finish_upscale';
  const result = upscale ? ` (results up to ${side * Math.max(1, option.scale ?? 2)} px)` : '';
  return `Images over ${side} px are worked on as a ${side} px copy${result}; your uploads stay as they are.`;
}

/**
 * The spec's texts (sections 5 and 8), verbatim except that counts take the noun in the right number ('1 file',
 * '2 files') where the spec writes 'file(s)', plus the server's own refusals.
 */
export const ENHANCE_MSG = {
  limitReached: `Limit reached: maximum ${DRAFT_LIMITS.maxImagesPerDraft} images per draft`,
  onlyMoreAllowed: (allowed: number, ignored: number) => `Only ${countText(allowed, 'more image', 'more images')} allowed. Ignored ${ignored}.`,
  openDraftFirst: 'Open or create a draft project first',
  selectImage: 'Select at least one image to transform',
  waitForSaving: 'Please wait a moment for images to finish saving, then try again.',
  attachmentsDisabledInSync: 'Attachments are disabled while Sync Images is active',
  maxAttachments: (n: number) => `Max ${countText(n, 'attachment')} for this model`,
  attachmentsModelOnly: 'Attachments are available only for Nano Banana and Style Transfer',
  noPrompt: 'This action takes no prompt.',
  startedJobs: (n: number) => `Started ${countText(n, 'job')}`,
  failedToStartJobs: 'Failed to start jobs',
  failedToStartJobsWith: (detail: string) => `Failed to start jobs: ${detail}`.slice(0, 'Failed to start jobs: '.length + DRAFT_LIMITS.dispatchErrorMaxLength),
  uploaded: (n: number) => `Uploaded ${countText(n, 'file')}`,
  uploadFailed: (n: number) => `Upload failed (${countText(n, 'file')})`,
  restoreFailed: 'Restore failed',
  // the server's own
  locked: 'Enhance Renders is locked. Enter the access code to unlock it.',
  notConfigured: 'Enhance Renders is not available on this server (no access code is configured).',
  wrongCode: 'That access code is not valid.',
  tooManyGuesses: (when: string) => `Too many access code attempts. Please try again in ${when}.`,
  draftNameRequired: 'Draft name is required',
  draftNotFound: 'Draft not found',
  imageNotFound: 'Image not found in this draft',
  versionNotFound: 'That version is not in the image history',
  promptRequired: 'Please describe the edit you want',
  referencesPerJob: `At most ${DRAFT_LIMITS.maxReferencesSent} references are sent per job`,
  referenceNotFound: 'A reference image was not found. Attach it again.',
  syncNeedsPinned: 'Pin one image as the style reference first',
  styleNeedsReference: 'Attach at least one reference image for Style Transfer',
  pinnedNotTarget: 'The pinned style image cannot be a target',
  jobAlreadyRunning: 'This image is still processing',
  jobFailed: 'The edit failed. Please try again.',
  modelTimedOut: 'The model did not finish in time. Please try again.',
  modelPaused: 'The model is paused after several failures of your images. Try again in a minute.',
  invalidSourceImage: 'This image could not be read. Remove it and upload it again.',
} as const;

/** Dispatch's `mode` must agree with the model's own (Sync Images: `style_sync` with the sync model). */
export function modeMatchesModel(mode: DraftJobMode, model: EnhanceModelOption): boolean {
  return mode === 'style_sync' ? model.id === SYNC_MODEL_ID : model.mode === mode;
}

/** One version of a draft image: its stable (unsigned) file URL, where it lives, and what made it. */
export interface DraftVersion {
  url: string;
  storage: StoredFile;
  created_at: string;
  /** 'upload' for the first version, else the job mode that made it. */
  source: 'upload' | DraftJobMode;
  model_id?: string;
  prompt?: string | null;
  job_id?: string;
}

/**
 * A draft image's metadata: the current version's storage, the previous version's URL and the history, newest
 * first, whose first entry is the current version (at most DRAFT_LIMITS.historyVersions entries).
 */
export interface DraftImageMetadata {
  storage: StoredFile;
  previous_url: string | null;
  history: DraftVersion[];
  width?: number;
  height?: number;
  mime?: string;
}

/** The metadata after `version` became current: pushed on top, cut to the limit. Returns what fell off the end. */
export function pushVersion(metadata: DraftImageMetadata, version: DraftVersion): { metadata: DraftImageMetadata; evicted: DraftVersion[] } {
  const rest = metadata.history.filter((v) => v.url !== version.url);
  const history = [version, ...rest];
  const kept = history.slice(0, DRAFT_LIMITS.historyVersions);
  return {
    metadata: { ...metadata, storage: version.storage, previous_url: kept[1]?.url ?? null, history: kept },
    evicted: history.slice(DRAFT_LIMITS.historyVersions),
  };
}

/** The metadata after an older version was restored: it moves to the top; nothing is removed (undo and redo swap). */
export function restoreVersion(metadata: DraftImageMetadata, url: string): DraftImageMetadata | null {
  const found = metadata.history.find((v) => v.url === url);
  if (!found) return null;
  const history = [found, ...metadata.history.filter((v) => v.url !== url)];
  return { ...metadata, storage: found.storage, previous_url: history[1]?.url ?? null, history };
}

/** The label the history dialog gives the version at `index` (0 newest): Current, Previous, Back N. */
export function versionLabel(index: number): string {
  return index === 0 ? 'Current' : index === 1 ? 'Previous' : `Back ${index}`;
}

export function draftJobWorkflowId(jobId: string): string {
  return `draft-job-${jobId}`;
}

/** Where a draft's files live in the `drafts` bucket: everything of a draft under one prefix. */
export function draftFolder(userId: string, draftId: string): string {
  return `${userId}/${draftId}`;
}

export const DRAFTS_BUCKET = 'drafts' as const;

/** `workspaceId`: the workspace the work is for and paid by (DESIGN.md "Teams (workspaces)"). */
export interface DraftJobWorkflowInput extends WorkspaceInput {
  jobId: string;
  /** The member who dispatched it (draft_jobs.created_by, written at dispatch); absent from runs before workspaces. */
  actorId?: string | null;
  draftId: string;
  imageId: string;
  mode: DraftJobMode;
  modelId: EnhanceModelId;
  /** The words the model gets (the user's, or the mode's fixed or default instruction). */
  prompt: string | null;
  /** The image's current version when the job was dispatched. */
  source: StoredFile;
  /** Reference images (attachments, or the pinned image in Sync Images), at most DRAFT_LIMITS.maxReferencesSent. */
  references: StoredFile[];
  /** The media task queue the model run goes to. */
  mediaQueue: string;
}

export type DraftJobStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface DraftJobResult {
  jobId: string;
  imageId: string;
  version: DraftVersion;
  /** Versions that fell out of the history (their files were removed). */
  evicted: number;
}

/** The workflow's state, answered by its query. */
export interface DraftJobState {
  status: DraftJobStatus;
  progress: number;
  message: string;
  error: string | null;
  result: DraftJobResult | null;
}

export const DRAFT_JOB_ERRORS = {
  invalidSource: 'DRAFT_SOURCE_INVALID',
  failed: 'DRAFT_JOB_FAILED',
  imageGone: 'DRAFT_IMAGE_GONE',
} as const;

/** The vision prompt call (POST /api/ai-enhance-prompt/vision). */
export const VISION_PROMPT_MODES = ['attach', 'style_sync'] as const;
export type VisionPromptMode = (typeof VISION_PROMPT_MODES)[number];

/** The spec's dispatch reply: success, dispatched, results[] (ok, error, data.details), error. */
export interface DispatchResultItem {
  imageId: string;
  ok: boolean;
  error: string | null;
  data: { jobId?: string; workflowId?: string; status?: DraftJobStatus; details?: string };
}

export interface DispatchResponse {
  success: boolean;
  dispatched: number;
  results: DispatchResultItem[];
  error: string | null;
}
