/**
 * Clip generation jobs for the API (spec 000 section 7): start (the main call and the portrait call), status,
 * the account's active job, cancel and retry. The account is the workspace (DESIGN.md "Teams (workspaces)"): every
 * `workspaceId` scoping here is the workspace's id, and the member who starts a clip is its `actorId`, recorded on the
 * job (created_by), its reservation and its pending item. The rules (one clip at a time, the pending cap from the
 * credits, the cooldown) therefore hold per workspace. The workflow `clip-<jobId>` is the source of truth while it runs;
 * the video_generation_jobs row answers once it has closed (or when the workflow cannot answer a query).
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { Image } from '../../db/models/Image';
import { Project } from '../../db/models/Project';
import { Render } from '../../db/models/Render';
import { VideoGenerationJob } from '../../db/models/VideoGenerationJob';
import {
  CLIP_ERROR_CODES,
  CLIP_JOB_ACTIVE_STATUSES,
  CLIP_MESSAGES,
  CLIP_JOB_FINAL_STATUSES,
  isFinalClipStatus,
  parsePlatform,
  parseVideoEffect,
  type ClipAspectRatio,
  type ClipJobOptions,
  type ClipJobStatus,
  type ClipJobView,
  type ClipResultSummary,
  type ClipSourceKind,
} from '../../domain/clipGeneration';
import { DomainError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { fileUrl, parseFileUrl, type FileLinks, type FileRef } from '../../storage/signedUrls';
import { TASK_QUEUES } from '../../domain/taskQueues';
import {
  clipAdmissionUpdate,
  clipWorkflowId,
  type ClipAdmission,
  type ClipGenerationInput,
  type ClipQueues,
  type ClipSource,
} from '../../domain/workflowContracts/clipGeneration';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import { releaseReservation } from '../billing/credits';
import { activeClipJobId, checkClipAdmission } from './clipAdmission';
import { storedFileOf } from '../content/storedFiles';
import { TIMED_OUT, withTimeout, withTimeoutAborting } from '../platform/timeouts';
import { recordJobEvent } from '../integrations/webhookEvents';

/** The workflow's signature (workflows/clipGeneration.ts), started by its type name: services do not import workflows. */
type ClipGenerationWorkflow = (input: ClipGenerationInput) => Promise<ClipResultSummary>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const VIDEO_GENERATION_MESSAGES = {
  noSource: 'No content selected for video generation.',
  bothSources: 'A clip cannot have both a render and an image source.',
  foreignUrl: 'imageUrl must be the file of a render or an AI image in this project.',
  urlMismatch: 'imageUrl does not match the selected render or image.',
  sourceNotFound: 'Render or image not found in this project.',
  notStoredHere: 'This item has no stored file to make a clip from.',
  projectNotFound: 'Project not found',
  jobNotFound: 'Video generation job not found',
  jobFinished: 'This video generation has already finished.',
  notRetryable: 'Only a failed or cancelled video generation can be retried.',
} as const;

/** What both start calls come down to once their bodies are read. */
export interface StartClipRequest {
  projectId: string;
  renderId?: string | null;
  imageId?: string | null;
  imageUrl?: string | null;
  effect: ClipJobOptions['effect'];
  platform: ClipJobOptions['platform'];
  aspectRatio: ClipAspectRatio;
  durationSeconds: number;
  prompt: string | null;
  isTemporaryImage: boolean;
  startedBy: ClipJobOptions['startedBy'];
}

/** The spec's start answer: success, jobId, and the rejection-streak warning with its code when it applies. */
export interface StartClipAnswer {
  success: true;
  jobId: string;
  warning?: string;
  code?: string;
}

export interface VideoGenerationDeps {
  knex: Knex;
  logger?: Logger;
  client: () => Promise<Client>;
  /** The clip workflow's own queue, and where it sends media work and approvals. */
  queues: ClipQueues & { generation: string };
  /** How long a start waits for the workflow to admit or refuse the job (ms). */
  admissionTimeoutMs?: number;
  /** Reads a file URL a client sends back (on S3 also the presigned links); default: the stable /api/files form only. */
  urls?: Pick<FileLinks, 'parse'>;
}

export function defaultClipQueues(overrides: Partial<Record<keyof typeof TASK_QUEUES, string>> = {}): ClipQueues & { generation: string } {
  return {
    generation: overrides.generation ?? TASK_QUEUES.generation,
    media: overrides.media ?? TASK_QUEUES.media,
    approvals: overrides.approvals ?? TASK_QUEUES.approvals,
  };
}

function notFound(message: string = VIDEO_GENERATION_MESSAGES.jobNotFound): DomainError {
  return new DomainError(404, CLIP_ERROR_CODES.jobNotFound, message);
}

function failedToStart(): DomainError {
  return new DomainError(503, 'VIDEO_START_FAILED', MSG.failedToStartVideo);
}

function sameFile(a: FileRef, b: FileRef): boolean {
  return a.bucket === b.bucket && a.path === b.path;
}

function storedOptions(row: VideoGenerationJob): ClipJobOptions {
  return row.options as unknown as ClipJobOptions;
}

/**
 * A job as the status calls show it: from its row, which the workflow's activities write at every step (status,
 * progress, message, and the render's progress while the provider works). A read never waits on a worker: a query
 * needs one, and under load that wait was the slowest part of every status read.
 */
function toView(row: VideoGenerationJob): ClipJobView {
  return {
    id: row.id,
    status: row.status,
    progress: row.progress,
    message: row.message ?? '',
    error: row.error,
    code: null,
    result: (row.result as unknown as ClipResultSummary | null) ?? null,
    projectId: row.projectId,
    options: storedOptions(row),
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

export class VideoGenerationService {
  private readonly admissionTimeoutMs: number;

  constructor(private readonly deps: VideoGenerationDeps) {
    this.admissionTimeoutMs = deps.admissionTimeoutMs ?? 20_000;
  }

  /**
   * The render or AI image of the user's project the clip is made from, by id or by its file URL (ours only:
   * nothing is ever fetched from an address a client sends).
   */
  async resolveSource(workspaceId: string, request: Pick<StartClipRequest, 'projectId' | 'renderId' | 'imageId' | 'imageUrl'>): Promise<ClipSource> {
    const { knex } = this.deps;
    if (!UUID.test(request.projectId)) throw new DomainError(404, 'PROJECT_NOT_FOUND', VIDEO_GENERATION_MESSAGES.projectNotFound);
    const project = await Project.query(knex).findOne({ id: request.projectId, workspace_id: workspaceId });
    if (!project) throw new DomainError(404, 'PROJECT_NOT_FOUND', VIDEO_GENERATION_MESSAGES.projectNotFound);
    if (request.renderId && request.imageId) throw new DomainError(400, 'VALIDATION_ERROR', VIDEO_GENERATION_MESSAGES.bothSources);

    const fromUrl = request.imageUrl ? (this.deps.urls ?? { parse: parseFileUrl }).parse(request.imageUrl) : null;
    if (request.imageUrl && !fromUrl) throw new DomainError(400, 'VALIDATION_ERROR', VIDEO_GENERATION_MESSAGES.foreignUrl);

    let kind: ClipSourceKind;
    let row: Render | Image | undefined;
    const scope = { project_id: project.id, workspace_id: workspaceId };
    if (request.renderId || request.imageId) {
      const id = (request.renderId ?? request.imageId) as string;
      kind = request.renderId ? 'render' : 'image';
      if (UUID.test(id)) row = kind === 'render' ? await Render.query(knex).findOne({ ...scope, id }) : await Image.query(knex).findOne({ ...scope, id });
    } else if (fromUrl) {
      const byFile = { storage_bucket: fromUrl.bucket, storage_path: fromUrl.path };
      const byUrl = { file_url: fileUrl(fromUrl.bucket, fromUrl.path) };
      row = await Render.query(knex).where(scope).where((q) => q.where(byFile).orWhere(byUrl)).first();
      kind = 'render';
      if (!row) {
        row = await Image.query(knex).where(scope).where((q) => q.where(byFile).orWhere(byUrl)).first();
        kind = 'image';
      }
    } else {
      throw new DomainError(400, 'VALIDATION_ERROR', VIDEO_GENERATION_MESSAGES.noSource);
    }
    if (!row) throw new DomainError(404, 'SOURCE_NOT_FOUND', VIDEO_GENERATION_MESSAGES.sourceNotFound);
    const file = storedFileOf(row);
    if (!file) throw new DomainError(400, 'VALIDATION_ERROR', VIDEO_GENERATION_MESSAGES.notStoredHere);
    if (fromUrl && !sameFile(fromUrl, file)) throw new DomainError(400, 'VALIDATION_ERROR', VIDEO_GENERATION_MESSAGES.urlMismatch);
    return { kind, id: row.id, bucket: file.bucket, path: file.path, fileName: row.fileName };
  }

  /**
   * Admits and starts a clip for the account `workspaceId` (the workspace), started by `actorId` (the account itself when
   * absent: a personal workspace's owner). Refused starts answer the rule's status, code and text, and leave nothing behind.
   */
  async start(workspaceId: string, request: StartClipRequest, actorId: string = workspaceId, jobId: string = randomUUID()): Promise<StartClipAnswer> {
    const source = await this.resolveSource(workspaceId, request);
    const options: ClipJobOptions = {
      effect: request.effect,
      platform: request.platform,
      aspectRatio: request.aspectRatio,
      durationSeconds: request.durationSeconds,
      prompt: request.prompt,
      sourceKind: source.kind,
      sourceId: source.id,
      isTemporaryImage: request.isTemporaryImage,
      startedBy: request.startedBy,
    };
    return this.startJob(workspaceId, actorId, request.projectId, source, options, jobId);
  }

  private async startJob(workspaceId: string, actorId: string, projectId: string, source: ClipSource, options: ClipJobOptions, jobId: string = randomUUID()): Promise<StartClipAnswer> {
    // answered here for the common case; the workflow's admission, under the profile lock, is the one that counts
    const check = await checkClipAdmission(this.deps.knex, workspaceId, actorId, jobId);
    if (!check.ok) throw new DomainError(check.status, check.code, check.error);

    const input: ClipGenerationInput = {
      jobId,
      workspaceId,
      actorId,
      projectId,
      source,
      options,
      queues: { media: this.deps.queues.media, approvals: this.deps.queues.approvals },
    };
    let client: Client;
    try {
      client = await this.deps.client();
    } catch (err) {
      this.deps.logger?.error({ err }, 'temporal unavailable: clip not started');
      throw failedToStart();
    }
    const startOperation = new WithStartWorkflowOperation<ClipGenerationWorkflow>('clipGenerationWorkflow', {
      workflowId: clipWorkflowId(jobId),
      taskQueue: this.deps.queues.generation,
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: jobSearchAttributes({ workspaceId, actorId, kind: 'clip', itemId: jobId, projectId }),
      args: [input],
    });
    let admission: ClipAdmission | typeof TIMED_OUT;
    try {
      admission = await withTimeoutAborting(
        (signal) => client.withAbortSignal(signal, () => client.workflow.executeUpdateWithStart(clipAdmissionUpdate, { startWorkflowOperation: startOperation })),
        this.admissionTimeoutMs,
      );
    } catch (err) {
      this.deps.logger?.error({ err, jobId }, 'clip workflow could not start');
      throw failedToStart();
    }
    if (admission === TIMED_OUT) {
      // no worker answered in time: the user is told it failed, so the job must not go on later unseen
      this.deps.logger?.error({ jobId }, 'clip admission timed out; cancelling the workflow');
      await client.workflow
        .getHandle(clipWorkflowId(jobId))
        .cancel()
        .catch(() => undefined);
      throw failedToStart();
    }
    if (!admission.admitted) throw new DomainError(admission.status, admission.code, admission.error);
    return {
      success: true,
      jobId,
      ...(admission.warning ? { warning: admission.warning } : {}),
      ...(admission.code ? { code: admission.code } : {}),
    };
  }

  private async ownedJob(workspaceId: string, jobId: string): Promise<VideoGenerationJob> {
    if (!UUID.test(jobId)) throw notFound();
    const row = await VideoGenerationJob.query(this.deps.knex).findOne({ id: jobId, workspace_id: workspaceId });
    if (!row) throw notFound();
    return row;
  }

  async status(workspaceId: string, jobId: string): Promise<ClipJobView> {
    const row = await this.ownedJob(workspaceId, jobId);
    return toView(row);
  }

  /**
   * The actor's pending or processing clip in the workspace, if any: what a reload or a second browser of theirs
   * picks up (one at a time per member, services/generation/clipAdmission.ts; other members' clips are in Activity).
   */
  async active(workspaceId: string, actorId: string): Promise<ClipJobView | null> {
    const id = await activeClipJobId(this.deps.knex, workspaceId, actorId);
    const row = id ? await VideoGenerationJob.query(this.deps.knex).findById(id) : undefined;
    return row ? toView(row) : null;
  }

  /**
   * Closes a job whose workflow no longer exists: the row reads cancelled and its active reservation (keyed by the
   * workflow id) goes back to the account, in one transaction.
   */
  private async closeOrphaned(row: VideoGenerationJob, actorId: string | undefined): Promise<void> {
    await this.deps.knex.transaction(async (trx) => {
      const reservation = await trx('credit_reservations')
        .where({ workspace_id: row.workspaceId, idempotency_key: row.workflowId, status: 'active' })
        .first<{ id: string } | undefined>('id');
      if (reservation) await releaseReservation(trx, { reservationId: reservation.id, reason: 'workflow no longer exists', actorId });
      const moved = await trx('video_generation_jobs')
        .where({ id: row.id })
        .whereNotIn('status', CLIP_JOB_FINAL_STATUSES)
        .update({ status: 'cancelled', message: CLIP_MESSAGES.cancelled, updated_at: trx.fn.now() });
      if (moved > 0) {
        await recordJobEvent(trx, { workspaceId: row.workspaceId, projectId: row.projectId, jobId: row.id, kind: 'clip', status: 'cancelled', startedBy: row.createdBy, error: CLIP_MESSAGES.cancelled });
      }
    });
  }

  /** Requests the workflow's cancellation and waits briefly for it to release the credits. */
  async cancel(workspaceId: string, jobId: string, actorId?: string): Promise<ClipJobView> {
    const row = await this.ownedJob(workspaceId, jobId);
    if (isFinalClipStatus(row.status)) throw new DomainError(409, CLIP_ERROR_CODES.jobFinished, VIDEO_GENERATION_MESSAGES.jobFinished);
    let client: Client;
    try {
      client = await this.deps.client();
    } catch (err) {
      this.deps.logger?.error({ err }, 'temporal unavailable: clip not cancelled');
      throw new DomainError(503, 'VIDEO_CANCEL_FAILED', MSG.somethingWentWrong);
    }
    const handle = client.workflow.getHandle(row.workflowId);
    try {
      await handle.cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // no run behind the row any more (terminated by hand, or past the namespace's retention): nothing else will
      // ever close it, so the cancel does what the run's own clean-up would have done
      await this.closeOrphaned(row, actorId);
      const closed = await this.ownedJob(workspaceId, jobId);
      return toView(closed);
    }
    await withTimeout(
      handle.result().catch(() => undefined),
      10_000,
    );
    const after = await this.ownedJob(workspaceId, jobId);
    return toView(after);
  }

  /** Starts a new job with a failed or cancelled job's inputs, started by `actorId` (the account itself when absent). */
  async retry(workspaceId: string, jobId: string, actorId: string = workspaceId): Promise<StartClipAnswer & { retriedFrom: string }> {
    const row = await this.ownedJob(workspaceId, jobId);
    const retryable: readonly ClipJobStatus[] = ['failed', 'cancelled'];
    if (!retryable.includes(row.status)) throw new DomainError(409, CLIP_ERROR_CODES.jobNotRetryable, VIDEO_GENERATION_MESSAGES.notRetryable);
    const previous = storedOptions(row);
    const effect = parseVideoEffect(String(previous.effect ?? ''));
    const platform = parsePlatform(String(previous.platform ?? ''));
    if (!effect || !platform) throw new DomainError(409, CLIP_ERROR_CODES.jobNotRetryable, VIDEO_GENERATION_MESSAGES.notRetryable);
    if (!row.renderId && !row.imageId) throw new DomainError(404, CLIP_ERROR_CODES.sourceMissing, CLIP_MESSAGES.sourceMissing);
    const source = await this.resolveSource(workspaceId, { projectId: row.projectId, renderId: row.renderId, imageId: row.imageId });
    const options: ClipJobOptions = {
      effect,
      platform,
      aspectRatio: previous.aspectRatio,
      durationSeconds: previous.durationSeconds,
      prompt: previous.prompt ?? null,
      sourceKind: source.kind,
      sourceId: source.id,
      isTemporaryImage: previous.isTemporaryImage === true,
      startedBy: previous.startedBy === 'portrait' ? 'portrait' : 'start',
    };
    const answer = await this.startJob(workspaceId, actorId, row.projectId, source, options);
    return { ...answer, retriedFrom: row.id };
  }
}
