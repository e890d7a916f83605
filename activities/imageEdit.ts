/**
 * Activities of the image edit workflow (workflows/imageEdit.ts). Credits and records run on the generation
 * queue; the provider calls and sharp work (generate, upscale, previews) are routed to the media queue.
 * Every step is safe to run again: files of a job live under images/pending/<approvalId>/ with fixed names and a
 * retry replaces what an interrupted attempt left; rows are keyed by the workflow id.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import sharp from 'sharp';
import { DomainError } from '../domain/errors';
import { aspectRatioLabel } from '../domain/orientation';
import {
  FORMAT_ASPECT_LABEL,
  IMAGE_EDIT_ERRORS,
  IMAGE_EDIT_MESSAGES,
  IMAGE_PROMPT_MAX_LENGTH,
  PENDING_IMAGE_BUCKET,
  pendingImageFolder,
  type ImageEditFormat,
  type ImageEditQuality,
  type ImageEditResult,
  type ImageEditSource,
  type PromptRefinementResult,
  type StoredImage,
} from '../domain/imageEdit';
import type { StoredFile } from '../domain/approvals';
import type { GeneratedImage, HostedImageJobs } from '../providers/types';
import type { AppConfig } from '../config/env';
import { publishEvent } from '../services/platform/events';
import { checkAndReserve, releaseReservation } from '../services/billing/credits';
import { actorOf, createdByValue } from '../services/generation/actor';
import { recordJobEvent } from '../services/integrations/webhookEvents';
import { fileUrl, type ObjectStorage } from '../storage';
import type { ActivityDeps } from './deps';
import type { FailureDetails } from '../domain/failureDetails';
import { reportingRefusals } from './failures';
import { extensionForMime, type ImageMime } from './imageMedia';
import { inProcessImageWork } from './imageWork';
import { decodeFalJobId } from '../providers/fal/providers';
import { currentTraceId } from '../config/tracing';

const HEARTBEAT_EVERY_MS = 5000;
const PG_FOREIGN_KEY_VIOLATION = '23503';
const VARIANT_EXTENSIONS = ['jpg', 'png', 'webp'] as const;

function invalidBaseImage(cause: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: IMAGE_EDIT_ERRORS.invalidBaseImage,
    message: IMAGE_EDIT_MESSAGES.invalidBaseImage,
    nonRetryable: true,
    details: [{ status: 400 } satisfies FailureDetails],
    cause: cause instanceof Error ? cause : undefined,
  });
}

/** Heartbeats while a long call runs, so a dead worker is noticed within the heartbeat timeout. */
async function withHeartbeats<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

async function readObject(objects: ObjectStorage, file: StoredFile): Promise<Buffer> {
  const stream = await objects.read(file.bucket, file.path);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Writes `<folder>/<name>.<ext>`, first removing what an interrupted attempt may have left under any extension. */
async function replaceVariant(objects: ObjectStorage, folder: string, name: string, ext: string, data: Buffer): Promise<StoredFile> {
  await objects.remove(
    PENDING_IMAGE_BUCKET,
    VARIANT_EXTENSIONS.map((e) => `${folder}/${name}.${e}`),
  );
  const path = `${folder}/${name}.${ext}`;
  await objects.put(PENDING_IMAGE_BUCKET, path, data);
  return { bucket: PENDING_IMAGE_BUCKET, path };
}

function asImageMime(mime: string): ImageMime {
  return mime === 'image/png' || mime === 'image/webp' ? mime : 'image/jpeg';
}

/** A provider's image written as the item's `<name>.<ext>` variant, described for the next steps. */
async function storeProviderImage(objects: ObjectStorage, approvalId: string, name: 'generated' | 'original', result: GeneratedImage): Promise<StoredImage> {
  const mime = asImageMime(result.mime);
  const file = await replaceVariant(objects, pendingImageFolder(approvalId), name, extensionForMime(mime), result.image);
  return {
    file,
    mime,
    width: result.width,
    height: result.height,
    fileSize: result.image.length,
    model: result.model,
    description: result.description ?? null,
  };
}

/**
 * With 'original' framing the result keeps the source's aspect exactly: an edit made at an even size and upscaled
 * can be a pixel off (2048 × 1365 came back 2048 × 1364); such a result is resampled to the size imageEditOutcome
 * promises. A result further off (a hosted model's own size) is left as it is.
 */
async function exactFraming(result: GeneratedImage, source: Buffer, input: Pick<MakeEditedImageInput, 'format' | 'quality' | 'scale'>): Promise<GeneratedImage> {
  if (input.format !== 'original') return result;
  const meta = await sharp(source).metadata();
  const rotated = (meta.orientation ?? 1) >= 5;
  const width = rotated ? meta.height : meta.width;
  const height = rotated ? meta.width : meta.height;
  if (!width || !height) return result;
  const longest = Math.max(result.width, result.height);
  const target = width >= height ? { width: longest, height: Math.round((height * longest) / width) } : { width: Math.round((width * longest) / height), height: longest };
  const off = Math.abs(target.width - result.width) + Math.abs(target.height - result.height);
  if (off === 0 || off > 4) return result;
  const resized = sharp(result.image).resize(target.width, target.height, { fit: 'fill', kernel: 'lanczos3' });
  const encoded = result.mime === 'image/png' ? resized.png() : result.mime === 'image/webp' ? resized.webp({ quality: 92 }) : resized.jpeg({ quality: 92 });
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
  return { ...result, image: data, width: info.width, height: info.height };
}

export interface ReserveImageEditInput {
  /** The account (workspace) the image is for. */
  workspaceId: string;
  /** The member who started it (the reservation's created_by); absent from runs before workspaces. */
  actorId?: string | null;
  workflowId: string;
  projectId: string;
}

export interface GenerateEditedImageInput {
  approvalId: string;
  source: ImageEditSource;
  prompt: string;
  format: ImageEditFormat;
  quality: ImageEditQuality;
}

export interface UpscaleEditedImageInput {
  approvalId: string;
  generated: StoredImage;
  scale: number;
}

export interface ImagePreviews {
  watermarked: StoredFile;
  thumbnailPath: string;
  aspectRatio: string;
}

export interface MakeEditedImageInput extends GenerateEditedImageInput {
  scale: number;
}

/** What the one media step made: the provider's edit (described, not kept), the stored original and its previews. */
export interface MadeEditedImage {
  generated: Omit<StoredImage, 'file'>;
  original: StoredImage;
  previews: ImagePreviews;
}

export interface RecordImageEditInput {
  workflowId: string;
  workspaceId: string;
  /** The member who started it (ai_image_edits.created_by); absent from runs before workspaces. */
  actorId?: string | null;
  projectId: string;
  originalImageUrl: string;
  editPrompt: string;
  status: 'completed' | 'failed' | 'cancelled';
  editedImage: StoredFile | null;
  editData: Record<string, unknown>;
  error: string | null;
  /** What the status call answers with (runs from before the status row leave them out: defaults below). */
  /** The completed run's answer; its editId is the row's own id, added here. */
  result?: Omit<ImageEditResult, 'editId'> | null;
  errorCode?: string | null;
  message?: string | null;
  /** The progress it ended at (a failure's step); 100 when absent. */
  progress?: number;
  /** false for a run refused before its reservation: it never started, so no job.failed event either. */
  started?: boolean;
}

/** A running edit's step on its row (workflows/imageEdit.ts writes one at each step; the status call reads it). */
export interface ImageEditProgressInput {
  workflowId: string;
  workspaceId: string;
  actorId?: string | null;
  projectId: string;
  originalImageUrl: string;
  editPrompt: string;
  jobId: string;
  progress: number;
  message: string;
}

/** The callback route of the API (api/routes/providerCallbacks.ts): fal calls it when an image edit's hosted job ends. */
export function imageEditCallbackUrl(baseUrl: string, jobId: string): string {
  return `${baseUrl}/api/provider-callbacks/fal?image=${encodeURIComponent(jobId)}`;
}

/** A hosted job submitted with a callback: the workflow waits for the callback's signal naming `requestId`. */
export interface HostedImageJob {
  /** The provider's job id (self-contained: `fal:<submittedAt>:<requestId>:<model>`). */
  jobId: string;
  requestId: string;
  /** Longest wait for it (ms), from its submission. */
  maxWaitMs: number;
}

export interface HostedEditInput extends MakeEditedImageInput {
  workflowId: string;
  jobId: string;
}

/** The edit submitted (the workflow waits for it), or, with no hosted provider or callback address, the whole media part made. */
export type HostedEditStart = { submitted: HostedImageJob; made?: undefined } | { made: MadeEditedImage; submitted?: undefined };

/** After the edit's callback: the edit described and the upscale submitted, or (no hosted upscale) everything made. */
export type HostedEditContinued =
  | { generated: Omit<StoredImage, 'file'>; submitted: HostedImageJob; made?: undefined }
  | { made: MadeEditedImage; submitted?: undefined };

export interface HostedLookInput {
  workflowId: string;
  providerJobId: string;
  kind: 'edit' | 'upscale';
  /** The run gives up after this look: a job still running is cancelled. */
  giveUp?: boolean;
}

/** The job id an image edit's workflow id carries (`image-edit-<jobId>`), as the Activity list and status call name it. */
function imageEditJobId(workflowId: string): string {
  return workflowId.replace(/^image-edit-/, '');
}

export function createImageEditActivities(
  deps: Pick<ActivityDeps, 'knex' | 'storage' | 'providers' | 'logger' | 'imageWork'> & { config?: Pick<AppConfig, 'providerKind' | 'falWebhookBaseUrl'> },
) {
  const { objects } = deps.storage;
  const imageWork = deps.imageWork ?? inProcessImageWork;
  // with FAL_WEBHOOK_BASE_URL the hosted provider calls back; the workflow waits for that instead of an activity polling
  const callbackBase = deps.config?.providerKind === 'fal' ? deps.config.falWebhookBaseUrl : null;
  const hostedEdit = callbackBase ? deps.providers.imageEdit.hosted : undefined;
  const hostedUpscale = callbackBase ? deps.providers.upscale.hosted : undefined;
  const hostedOf = (kind: 'edit' | 'upscale'): HostedImageJobs<unknown> | undefined => (kind === 'edit' ? hostedEdit : hostedUpscale) as HostedImageJobs<unknown> | undefined;
  const ACTIVE = ['pending', 'processing'];

  /** The provider job the run's row waits for now (null: none yet, or no row). */
  const waitingFor = async (workflowId: string): Promise<string | null> => {
    const row = (await deps.knex('ai_image_edits').where({ workflow_id: workflowId }).first('provider_job_id')) as { provider_job_id: string | null } | undefined;
    return row?.provider_job_id ?? null;
  };

  /**
   * The row now waits for `providerJobId` (after `previous`, the job it waited for before): a callback for it is
   * claimed once from here. A row that has ended (or is gone) is left as it is: its callbacks then change nothing.
   */
  const awaitOnRow = async (workflowId: string, providerJobId: string, previous: string | null): Promise<void> => {
    const query = deps.knex('ai_image_edits').where({ workflow_id: workflowId }).whereIn('status', ACTIVE);
    await (previous === null ? query.whereNull('provider_job_id') : query.where({ provider_job_id: previous })).update({
      provider_job_id: providerJobId,
      provider_called_back_at: null,
      updated_at: deps.knex.fn.now(),
    });
  };

  /** The upscaled result framed exactly, stored as the private original beside its watermarked preview and thumbnail. */
  const storeMade = async (
    input: Pick<MakeEditedImageInput, 'approvalId' | 'format' | 'quality' | 'scale'>,
    source: Buffer,
    generated: Omit<StoredImage, 'file'>,
    upscaledAsGiven: GeneratedImage,
  ): Promise<MadeEditedImage> => {
    const upscaled = await exactFraming(upscaledAsGiven, source, input);
    const folder = pendingImageFolder(input.approvalId);
    // each written as soon as it is made
    const [original, watermarked, thumb] = await Promise.all([
      storeProviderImage(objects, input.approvalId, 'original', upscaled),
      imageWork.watermarkPreview(upscaled.image).then((preview) => replaceVariant(objects, folder, 'preview', 'jpg', preview.data)),
      imageWork.imageThumbnail(upscaled.image).then((thumbnail) => replaceVariant(objects, folder, 'thumb', 'webp', thumbnail)),
    ]);
    const aspectRatio = input.format === 'original' ? aspectRatioLabel(upscaled.width, upscaled.height) : FORMAT_ASPECT_LABEL[input.format];
    return { generated, original, previews: { watermarked, thumbnailPath: thumb.path, aspectRatio } };
  };

  const describeGenerated = (edited: GeneratedImage): Omit<StoredImage, 'file'> => ({
    mime: asImageMime(edited.mime),
    width: edited.width,
    height: edited.height,
    fileSize: edited.image.length,
    model: edited.model,
    description: edited.description ?? null,
  });

  /** The base image prepared for the provider; a missing file or one sharp cannot read fails for good (a retry would see the same). */
  const readSource = async (source: ImageEditSource): Promise<Buffer> => {
    try {
      const local = await objects.localFile(source.file.bucket, source.file.path);
      try {
        return await imageWork.readSourceImage(local.path);
      } finally {
        await local.release();
      }
    } catch (err) {
      throw invalidBaseImage(err);
    }
  };

  return {
    /** The start rule and the 1-credit reservation under one profile lock; the workflow id is the idempotency key. */
    reserveImageEditCredits: (input: ReserveImageEditInput): Promise<{ reservationId: string }> =>
      reportingRefusals(async () => {
        // the reservation is where an image edit starts (it has no row until it ends): job.started with it, once
        const reservation = await deps.knex.transaction(async (trx) => {
          const reserved = await checkAndReserve(trx, {
            workspaceId: input.workspaceId,
            contentType: 'image',
            idempotencyKey: input.workflowId,
            description: 'AI image edit',
            metadata: { workflowId: input.workflowId, projectId: input.projectId },
            actorId: actorOf(input),
          });
          if (!reserved.replayed) {
            await recordJobEvent(trx, { workspaceId: input.workspaceId, projectId: input.projectId, jobId: imageEditJobId(input.workflowId), kind: 'image', status: 'started', startedBy: actorOf(input) });
          }
          return reserved;
        });
        return { reservationId: reservation.id };
      }),

    /** Gives the credits back after a failed job (idempotent: a settled reservation is left as it is). */
    releaseImageEditCredits: (input: { reservationId: string; actorId?: string | null }): Promise<void> =>
      reportingRefusals(async () => {
        await releaseReservation(deps.knex, { reservationId: input.reservationId, reason: 'generation_failed', actorId: input.actorId ?? null });
      }),

    /**
     * The refiner's wording; with `validateRefinement`, a refinement that came back blank or too long is
     * replaced by the user's own prompt.
     */
    refineImagePrompt: (input: { prompt: string; imageDescription: string | null; validateRefinement: boolean }): Promise<PromptRefinementResult> =>
      reportingRefusals(async () => {
        const refined = await deps.providers.promptRefiner.refine({ prompt: input.prompt, imageDescription: input.imageDescription ?? undefined });
        const text = refined.refinedPrompt.trim();
        if (input.validateRefinement && (text === '' || text.length > IMAGE_PROMPT_MAX_LENGTH * 2)) {
          return { originalPrompt: input.prompt, refinedPrompt: input.prompt.trim(), refinementMethod: 'original' };
        }
        return { originalPrompt: input.prompt, refinedPrompt: text, refinementMethod: refined.refinementMethod };
      }),

    /**
     * The whole media part of an edit in one activity, images kept in memory between the steps: the source read
     * once, the provider's edit, the upscale of that result, then the private original, the watermarked preview and
     * the thumbnail written (the same calls, with the same settings, as the three steps below). A retry starts over
     * and replaces the files an interrupted attempt left.
     */
    makeEditedImage: (input: MakeEditedImageInput): Promise<MadeEditedImage> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const source = await readSource(input.source);
          const edited = await deps.providers.imageEdit.edit({ image: source, prompt: input.prompt, format: input.format, quality: input.quality });
          const upscaled = await deps.providers.upscale.upscale({ image: edited.image, scale: input.scale });
          return storeMade(input, source, describeGenerated(edited), upscaled);
        }),
      ),

    /**
     * The media part's first step with callbacks: the source framed and the edit submitted to the hosted provider with
     * the callback URL, the job written on the run's row (its callback is claimed against it). Without a hosted edit
     * or a callback address (a worker configured otherwise) it makes the whole media part, as `makeEditedImage`. A
     * retry that finds the row already waiting for a job resumes that job instead of paying for a second.
     */
    submitHostedImageEdit: (input: HostedEditInput): Promise<HostedEditStart> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const source = await readSource(input.source);
          if (!hostedEdit || !callbackBase) {
            const edited = await deps.providers.imageEdit.edit({ image: source, prompt: input.prompt, format: input.format, quality: input.quality });
            const upscaled = await deps.providers.upscale.upscale({ image: edited.image, scale: input.scale });
            return { made: await storeMade(input, source, describeGenerated(edited), upscaled) };
          }
          const resumed = await waitingFor(input.workflowId);
          if (resumed) return { submitted: { jobId: resumed, requestId: decodeFalJobId(resumed).requestId, maxWaitMs: hostedEdit.maxWaitMs } };
          const job = await hostedEdit.submit({ image: source, prompt: input.prompt, format: input.format, quality: input.quality }, imageEditCallbackUrl(callbackBase, input.jobId));
          await awaitOnRow(input.workflowId, job.jobId, null);
          return { submitted: { jobId: job.jobId, requestId: job.requestId, maxWaitMs: hostedEdit.maxWaitMs } };
        }),
      ),

    /**
     * After the edit's callback: its result fetched, then the upscale submitted with a callback (the row waits for it
     * from then on). Without a hosted upscale the upscale runs here and the rest of the media part with it.
     */
    continueHostedImageEdit: (input: HostedEditInput & { editJobId: string }): Promise<HostedEditContinued> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          if (!hostedEdit) throw ApplicationFailure.create({ type: 'PROVIDER_UNAVAILABLE', message: 'This worker has no hosted image edit', nonRetryable: true });
          const edited = await hostedEdit.collect(input.editJobId);
          const generated = describeGenerated(edited);
          if (!hostedUpscale || !callbackBase) {
            const upscaled = await deps.providers.upscale.upscale({ image: edited.image, scale: input.scale });
            return { made: await storeMade(input, await readSource(input.source), generated, upscaled) };
          }
          const current = await waitingFor(input.workflowId);
          if (current && current !== input.editJobId) {
            return { generated, submitted: { jobId: current, requestId: decodeFalJobId(current).requestId, maxWaitMs: hostedUpscale.maxWaitMs } };
          }
          const job = await hostedUpscale.submit({ image: edited.image, scale: input.scale }, imageEditCallbackUrl(callbackBase, input.jobId));
          await awaitOnRow(input.workflowId, job.jobId, input.editJobId);
          return { generated, submitted: { jobId: job.jobId, requestId: job.requestId, maxWaitMs: hostedUpscale.maxWaitMs } };
        }),
      ),

    /** After the upscale's callback: its result fetched, framed exactly and stored with its preview and thumbnail. */
    finishHostedImageEdit: (input: HostedEditInput & { upscaleJobId: string; generated: Omit<StoredImage, 'file'> }): Promise<MadeEditedImage> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          if (!hostedUpscale) throw ApplicationFailure.create({ type: 'PROVIDER_UNAVAILABLE', message: 'This worker has no hosted upscale', nonRetryable: true });
          const upscaled = await hostedUpscale.collect(input.upscaleJobId);
          return storeMade(input, await readSource(input.source), input.generated, upscaled);
        }),
      ),

    /**
     * The fallback look at a hosted job whose callback has not come (every FAL_WEBHOOK_FALLBACK_POLL_MS): once it has
     * ended, the row's claim is taken, so a callback arriving after the look changes nothing. On the run's last look
     * (`giveUp`) a job still running is cancelled.
     */
    lookAtHostedImageJob: (input: HostedLookInput): Promise<{ done: boolean }> =>
      reportingRefusals(async () => {
        const hosted = hostedOf(input.kind);
        if (!hosted) throw ApplicationFailure.create({ type: 'PROVIDER_UNAVAILABLE', message: `This worker has no hosted ${input.kind}`, nonRetryable: true });
        const done = await hosted.isDone(input.providerJobId);
        if (done) {
          await deps
            .knex('ai_image_edits')
            .where({ workflow_id: input.workflowId, provider_job_id: input.providerJobId })
            .whereNull('provider_called_back_at')
            .update({ provider_called_back_at: deps.knex.fn.now() });
        } else if (input.giveUp) {
          await hosted.cancel(input.providerJobId).catch((err: unknown) => deps.logger.warn({ err, providerJobId: input.providerJobId }, 'could not cancel a hosted image job'));
        }
        return { done };
      }),

    /** Runs the image edit provider on the source and keeps the result privately as `generated.<ext>`. */
    generateEditedImage: (input: GenerateEditedImageInput): Promise<StoredImage> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const source = await readSource(input.source);
          const edited = await deps.providers.imageEdit.edit({ image: source, prompt: input.prompt, format: input.format, quality: input.quality });
          return storeProviderImage(objects, input.approvalId, 'generated', edited);
        }),
      ),

    /** Upscales the generated image into the item's private original, `original.<ext>`. */
    upscaleEditedImage: (input: UpscaleEditedImageInput): Promise<StoredImage> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const generated = await readObject(objects, input.generated.file);
          const upscaled = await deps.providers.upscale.upscale({ image: generated, scale: input.scale });
          return storeProviderImage(objects, input.approvalId, 'original', upscaled);
        }),
      ),

    /** The watermarked preview and the thumbnail of the original; then the generated intermediate goes. */
    renderImagePreviews: (input: { approvalId: string; original: StoredImage; generated: StoredFile; format: ImageEditFormat }): Promise<ImagePreviews> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const folder = pendingImageFolder(input.approvalId);
          const original = await readObject(objects, input.original.file);
          const [preview, thumbnail, meta] = await Promise.all([imageWork.watermarkPreview(original), imageWork.imageThumbnail(original), sharp(original).metadata()]);
          const watermarked = await replaceVariant(objects, folder, 'preview', 'jpg', preview.data);
          const thumb = await replaceVariant(objects, folder, 'thumb', 'webp', thumbnail);
          await objects.remove(input.generated.bucket, [input.generated.path]);
          const aspectRatio =
            input.format === 'original' ? aspectRatioLabel(meta.width ?? input.original.width, meta.height ?? input.original.height) : FORMAT_ASPECT_LABEL[input.format];
          return { watermarked, thumbnailPath: thumb.path, aspectRatio };
        }),
      ),

    /**
     * The running edit's step on its row (the API wrote it pending at the start; written here too when it did not):
     * never over a row that has ended. A row its project took with it (deleted meanwhile) is not written: the next
     * step fails for that reason.
     */
    markImageEditProgress: (input: ImageEditProgressInput): Promise<void> =>
      reportingRefusals(async () => {
        await deps
          .knex('ai_image_edits')
          .insert({
            workspace_id: input.workspaceId,
            project_id: input.projectId,
            workflow_id: input.workflowId,
            original_image_url: input.originalImageUrl,
            edit_prompt: input.editPrompt,
            edit_data: JSON.stringify({ jobId: input.jobId }),
            status: 'processing',
            progress: input.progress,
            message: input.message,
            created_by: createdByValue(deps.knex, actorOf(input)),
            trace_id: currentTraceId(),
          })
          .onConflict('workflow_id')
          .merge({ status: 'processing', progress: input.progress, message: input.message, updated_at: deps.knex.fn.now() })
          .whereIn('ai_image_edits.status', ['pending', 'processing'])
          // the writes of a run's steps may end in any order (they run beside the steps): progress never goes back
          .andWhere('ai_image_edits.progress', '<=', input.progress)
          .catch((err: unknown) => {
            if ((err as { code?: unknown }).code !== PG_FOREIGN_KEY_VIOLATION) throw err;
          });
      }),

    /** The job's ai_image_edits row (one per workflow id: a retry or a later failure updates it). */
    recordImageEdit: (input: RecordImageEditInput): Promise<{ editId: string }> =>
      reportingRefusals(async () => {
        const completed = input.status === 'completed';
        const row = {
          workspace_id: input.workspaceId,
          project_id: input.projectId,
          workflow_id: input.workflowId,
          original_image_url: input.originalImageUrl,
          edited_image_url: input.editedImage ? fileUrl(input.editedImage.bucket, input.editedImage.path) : null,
          edit_prompt: input.editPrompt,
          edit_data: JSON.stringify(input.editData),
          status: input.status,
          error: input.error,
          progress: completed ? 100 : (input.progress ?? 100),
          message: input.message ?? (completed ? IMAGE_EDIT_MESSAGES.sentForApproval : input.error),
          error_code: input.errorCode ?? null,
          created_by: createdByValue(deps.knex, actorOf(input)),
          trace_id: currentTraceId(),
        };
        const saved = await deps.knex
          .transaction(async (trx) => {
            // the status it had (none before the first record): job.completed or job.failed only when it changes
            const before = (await trx('ai_image_edits').where({ workflow_id: input.workflowId }).forUpdate().first('id', 'status')) as { id: string; status: string } | undefined;
            // the row's id is the result's editId: the existing row's, or chosen here for a new one
            const id = before?.id ?? randomUUID();
            const ended = input.result;
            const result = ended
              ? JSON.stringify({ jobId: ended.jobId, editId: id, promptRefinement: ended.promptRefinement, generatedImage: ended.generatedImage, upscaledImage: ended.upscaledImage, savedImage: ended.savedImage })
              : null;
            const [edit] = await trx('ai_image_edits')
              .insert({ ...row, id, result })
              .onConflict('workflow_id')
              .merge({
                edited_image_url: row.edited_image_url,
                edit_data: row.edit_data,
                status: row.status,
                error: row.error,
                progress: row.progress,
                message: row.message,
                error_code: row.error_code,
                result,
                updated_at: trx.fn.now(),
              })
              .returning<{ id: string }[]>('id');
            await publishEvent(trx, input.workspaceId, { kind: 'job', job: 'image-edit', jobId: input.workflowId, status: input.status, projectId: input.projectId });
            if (before?.status !== input.status && input.started !== false) {
              const approvalId = typeof input.editData.approvalId === 'string' ? input.editData.approvalId : null;
              await recordJobEvent(trx, {
                workspaceId: input.workspaceId,
                projectId: input.projectId,
                jobId: imageEditJobId(input.workflowId),
                kind: 'image',
                status: input.status,
                startedBy: actorOf(input),
                approvalId: input.status === 'completed' ? approvalId : null,
                error: input.error,
              });
            }
            return edit;
          })
          .catch((err: unknown) => {
            // the project (or the user) was deleted while the image was made: no retry can record it
            if ((err as { code?: unknown }).code === PG_FOREIGN_KEY_VIOLATION) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
            throw err;
          });
        return { editId: saved.id };
      }),

    /** Removes every file of a job that did not reach the approval queue. */
    discardImageEditFiles: (input: { approvalId: string }): Promise<void> =>
      reportingRefusals(async () => {
        await objects.removePrefix(PENDING_IMAGE_BUCKET, pendingImageFolder(input.approvalId));
      }),
  };
}
