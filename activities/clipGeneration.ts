/**
 * Activities of the clip workflow (workflows/clipGeneration.ts). Each is safe to run again: admission is
 * keyed on the job id and the reservation on the workflow id, the provider job id is stored on the job row
 * as soon as it exists, stored files have fixed paths under clips/<workspaceId>/<jobId>/ and are never rewritten.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  CLIP_ERROR_CODES,
  CLIP_JOB_ACTIVE_STATUSES,
  CLIP_MESSAGES,
  CLIP_PROGRESS,
  framingFor,
  renderProgress,
  type ClipFraming,
  type ClipJobOptions,
  type ClipJobStatus,
  type ClipResultSummary,
  type ClipSourceKind,
} from '../domain/clipGeneration';
import { DomainError } from '../domain/errors';
import type { RealtimeEvent } from '../domain/events';
import { CreditReservation } from '../db/models/CreditReservation';
import { ProviderError, type VideoProgress } from '../providers';
import { CLIP_SIZE, sourceSize } from '../providers/local/clipEffects';
import { probeVideo } from '../providers/media/ffmpeg';
import { actorOf, createdByValue } from '../services/generation/actor';
import { checkClipAdmission } from '../services/generation/clipAdmission';
import { checkAndReserve, releaseReservation } from '../services/billing/credits';
import { publishEvent, publishEventQuietly } from '../services/platform/events';
import { recordJobEvent } from '../services/integrations/webhookEvents';
import { ObjectExistsError, ObjectNotFoundError, type Bucket } from '../storage';
import { clipProgressSignal, type ClipSource } from '../domain/workflowContracts/clipGeneration';
import { frameStill, thumbnailFromFrame, videoThumbnail } from './clipMedia';
import { previewBatcher, type PreviewBatcher } from './previewBatch';
import { UnreadableImageError, workingCopy, type WorkingCopy } from './workingCopies';
import type { ActivityDeps } from './deps';
import { currentTraceId } from '../config/tracing';

const CLIPS: Bucket = 'clips';
export const CLIP_THUMBNAIL_WIDTH = 480;

export type ClipActivityDeps = Pick<ActivityDeps, 'knex' | 'config' | 'logger' | 'storage'> & { providers: Pick<ActivityDeps['providers'], 'imageToVideo'> };

/** The callback route of the API (api/routes/providerCallbacks.ts): fal calls it when a clip's job ends. */
export function clipCallbackUrl(baseUrl: string, jobId: string): string {
  return `${baseUrl}/api/provider-callbacks/fal?clip=${encodeURIComponent(jobId)}`;
}

export interface ClipActivityOptions {
  /** How often the waiting activity heartbeats on its own, besides every provider progress report (ms). */
  heartbeatIntervalMs?: number;
  /** Least time between two progress reports to the workflow and the job row (ms). */
  progressIntervalMs?: number;
  /** Encodes the watermarked previews, several to one ffmpeg run when many are asked for at once (the worker's one). */
  previews?: PreviewBatcher;
}

export interface AdmitClipJobInput {
  jobId: string;
  workflowId: string;
  /** The account (workspace) the clip is for. */
  workspaceId: string;
  /** The member who started it (job row's and reservation's created_by); absent from runs before workspaces. */
  actorId?: string | null;
  projectId: string;
  sourceKind: ClipSourceKind;
  sourceId: string;
  options: ClipJobOptions;
}

export interface AdmittedClipJob {
  reservationId: string;
  warning: string | null;
  code: string | null;
}

export interface RecordClipJobInput {
  jobId: string;
  status: ClipJobStatus;
  progress: number;
  message: string;
  result?: ClipResultSummary;
}

export interface SubmitClipVideoInput {
  jobId: string;
  workspaceId: string;
  source: ClipSource;
  options: ClipJobOptions;
  /**
   * The submit writes the row's steps around it itself (preparing, then submitted), instead of the workflow writing
   * each as a step of its own (runs from the `clip-fewer-steps` marker on).
   */
  recordSteps?: boolean;
}

/**
 * How the workflow follows a hosted provider's job: one look every `pollIntervalMs`, for at most `maxWaitMs`. With
 * `callbackFallbackMs` the job was submitted with a callback: the workflow waits for its signal and looks only that
 * often, for a callback that was lost.
 */
export interface ClipPolling {
  pollIntervalMs: number;
  maxWaitMs: number;
  callbackFallbackMs?: number;
}

export interface SubmittedClipVideo {
  providerJobId: string;
  framing: ClipFraming | null;
  /** Set for a hosted provider: the workflow waits on a timer between `checkClipVideo` looks. Absent: `awaitClipVideo` waits. */
  polling?: ClipPolling;
}

/** One look at the provider's job (`checkClipVideo`): `done` once it is no longer queued or running. */
export interface ClipVideoLook {
  done: boolean;
  /** The clip's progress for the render step (CLIP_PROGRESS.renderStart .. renderEnd). */
  progress: number;
  message: string;
}

export interface StoredClipVideo {
  /** In the clips bucket. */
  path: string;
  sizeBytes: number;
  durationSeconds: number;
  width: number;
  height: number;
  fps: number;
}

export interface FinishClipMediaInput {
  jobId: string;
  workspaceId: string;
  clipPath: string;
  width: number;
  height: number;
  /** The stored clip's duration (the wait's probe); absent in runs started before it was passed on. */
  durationSeconds?: number;
}

/** The hosted clip fetched, stored, probed once and finished (preview and thumbnail), in one media activity. */
export interface CollectedClipVideo {
  video: StoredClipVideo;
  media: ClipMediaFiles;
}

export interface ClipMediaFiles {
  thumbnailPath: string;
  previewPath: string;
}

export interface AbandonClipJobInput {
  jobId: string;
  workflowId: string;
  workspaceId: string;
  /** The job's starter: the release is theirs (absent from runs before workspaces: the account's owner). */
  actorId?: string | null;
  providerJobId: string | null;
  status: 'failed' | 'cancelled';
  error: string | null;
  message: string;
}

export function clipFolder(workspaceId: string, jobId: string): string {
  return `${workspaceId}/${jobId}`;
}

/** Expected refusals keep their code and stop retries; a provider error retries only when another try can help. */
function toActivityFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  if (error instanceof DomainError) return ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true, details: [{ status: error.status }] });
  if (error instanceof ProviderError) {
    return ApplicationFailure.create({ type: `PROVIDER_${error.code}`, message: error.message, nonRetryable: !error.retryable });
  }
  return error;
}

/** Reports render progress to the job row and the workflow at most every `intervalMs`, never backwards. */
class ProgressReporter {
  private sentProgress = -1;
  private sentAt = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly send: (progress: number, message: string) => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  report(progress: number, message: string): void {
    const now = Date.now();
    if (progress <= this.sentProgress || now - this.sentAt < this.intervalMs) return;
    this.sentProgress = progress;
    this.sentAt = now;
    this.pending = this.pending.then(() => this.send(progress, message));
  }

  flush(): Promise<void> {
    return this.pending;
  }
}

/** What a job's realtime event needs from its row (returned by the update that moved it). */
const JOB_EVENT_COLUMNS = ['id', 'workspace_id', 'project_id', 'status', 'progress'];
interface JobEventRow {
  id: string;
  workspace_id: string;
  project_id: string;
  status: ClipJobStatus;
  progress: number;
}

function clipJobEvent(row: JobEventRow): RealtimeEvent {
  return { kind: 'job', job: 'clip', jobId: row.id, status: row.status, progress: row.progress, projectId: row.project_id };
}

/** job.completed or job.failed for a clip whose row just moved to that end, in the transaction that moved it. */
async function recordClipEnd(trx: Knex.Transaction, row: JobEventRow, end: { approvalId: string | null; error: string | null }): Promise<void> {
  if (row.status !== 'completed' && row.status !== 'failed' && row.status !== 'cancelled') return;
  const starter = (await trx('video_generation_jobs').where({ id: row.id }).first('created_by')) as { created_by: string | null } | undefined;
  await recordJobEvent(trx, {
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    jobId: row.id,
    kind: 'clip',
    status: row.status,
    startedBy: starter?.created_by ?? null,
    approvalId: end.approvalId,
    error: end.error,
  });
}

export function createClipActivities(deps: ClipActivityDeps, options: ClipActivityOptions = {}) {
  const { knex, storage, logger } = deps;
  const { imageToVideo } = deps.providers;
  const previewPreset = deps.config.videoPreset;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
  const progressIntervalMs = options.progressIntervalMs ?? 1000;
  const previews = options.previews ?? previewBatcher;

  const exists = async (objectPath: string): Promise<boolean> => (await storage.objects.stat(CLIPS, objectPath)) !== null;
  // a hosted job is followed by the workflow's timer (one look per activity); a local render happens inside `wait`
  // with FAL_WEBHOOK_BASE_URL the provider calls back, and the workflow waits for that instead of looking every poll
  const callbackBase = imageToVideo.pollIntervalMs !== undefined && deps.config.providerKind === 'fal' ? deps.config.falWebhookBaseUrl : null;
  const polling: { polling?: ClipPolling } =
    imageToVideo.pollIntervalMs !== undefined
      ? {
          polling: {
            pollIntervalMs: imageToVideo.pollIntervalMs,
            maxWaitMs: imageToVideo.maxWaitMs ?? 45 * 60 * 1000,
            ...(callbackBase ? { callbackFallbackMs: deps.config.falWebhookFallbackPollMs } : {}),
          },
        }
      : {};

  /** Moves the row's render progress forward (never back) and tells the account's streams. */
  const recordRenderProgress = async (jobId: string, progress: number, message: string): Promise<void> => {
    const rows: JobEventRow[] = await knex('video_generation_jobs')
      .where({ id: jobId })
      .whereIn('status', CLIP_JOB_ACTIVE_STATUSES)
      .where('progress', '<', progress)
      .update({ progress, message, updated_at: knex.fn.now() })
      .returning(JOB_EVENT_COLUMNS);
    await Promise.all(rows.map((row) => publishEventQuietly(knex, row.workspace_id, clipJobEvent(row), logger)));
  };

  /** A cancel does not wait for the long activities: they look before storing anything, so nothing lands after the clean-up. */
  const assertStillActive = async (jobId: string): Promise<void> => {
    const row = (await knex('video_generation_jobs').where({ id: jobId }).first('status')) as { status: ClipJobStatus } | undefined;
    if (!row || !CLIP_JOB_ACTIVE_STATUSES.includes(row.status)) throw new CancelledFailure(`Video job ${jobId} is ${row?.status ?? 'gone'}`);
  };

  /** Stores a local file at a fixed path once; an earlier attempt's complete copy counts as done. */
  const storeOnce = async (objectPath: string, file: string): Promise<number> => {
    try {
      return (await storage.objects.put(CLIPS, objectPath, createReadStream(file))).size;
    } catch (error) {
      if (!(error instanceof ObjectExistsError)) throw error;
      const stat = await storage.objects.stat(CLIPS, objectPath);
      if (!stat) throw error;
      return stat.size;
    }
  };

  // a hosted provider's wait probes the clip it downloads (providers/fal/providers.ts)
  const hostedResult = imageToVideo.pollIntervalMs !== undefined;
  const round3 = (n: number) => Math.round(n * 1000) / 1000;

  /** What the stored clip at `objectPath` is, probed from `file` (a local copy of it). */
  const describeClip = async (objectPath: string, file: string, sizeBytes: number): Promise<StoredClipVideo> => {
    const probe = await probeVideo(file);
    return {
      path: objectPath,
      sizeBytes,
      durationSeconds: Math.round(probe.durationSeconds * 1000) / 1000,
      width: probe.width,
      height: probe.height,
      fps: Math.round(probe.fps * 1000) / 1000,
    };
  };

  const probeStored = async (objectPath: string): Promise<StoredClipVideo> => {
    const local = await storage.objects.localFile(CLIPS, objectPath);
    try {
      const stat = await storage.objects.stat(CLIPS, objectPath);
      return await describeClip(objectPath, local.path, stat?.size ?? 0);
    } finally {
      await local.release();
    }
  };

  /** Moves the job row along; progress never goes back and a finished row is left as it is. */
  const recordJobStep = async (input: RecordClipJobInput): Promise<void> => {
    await knex.transaction(async (trx) => {
      const rows: JobEventRow[] = await trx('video_generation_jobs')
        .where({ id: input.jobId })
        .whereIn('status', CLIP_JOB_ACTIVE_STATUSES)
        .update({
          status: input.status,
          progress: trx.raw('greatest(progress, ?)', [Math.round(input.progress)]),
          message: input.message,
          ...(input.result ? { result: JSON.stringify(input.result) } : {}),
          updated_at: trx.fn.now(),
        })
        .returning(JOB_EVENT_COLUMNS);
      for (const row of rows) {
        await publishEvent(trx, row.workspace_id, clipJobEvent(row));
        if (row.status === 'completed' || row.status === 'failed' || row.status === 'cancelled') await recordClipEnd(trx, row, { approvalId: input.result?.approvalId ?? null, error: null });
      }
    });
  };

  const activities = {
    /**
     * Admits the job under the profile lock: the limits, then the job row (pending) and a reservation of the
     * clip's cost keyed on the workflow id. A repeat finds the row and the same reservation.
     */
    async admitClipJob(input: AdmitClipJobInput): Promise<AdmittedClipJob> {
      try {
        return await knex.transaction(async (trx) => {
          const profile = await trx('profiles').where({ id: input.workspaceId }).forUpdate().first('id');
          if (!profile) throw ApplicationFailure.create({ type: 'PROFILE_NOT_FOUND', message: 'User not found', nonRetryable: true, details: [{ status: 404 }] });
          const existing = await trx('video_generation_jobs').where({ id: input.jobId }).first('id');
          let warning: string | null = null;
          let code: string | null = null;
          if (!existing) {
            const check = await checkClipAdmission(trx, input.workspaceId, actorOf(input), input.jobId);
            if (!check.ok) throw ApplicationFailure.create({ type: check.code, message: check.error, nonRetryable: true, details: [{ status: check.status }] });
            ({ warning, code } = check);
            await trx('video_generation_jobs').insert({
              id: input.jobId,
              workspace_id: input.workspaceId,
              project_id: input.projectId,
              render_id: input.sourceKind === 'render' ? input.sourceId : null,
              image_id: input.sourceKind === 'image' ? input.sourceId : null,
              status: 'pending',
              progress: CLIP_PROGRESS.admitted,
              message: CLIP_MESSAGES.queued,
              options: JSON.stringify(input.options),
              workflow_id: input.workflowId,
              created_by: createdByValue(trx, actorOf(input)),
              trace_id: currentTraceId(),
            });
            await publishEvent(trx, input.workspaceId, { kind: 'job', job: 'clip', jobId: input.jobId, status: 'pending', progress: CLIP_PROGRESS.admitted, projectId: input.projectId });
            await recordJobEvent(trx, { workspaceId: input.workspaceId, projectId: input.projectId, jobId: input.jobId, kind: 'clip', status: 'started', startedBy: actorOf(input) });
          }
          // the start rule again inside checkAndReserve: the same lock, so the same answer, and the ledger's own guard
          const reservation = await checkAndReserve(trx, {
            workspaceId: input.workspaceId,
            contentType: 'clip',
            idempotencyKey: input.workflowId,
            description: `Clip: ${input.options.effect} for ${input.options.platform}`,
            metadata: { jobId: input.jobId, workflowId: input.workflowId },
            actorId: actorOf(input),
          });
          return { reservationId: reservation.id, warning, code };
        });
      } catch (error) {
        throw toActivityFailure(error);
      }
    },

    /** Moves the job row along; progress never goes back and a finished row is left as it is. */
    async recordClipJob(input: RecordClipJobInput): Promise<void> {
      await recordJobStep(input);
    },

    /**
     * Frames the source for the clip's aspect (crop or pad) and submits the provider job, once: the job id is
     * written to the row at once, and a retry that finds it there returns it without submitting again.
     */
    async submitClipVideo(input: SubmitClipVideoInput): Promise<SubmittedClipVideo> {
      const row = (await knex('video_generation_jobs').where({ id: input.jobId }).first('provider_job_id')) as { provider_job_id: string | null } | undefined;
      if (!row) throw ApplicationFailure.create({ type: CLIP_ERROR_CODES.jobNotFound, message: `No video job ${input.jobId}`, nonRetryable: true });
      const submitted = async (result: SubmittedClipVideo): Promise<SubmittedClipVideo> => {
        if (input.recordSteps) await recordJobStep({ jobId: input.jobId, status: 'processing', progress: CLIP_PROGRESS.submitted, message: CLIP_MESSAGES.rendering });
        return result;
      };
      if (row.provider_job_id) return submitted({ providerJobId: row.provider_job_id, framing: null, ...polling });
      if (input.recordSteps) await recordJobStep({ jobId: input.jobId, status: 'processing', progress: CLIP_PROGRESS.preparing, message: CLIP_MESSAGES.preparing });
      try {
        // a working copy (a still needs no more than twice the clip's frame): the stored render is never changed,
        // and a 150 MB original is decoded in strips rather than read into memory whole
        // a hosted model gets the still at the clip's own size (providers/fal/providers.ts): framed at that size here,
        // not at the local renderer's zoom margin and then resized again
        const frame = hostedResult ? CLIP_SIZE[input.options.aspectRatio] : sourceSize(input.options.aspectRatio);
        let copy: WorkingCopy;
        try {
          copy = await workingCopy(storage.objects, input.source, 2 * Math.max(frame.width, frame.height));
        } catch (error) {
          if (error instanceof ObjectNotFoundError) {
            throw ApplicationFailure.create({ type: CLIP_ERROR_CODES.sourceMissing, message: CLIP_MESSAGES.sourceMissing, nonRetryable: true });
          }
          if (error instanceof UnreadableImageError) {
            throw ApplicationFailure.create({ type: CLIP_ERROR_CODES.sourceMissing, message: 'The source is not a readable image', nonRetryable: true });
          }
          throw error;
        }
        const framing = framingFor(copy.width, copy.height, input.options.aspectRatio);
        const still = await frameStill(copy.image, frame, framing);
        const { jobId: providerJobId } = await imageToVideo.submit({
          image: still,
          effect: input.options.effect,
          platform: input.options.platform,
          aspectRatio: input.options.aspectRatio,
          durationSeconds: input.options.durationSeconds,
          prompt: input.options.prompt ?? undefined,
          ...(callbackBase ? { callbackUrl: clipCallbackUrl(callbackBase, input.jobId) } : {}),
        });
        const claimed = await knex('video_generation_jobs')
          .where({ id: input.jobId })
          .whereNull('provider_job_id')
          .update({ provider_job_id: providerJobId, updated_at: knex.fn.now() });
        if (claimed === 0) {
          // another attempt got there first (a timed-out attempt still running): keep its job, drop this one
          const stored = (await knex('video_generation_jobs').where({ id: input.jobId }).first('provider_job_id')) as { provider_job_id: string };
          await imageToVideo.cancel(providerJobId).catch(() => undefined);
          await imageToVideo.release(providerJobId).catch(() => undefined);
          return await submitted({ providerJobId: stored.provider_job_id, framing, ...polling });
        }
        return await submitted({ providerJobId, framing, ...polling });
      } catch (error) {
        throw toActivityFailure(error);
      }
    },

    /**
     * One look at a hosted provider's job, between the workflow's timers: the job row gets the render progress, the
     * workflow the look. Holds an activity slot for one status call, not for the whole render.
     */
    async checkClipVideo(input: { jobId: string; providerJobId: string }): Promise<ClipVideoLook> {
      try {
        const status = await imageToVideo.status(input.providerJobId);
        if (status.state !== 'queued' && status.state !== 'running') return { done: true, progress: renderProgress(status.progress), message: CLIP_MESSAGES.rendering };
        const progress = renderProgress(status.progress);
        const message = status.state === 'queued' ? `${CLIP_MESSAGES.rendering}: waiting in the queue` : CLIP_MESSAGES.rendering;
        await recordRenderProgress(input.jobId, progress, message).catch((err: unknown) => logger.warn({ err, jobId: input.jobId }, 'could not record clip progress'));
        return { done: false, progress, message };
      } catch (error) {
        throw toActivityFailure(error);
      }
    },

    /**
     * Follows the provider job to its end, heartbeating all along, and stores the clip at
     * clips/<workspaceId>/<jobId>/clip.mp4. A retry resumes: a stored clip is returned as is, otherwise the wait
     * picks the same provider job up again, starting its progress from the last heartbeat.
     */
    async awaitClipVideo(input: { jobId: string; workspaceId: string; providerJobId: string; signalProgress?: boolean }): Promise<StoredClipVideo> {
      const ctx = Context.current();
      const clipPath = `${clipFolder(input.workspaceId, input.jobId)}/clip.mp4`;
      if (await exists(clipPath)) return probeStored(clipPath);

      const resumed = ctx.info.heartbeatDetails as { providerProgress?: number } | undefined;
      let best = typeof resumed?.providerProgress === 'number' ? resumed.providerProgress : 0;
      const beat = () => ctx.heartbeat({ providerProgress: best });
      beat();
      const timer = setInterval(beat, heartbeatIntervalMs);
      const workflowId = ctx.info.workflowExecution?.workflowId ?? `clip-${input.jobId}`;
      const reporter = new ProgressReporter(async (progress, message) => {
        await knex('video_generation_jobs')
          .where({ id: input.jobId })
          .whereIn('status', CLIP_JOB_ACTIVE_STATUSES)
          .update({ progress: knex.raw('greatest(progress, ?)', [progress]), message, updated_at: knex.fn.now() })
          .returning(JOB_EVENT_COLUMNS)
          .then((rows: JobEventRow[]) => Promise.all(rows.map((row) => publishEventQuietly(knex, row.workspace_id, clipJobEvent(row), logger))))
          .catch((err: unknown) => logger.warn({ err, jobId: input.jobId }, 'could not record clip progress'));
        // (not when the render has ended already, as after a hosted job's callback: one signal and one workflow task
        // per clip only to say "downloading")
        if (input.signalProgress === false) return;
        await ctx.client.workflow
          .getHandle(workflowId)
          .signal(clipProgressSignal, { progress, message })
          .catch((err: unknown) => logger.warn({ err, workflowId }, 'could not report clip progress to the workflow'));
      }, progressIntervalMs);
      const onProgress = (progress: VideoProgress): void => {
        best = Math.max(best, progress.progress);
        beat();
        const message = progress.state === 'queued' ? `${CLIP_MESSAGES.rendering}: waiting in the queue` : CLIP_MESSAGES.rendering;
        reporter.report(renderProgress(best), message);
      };
      try {
        const result = await imageToVideo.wait(input.providerJobId, { signal: ctx.cancellationSignal, onProgress });
        await assertStillActive(input.jobId);
        // probed here, from the provider's download, rather than fetched back from storage; a hosted provider probed
        // its download already (a file that is not a video fails there): its figures are used, not a second ffprobe
        const sizeBytes = (await fs.stat(result.path)).size;
        const stored = hostedResult
          ? { path: clipPath, sizeBytes, durationSeconds: round3(result.durationSeconds), width: result.width, height: result.height, fps: round3(result.fps) }
          : await describeClip(clipPath, result.path, sizeBytes);
        await storeOnce(clipPath, result.path);
        await imageToVideo.release(input.providerJobId).catch((err: unknown) => logger.warn({ err, providerJobId: input.providerJobId }, 'could not release provider files'));
        return stored;
      } catch (error) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Clip wait cancelled');
        throw toActivityFailure(error);
      } finally {
        clearInterval(timer);
        await reporter.flush();
      }
    },

    /**
     * The thumbnail (the frame at 1 s, or mid-clip in a shorter one, as WebP) and the watermarked preview beside the
     * stored clip, from one ffmpeg run. A retry makes only what the last attempt did not store.
     */
    async finishClipMedia(input: FinishClipMediaInput): Promise<ClipMediaFiles> {
      const ctx = Context.current();
      const folder = clipFolder(input.workspaceId, input.jobId);
      const thumbnailPath = `${folder}/thumbnail.webp`;
      const previewPath = `${folder}/preview.mp4`;
      const needThumbnail = !(await exists(thumbnailPath));
      const needPreview = !(await exists(previewPath));
      if (!needThumbnail && !needPreview) return { thumbnailPath, previewPath };
      const local = await storage.objects.localFile(CLIPS, input.clipPath);
      const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'clip-media-'));
      const timer = setInterval(() => ctx.heartbeat(), heartbeatIntervalMs);
      try {
        ctx.heartbeat();
        // a run started before the wait passed the duration on probes for it
        const durationSeconds = input.durationSeconds ?? (await probeVideo(local.path)).durationSeconds;
        const atSeconds = Math.min(1, durationSeconds / 2);
        const frameFile = path.join(scratch, 'frame.png');
        const previewFile = path.join(scratch, 'preview.mp4');
        if (needPreview) {
          // with other clips' previews in one ffmpeg run when several finish at once (activities/previewBatch.ts)
          await previews.encode({
            input: local.path,
            output: previewFile,
            size: { width: input.width, height: input.height },
            options: {
              preset: previewPreset,
              durationSeconds,
              signal: ctx.cancellationSignal,
              onProgress: () => ctx.heartbeat(),
              frame: needThumbnail ? { path: frameFile, atSeconds } : undefined,
            },
          });
        }
        if (needThumbnail) {
          const thumb = needPreview ? await thumbnailFromFrame(await fs.readFile(frameFile), CLIP_THUMBNAIL_WIDTH) : await videoThumbnail(local.path, atSeconds, CLIP_THUMBNAIL_WIDTH);
          const file = path.join(scratch, 'thumbnail.webp');
          await fs.writeFile(file, thumb.data);
          await assertStillActive(input.jobId);
          await storeOnce(thumbnailPath, file);
        }
        if (needPreview) {
          await assertStillActive(input.jobId);
          await storeOnce(previewPath, previewFile);
        }
        return { thumbnailPath, previewPath };
      } catch (error) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Clip media cancelled');
        throw toActivityFailure(error);
      } finally {
        clearInterval(timer);
        await local.release();
        await fs.rm(scratch, { recursive: true, force: true });
      }
    },

    /**
     * Undoes a job that will not reach the approval queue: stops and forgets the provider job, removes the
     * job's files, releases the reservation and records the outcome on the row. Every part is idempotent.
     */
    async abandonClipJob(input: AbandonClipJobInput): Promise<void> {
      // the row knows a provider job the workflow may not have heard of (a submit that finished during the cancel)
      const row = (await knex('video_generation_jobs').where({ id: input.jobId }).first('provider_job_id')) as { provider_job_id: string | null } | undefined;
      for (const providerJobId of new Set([input.providerJobId, row?.provider_job_id].filter((id): id is string => Boolean(id)))) {
        await imageToVideo.cancel(providerJobId).catch((err: unknown) => logger.warn({ err, providerJobId }, 'could not cancel provider job'));
        await imageToVideo.release(providerJobId).catch((err: unknown) => logger.warn({ err, providerJobId }, 'could not release provider files'));
      }
      await storage.objects.removePrefix(CLIPS, clipFolder(input.workspaceId, input.jobId));
      const reservation = await CreditReservation.query(knex).findOne({ idempotency_key: input.workflowId });
      if (reservation && reservation.status === 'active') {
        await releaseReservation(knex, { reservationId: reservation.id, reason: input.status === 'cancelled' ? 'clip cancelled' : 'clip failed', actorId: actorOf(input) });
      }
      await knex.transaction(async (trx) => {
        const rows: JobEventRow[] = await trx('video_generation_jobs')
          .where({ id: input.jobId })
          .whereIn('status', CLIP_JOB_ACTIVE_STATUSES)
          .update({ status: input.status, error: input.error, message: input.message, updated_at: trx.fn.now() })
          .returning(JOB_EVENT_COLUMNS);
        for (const row of rows) {
          await publishEvent(trx, row.workspace_id, clipJobEvent(row));
          await recordClipEnd(trx, row, { approvalId: null, error: input.error ?? input.message });
        }
      });
    },

    /**
     * A hosted clip after its provider's job ended, in one media activity: the wait's fetch and store (the provider
     * probed the download: no second probe), the row's "stored" step, the preview and thumbnail, the row's "finished"
     * step. What the workflow did with two media activities and two steps of its own; a retry resumes as each part does.
     */
    async collectClipVideo(input: { jobId: string; workspaceId: string; providerJobId: string }): Promise<CollectedClipVideo> {
      const video = await activities.awaitClipVideo({ ...input, signalProgress: false });
      await recordJobStep({ jobId: input.jobId, status: 'processing', progress: CLIP_PROGRESS.stored, message: CLIP_MESSAGES.finishing });
      const media = await activities.finishClipMedia({
        jobId: input.jobId,
        workspaceId: input.workspaceId,
        clipPath: video.path,
        width: video.width,
        height: video.height,
        durationSeconds: video.durationSeconds,
      });
      await recordJobStep({ jobId: input.jobId, status: 'processing', progress: CLIP_PROGRESS.finished, message: CLIP_MESSAGES.approval });
      return { video, media };
    },
  };
  return activities;
}

export type ClipActivities = ReturnType<typeof createClipActivities>;
