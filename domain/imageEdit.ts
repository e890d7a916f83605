/**
 * The image edit job (spec 000: POST /api/ai-image-simple, workflow ENHANCED_IMAGE_EDITING) as the API, the
 * workflow, its activities and the front end share it. Pure types and rules: no Node APIs.
 */
import type { WorkspaceInput } from './workflowContracts/workspaceInput';
import type { StoredFile } from './approvals';

/** The `workflow` value the spec's request carries. */
export const ENHANCED_IMAGE_EDITING = 'ENHANCED_IMAGE_EDITING';

export const IMAGE_EDIT_FORMATS = ['square', 'landscape', 'portrait', 'original'] as const;
export type ImageEditFormat = (typeof IMAGE_EDIT_FORMATS)[number];
export const IMAGE_EDIT_QUALITIES = ['hd', 'standard'] as const;
export type ImageEditQuality = (typeof IMAGE_EDIT_QUALITIES)[number];

/** The spec's parameter defaults: format square, quality hd, upscaleScale 2. */
export const IMAGE_EDIT_DEFAULTS = { format: 'square', quality: 'hd', upscaleScale: 2 } as const satisfies {
  format: ImageEditFormat;
  quality: ImageEditQuality;
  upscaleScale: number;
};
export const UPSCALE_SCALES = [1, 2, 3, 4] as const;
/**
 * The longest side of the copy of the source an edit's provider is given ('hd' edits render 1024 px, so this keeps
 * detail for any provider). The stored render or image is never changed; the editor says so for a larger source.
 */
export const IMAGE_EDIT_SOURCE_MAX_SIDE = 2048;

/** The editor's note for a source larger than IMAGE_EDIT_SOURCE_MAX_SIDE, or null when it is sent as it is. */
export function sourceReductionNote(width: unknown, height: unknown): string | null {
  if (typeof width !== 'number' || typeof height !== 'number' || Math.max(width, height) <= IMAGE_EDIT_SOURCE_MAX_SIDE) return null;
  return `The AI works on a ${IMAGE_EDIT_SOURCE_MAX_SIDE} px copy of this ${width} × ${height} image; your original stays as it is.`;
}
/** Longest side an edit is made at, by quality (providers/local/imageEdit.ts renders at these). */
export const IMAGE_EDIT_SIDE: Record<ImageEditQuality, number> = { hd: 1024, standard: 768 };

const FORMAT_RATIO: Record<Exclude<ImageEditFormat, 'original'>, number> = { square: 1, landscape: 16 / 9, portrait: 9 / 16 };

export interface ImageEditOutcome {
  /** The stored result's size. */
  width: number;
  height: number;
  /** The part of the source the format keeps (centre crop), or null when the whole render is kept. */
  crop: { width: number; height: number } | null;
}

/**
 * What an edit of a `source`-sized image makes: the format's aspect (the source's own for 'original', else a centre
 * crop), made at most IMAGE_EDIT_SIDE[quality] px on the long side (never larger than the crop), then upscaled by
 * `scale`. With 'original' the result keeps the source's aspect exactly ("2048 × 1365" stays 3:2, not 2048 × 1364).
 */
export function imageEditOutcome(source: { width: number; height: number }, format: ImageEditFormat, quality: ImageEditQuality, scale: number): ImageEditOutcome {
  const ratio = format === 'original' ? source.width / source.height : FORMAT_RATIO[format];
  const cropWidth = Math.min(source.width, source.height * ratio);
  const cropHeight = cropWidth / ratio;
  const cropped = format !== 'original' && (Math.round(cropWidth) < source.width || Math.round(cropHeight) < source.height);
  const longest = Math.min(IMAGE_EDIT_SIDE[quality], Math.max(cropWidth, cropHeight)) * scale;
  const width = ratio >= 1 ? longest : longest * ratio;
  const height = ratio >= 1 ? longest / ratio : longest;
  return { width: Math.round(width), height: Math.round(height), crop: cropped ? { width: Math.round(cropWidth), height: Math.round(cropHeight) } : null };
}

/** The editor's words for what the chosen format and quality make of this source (the crop said before any is made). */
export function imageEditOutcomeNote(source: { width: number; height: number }, format: ImageEditFormat, quality: ImageEditQuality, scale: number): { result: string; crop: string | null } {
  const outcome = imageEditOutcome(source, format, quality, scale);
  const made = Math.round(Math.max(outcome.width, outcome.height) / scale);
  const result = `Result: ${outcome.width} × ${outcome.height} px (made at ${made} px on the long side${scale > 1 ? `, upscaled ${scale}×` : ''}).`;
  if (!outcome.crop) return { result, crop: null };
  const cutWidth = Math.round((1 - outcome.crop.width / source.width) * 100);
  const cutHeight = Math.round((1 - outcome.crop.height / source.height) * 100);
  const cut = cutWidth > 0 ? `${cutWidth}% of its width` : `${cutHeight}% of its height`;
  return { result, crop: `This format crops the ${source.width} × ${source.height} render to its centre ${outcome.crop.width} × ${outcome.crop.height}: ${cut} is cut. Choose “Keep original framing” to keep all of it.` };
}

export const IMAGE_PROMPT_MAX_LENGTH = 2000;
export const IMAGE_DESCRIPTION_MAX_LENGTH = 2000;

/** Where a job's files live before approval (bucket `images`): original, watermarked preview, thumbnail. */
export const PENDING_IMAGE_BUCKET = 'images' as const;

export function pendingImageFolder(approvalId: string): string {
  return `pending/${approvalId}`;
}

export function imageEditWorkflowId(jobId: string): string {
  return `image-edit-${jobId}`;
}

/** The aspect label of a framing; 'original' keeps the source's (null here: the stored size decides). */
export const FORMAT_ASPECT_LABEL: Record<Exclude<ImageEditFormat, 'original'>, string> = { square: '1:1', landscape: '16:9', portrait: '9:16' };

/** The render or AI image of the user's project an edit starts from, resolved by the API (never a foreign URL). */
export interface ImageEditSource {
  kind: 'render' | 'image';
  id: string;
  projectId: string;
  file: StoredFile;
  /** The row's stable (unsigned) file URL, recorded as the base image of the result. */
  fileUrl: string;
  fileName: string;
  fileSize: number;
}

/** Task queues the workflow hands its CPU-heavy activities and its approval child to. */
export interface ImageEditQueues {
  media: string;
  approvals: string;
}

/** `workspaceId`: the workspace the work is for and paid by (DESIGN.md "Teams (workspaces)"). */
export interface ImageEditWorkflowInput extends WorkspaceInput {
  jobId: string;
  /**
   * The member who started it: the reservation's, the ai_image_edits row's and the pending item's `created_by`. Absent
   * in histories from before workspaces, whose account was their starter's personal workspace.
   */
  actorId?: string | null;
  projectId: string;
  source: ImageEditSource;
  prompt: string;
  imageDescription: string | null;
  userIntent: string | null;
  platform: string;
  validateRefinement: boolean;
  format: ImageEditFormat;
  quality: ImageEditQuality;
  upscaleScale: number;
  queues: ImageEditQueues;
  /**
   * Set when the hosted provider calls back (AI_PROVIDER=fal with FAL_WEBHOOK_BASE_URL): the run submits its hosted
   * jobs with a callback and waits for it, looking at the provider only every `fallbackPollMs` for a lost one. Absent
   * (the local provider, no callback address, runs from before): one media activity that waits inside.
   */
  hostedCallbacks?: { fallbackPollMs: number };
}

export interface PromptRefinementResult {
  originalPrompt: string;
  refinedPrompt: string;
  /** 'rule-based' from the refiner; 'original' when validation kept the user's words instead. */
  refinementMethod: string;
}

/** An image a step wrote to storage, with what the next steps need to know about it. */
export interface StoredImage {
  file: StoredFile;
  mime: 'image/jpeg' | 'image/png' | 'image/webp';
  width: number;
  height: number;
  fileSize: number;
  model: string;
  description: string | null;
}

export interface SavedImageResult {
  status: 'pending_approval';
  approvalId: string;
  approvalWorkflowId: string;
  /** Nothing is charged at generation: the preview is free. */
  fractionalCostCharged: 0;
  /** Charged in full on approval. */
  fullCost: number;
  approvalDeadline: string;
  fileName: string;
  aspectRatio: string;
  watermarked: StoredFile;
}

/** What the workflow returns; the API adds signed links to the watermarked preview. */
export interface ImageEditResult {
  jobId: string;
  editId: string;
  promptRefinement: PromptRefinementResult;
  generatedImage: { width: number; height: number; mime: string; model: string; description: string | null };
  upscaledImage: { width: number; height: number; mime: string; model: string; scale: number; fileSize: number };
  savedImage: SavedImageResult;
}

/** An image of the reply, as a signed link. */
export interface SignedImage {
  url: string;
  width: number;
  height: number;
  mime: string;
  model: string;
}

/** The spec's reply: success, error, result (promptRefinement, generatedImage, upscaledImage, savedImage), metadata. */
export interface ImageEditResponse {
  success: true;
  error: null;
  result: {
    promptRefinement: PromptRefinementResult;
    generatedImage: SignedImage & { description: string | null };
    upscaledImage: SignedImage & { scale: number; fileSize: number };
    savedImage: {
      id: string;
      approvalId: string;
      status: 'pending_approval';
      fractionalCostCharged: 0;
      fullCost: number;
      approvalDeadline: string;
      fileName: string;
      aspectRatio: string;
      previewUrl: string;
    };
  } | null;
  metadata: {
    workflow: 'ENHANCED_IMAGE_EDITING';
    jobId: string;
    workflowId: string;
    status: 'completed' | 'processing';
    approvalWorkflowId: string | null;
    editId: string | null;
    projectId: string;
    baseImage: { type: 'render' | 'image'; id: string; fileName: string; fileSize: number };
    format: ImageEditFormat;
    quality: ImageEditQuality;
    upscaleScale: number;
    platform: string;
    processingTimeMs: number;
    /** REJECTION_STREAK_WARNING text when the last 4 decisions were rejections. */
    warning: string | null;
  };
}

/** The job statuses of spec 000 section 4 (cancelled is not used by image edits). */
export type ImageEditStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** The workflow's state, answered by its query (status, progress 0-100, message, error, result). */
export interface ImageEditState {
  status: ImageEditStatus;
  progress: number;
  message: string;
  error: string | null;
  /** The refusal's code when the start rule or a step said no (INSUFFICIENT_CREDITS, PENDING_LIMIT_REACHED ...). */
  errorCode: string | null;
  result: ImageEditResult | null;
}

/** Codes the workflow fails with (beside the start rule's own: INSUFFICIENT_CREDITS, PENDING_LIMIT_REACHED, REJECTION_STREAK_COOLDOWN). */
export const IMAGE_EDIT_ERRORS = {
  invalidBaseImage: 'INVALID_BASE_IMAGE',
  generationFailed: 'IMAGE_GENERATION_FAILED',
} as const;

export const IMAGE_EDIT_MESSAGES = {
  invalidBaseImage: 'The selected image could not be read. Please choose another render or image.',
  generationFailed: 'Image generation failed. Your credits were not charged. Please try again.',
  sentForApproval: 'Your image was sent for approval.',
} as const;
