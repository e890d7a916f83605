/**
 * POST /api/ai-image-simple (spec 000 section 7): resolves the base image among the user's own renders and AI
 * images, starts the image edit workflow and waits for it, then answers the spec's shape with signed links to
 * the watermarked preview. The status call answers from the job's ai_image_edits row, written pending here when the
 * run starts and kept current by the workflow at each step: a read never waits on a worker (under load, a query's
 * wait for one was the slowest status read of the soak). Only a run started before rows were written at the start
 * (or whose row could not be written) is asked by query.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { failureStatus } from '../../domain/failureDetails';
import { Image, Render } from '../../db/models';
import { REJECTION_STREAK_WARNING_AT } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import {
  IMAGE_EDIT_MESSAGES,
  imageEditWorkflowId,
  type ImageEditFormat,
  type ImageEditQuality,
  type ImageEditQueues,
  type ImageEditResponse,
  type ImageEditResult,
  type ImageEditSource,
  type ImageEditState,
  type ImageEditWorkflowInput,
} from '../../domain/imageEdit';
import { MSG } from '../../domain/messages';
import { isBucket, type Storage } from '../../storage';
import { imageEditStateQuery } from '../../domain/workflowContracts/imageEdit';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import type { ProjectService } from '../content/projects';
import { storedFileOf } from '../content/storedFiles';
import { queryWorkflowOrNull } from '../platform/workflowQuery';
import { createdByValue } from './actor';
import type { Logger } from '../../config/logger';
import { currentTraceId } from '../../config/tracing';

/** The workflow's signature (workflows/imageEdit.ts), started by its type name: services do not import workflows. */
type ImageEditWorkflow = (input: ImageEditWorkflowInput) => Promise<ImageEditResult>;

/** How long the API waits for a run before answering that it is still going (it finishes in the background). */
export const IMAGE_EDIT_WAIT_MS = 120_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ImageEditRequest {
  projectId: string | null;
  userIntent: string | null;
  platform: string;
  prompt: string;
  baseImage: string;
  imageDescription: string | null;
  validateRefinement: boolean;
  format: ImageEditFormat;
  quality: ImageEditQuality;
  upscaleScale: number;
}

export interface ImageEditJobState extends ImageEditState {
  jobId: string;
  workflowId: string;
}

export interface ImageEditServiceDeps {
  knex: Knex;
  storage: Storage;
  projects: ProjectService;
  temporal: () => Promise<Client>;
  /** The workflow runs on `generation`; its media steps and approval child go to the other two. */
  queues: ImageEditQueues & { generation: string };
  waitMs?: number;
  /**
   * With a hosted provider that calls back (AI_PROVIDER=fal and FAL_WEBHOOK_BASE_URL): runs are started to submit
   * their hosted jobs with a callback and wait for it, looking at the provider every `fallbackPollMs`.
   */
  hostedCallbacks?: { fallbackPollMs: number };
  /** How long the status call waits for a run's own answer (one without a row) before reporting it from what Temporal says (2 s). */
  queryTimeoutMs?: number;
  logger?: Logger;
}

function baseImageNotFound(): DomainError {
  return new DomainError(404, 'BASE_IMAGE_NOT_FOUND', 'The selected image was not found in your projects');
}

/** A workflow failure back into the refusal it reports (code, status, message), or null for anything unexpected. */
function refusalOf(err: unknown): DomainError | null {
  if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure) || !err.cause.type) return null;
  return new DomainError(failureStatus(err.cause) ?? 500, err.cause.type, err.cause.message);
}

const QUEUED = 'Queued';

interface StatusRow {
  id: string;
  status: string;
  progress: number;
  message: string | null;
  error: string | null;
  error_code: string | null;
  result: ImageEditResult | null;
}

/**
 * The status call's state from the job's row. A cancelled run reads as failed (the status shape has no cancelled);
 * a row finished before rows carried their message and result reads as it did then (no result, the usual words).
 */
function stateOfRow(row: StatusRow): ImageEditState {
  if (row.status === 'pending' || row.status === 'processing') {
    return { status: row.status, progress: row.progress, message: row.message ?? QUEUED, error: null, errorCode: null, result: null };
  }
  if (row.status === 'completed') {
    const result = row.result ? { ...row.result, editId: row.id } : null;
    return { status: 'completed', progress: 100, message: row.message ?? IMAGE_EDIT_MESSAGES.sentForApproval, error: null, errorCode: null, result };
  }
  const error = row.error ?? MSG.somethingWentWrong;
  return { status: 'failed', progress: row.progress, message: row.message ?? error, error, errorCode: row.error_code, result: null };
}

export class ImageEditService {
  private readonly waitMs: number;
  private readonly queryTimeoutMs: number;

  constructor(private readonly deps: ImageEditServiceDeps) {
    this.waitMs = deps.waitMs ?? IMAGE_EDIT_WAIT_MS;
    this.queryTimeoutMs = deps.queryTimeoutMs ?? 2_000;
  }

  /**
   * The base image: the id of a render or AI image of the user, or its file URL (signed or not). Nothing else is
   * accepted, so the server never fetches an address a client chose.
   */
  async resolveSource(workspaceId: string, baseImage: string, projectId: string | null): Promise<ImageEditSource> {
    const value = baseImage.trim();
    let row: Render | Image | undefined;
    if (UUID.test(value)) {
      row = (await Render.query(this.deps.knex).findOne({ id: value, workspace_id: workspaceId })) ?? (await Image.query(this.deps.knex).findOne({ id: value, workspace_id: workspaceId }));
    } else {
      const ref = this.deps.storage.urls.parse(value);
      if (!ref) throw new DomainError(400, 'INVALID_BASE_IMAGE', 'baseImage must be a render or AI image of your project (its id or file URL)');
      if (ref.bucket !== 'renders' && ref.bucket !== 'images') throw baseImageNotFound();
      const where = { storage_bucket: ref.bucket, storage_path: ref.path, workspace_id: workspaceId };
      row = ref.bucket === 'renders' ? await Render.query(this.deps.knex).findOne(where) : await Image.query(this.deps.knex).findOne(where);
    }
    if (!row) throw baseImageNotFound();
    if (projectId !== null) {
      await this.deps.projects.findOwned(workspaceId, projectId);
      if (row.projectId !== projectId) throw baseImageNotFound();
    }
    const file = storedFileOf(row);
    if (!file || !isBucket(file.bucket)) throw new DomainError(400, 'INVALID_BASE_IMAGE', 'The selected image has no stored file');
    return {
      kind: row instanceof Render ? 'render' : 'image',
      id: row.id,
      projectId: row.projectId,
      file,
      fileUrl: row.fileUrl,
      fileName: row.fileName,
      fileSize: Number(row.fileSize ?? 0),
    };
  }

  /**
   * Starts the workflow for the account `workspaceId` (the workspace; DESIGN.md "Teams (workspaces)"), started by `actorId`
   * (the account itself when absent: a personal workspace's owner), and waits for it (up to waitMs): the pending item,
   * or the refusal as a DomainError.
   */
  async run(workspaceId: string, request: ImageEditRequest, actorId: string = workspaceId): Promise<{ status: 200 | 202; body: ImageEditResponse }> {
    const started = Date.now();
    const { handle, source, jobId, workflowId } = await this.launch(workspaceId, request, actorId, randomUUID());

    // read while the workflow runs (the run does not change the streak); awaited only when the answer is written
    const warning = this.streakWarning(workspaceId);
    warning.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.waitMs);
    });
    let result: ImageEditResult | null;
    try {
      result = await Promise.race([handle.result(), timeout]);
    } catch (err) {
      throw refusalOf(err) ?? err;
    } finally {
      clearTimeout(timer);
    }
    return this.answer(request, { source, jobId, workflowId, started, result, warning: await warning });
  }

  /**
   * Starts the workflow as `run` does, with the job id the caller chose, and returns at once: the job is followed by
   * its status call and the Activity view (a "request changes" starts the next version this way).
   */
  async start(workspaceId: string, request: ImageEditRequest, actorId: string, jobId: string): Promise<{ jobId: string; workflowId: string }> {
    const { workflowId } = await this.launch(workspaceId, request, actorId, jobId);
    return { jobId, workflowId };
  }

  private async launch(workspaceId: string, request: ImageEditRequest, actorId: string, jobId: string) {
    const source = await this.resolveSource(workspaceId, request.baseImage, request.projectId);
    const workflowId = imageEditWorkflowId(jobId);
    const client = await this.deps.temporal();
    const handle = await client.workflow.start<ImageEditWorkflow>('imageEditWorkflow', {
      taskQueue: this.deps.queues.generation,
      workflowId,
      memo: { workspaceId, actorId },
      typedSearchAttributes: jobSearchAttributes({ workspaceId, actorId, kind: 'image-edit', itemId: jobId, projectId: source.projectId }),
      args: [
        {
          jobId,
          workspaceId,
          actorId,
          projectId: source.projectId,
          source,
          prompt: request.prompt,
          imageDescription: request.imageDescription,
          userIntent: request.userIntent,
          platform: request.platform,
          validateRefinement: request.validateRefinement,
          format: request.format,
          quality: request.quality,
          upscaleScale: request.upscaleScale,
          queues: { media: this.deps.queues.media, approvals: this.deps.queues.approvals },
          ...(this.deps.hostedCallbacks ? { hostedCallbacks: this.deps.hostedCallbacks } : {}),
        },
      ],
    });

    await this.recordStart(workspaceId, actorId, jobId, source, request.prompt);
    return { handle, source, jobId, workflowId };
  }

  /** The spec's answer: the pending item with its watermarked preview, or (202) the run still going. */
  private answer(
    request: ImageEditRequest,
    run: { source: ImageEditSource; jobId: string; workflowId: string; started: number; result: ImageEditResult | null; warning: string | null },
  ): { status: 200 | 202; body: ImageEditResponse } {
    const { source, jobId, workflowId, started, result, warning } = run;
    const metadata: ImageEditResponse['metadata'] = {
      workflow: 'ENHANCED_IMAGE_EDITING',
      jobId,
      workflowId,
      status: result ? 'completed' : 'processing',
      approvalWorkflowId: result?.savedImage.approvalWorkflowId ?? null,
      editId: result?.editId ?? null,
      projectId: source.projectId,
      baseImage: { type: source.kind, id: source.id, fileName: source.fileName, fileSize: source.fileSize },
      format: request.format,
      quality: request.quality,
      upscaleScale: request.upscaleScale,
      platform: request.platform,
      processingTimeMs: Date.now() - started,
      warning,
    };
    if (!result) return { status: 202, body: { success: true, error: null, result: null, metadata } };

    const preview = this.deps.storage.urls.sign(result.savedImage.watermarked.bucket, result.savedImage.watermarked.path);
    const { generatedImage: generated, upscaledImage: upscaled, savedImage: saved } = result;
    return {
      status: 200,
      body: {
        success: true,
        error: null,
        result: {
          promptRefinement: result.promptRefinement,
          // the original stays private until approval: both steps are shown through the watermarked preview
          generatedImage: { url: preview, width: generated.width, height: generated.height, mime: generated.mime, model: generated.model, description: generated.description },
          upscaledImage: { url: preview, width: upscaled.width, height: upscaled.height, mime: upscaled.mime, model: upscaled.model, scale: upscaled.scale, fileSize: upscaled.fileSize },
          savedImage: {
            id: saved.approvalId,
            approvalId: saved.approvalId,
            status: saved.status,
            fractionalCostCharged: 0,
            fullCost: saved.fullCost,
            approvalDeadline: saved.approvalDeadline,
            fileName: saved.fileName,
            aspectRatio: saved.aspectRatio,
            previewUrl: preview,
          },
        },
        metadata,
      },
    };
  }

  /**
   * The job's row, pending, written once its run has started (the run writes each step on it, and writes it itself if
   * this did not happen: the insert never replaces what the run wrote). A failure here is logged, not answered: the
   * run goes on, and the status call asks it by query until it writes its row.
   */
  private async recordStart(workspaceId: string, actorId: string, jobId: string, source: ImageEditSource, prompt: string): Promise<void> {
    try {
      await this.deps
        .knex('ai_image_edits')
        .insert({
          workspace_id: workspaceId,
          project_id: source.projectId,
          workflow_id: imageEditWorkflowId(jobId),
          original_image_url: source.fileUrl,
          edit_prompt: prompt,
          edit_data: JSON.stringify({ jobId }),
          status: 'pending',
          progress: 0,
          message: QUEUED,
          created_by: createdByValue(this.deps.knex, actorId),
          trace_id: currentTraceId(),
        })
        .onConflict('workflow_id')
        .ignore();
    } catch (err) {
      this.deps.logger?.warn({ err, jobId }, 'could not write the image edit row at its start; its status is asked of the run until the run writes it');
    }
  }

  /** A job's state from its ai_image_edits row (its workflow's query only for a run without one); another workspace's job is not found. */
  async state(workspaceId: string, jobId: string): Promise<ImageEditJobState> {
    const notFound = new DomainError(404, 'IMAGE_EDIT_NOT_FOUND', 'Image generation job not found');
    if (!UUID.test(jobId)) throw notFound;
    const workflowId = imageEditWorkflowId(jobId);
    const row = (await this.deps.knex('ai_image_edits').where({ workflow_id: workflowId }).first('id', 'workspace_id', 'status', 'progress', 'message', 'error', 'error_code', 'result')) as
      | (StatusRow & { workspace_id: string })
      | undefined;
    if (row && row.workspace_id !== workspaceId) throw notFound;
    if (row) return { jobId, workflowId, ...stateOfRow(row) };
    return this.stateOfRun(workspaceId, jobId, workflowId, notFound);
  }

  /** A run without a row (started before rows were written at the start): its query, else what Temporal says of it. */
  private async stateOfRun(workspaceId: string, jobId: string, workflowId: string, notFound: DomainError): Promise<ImageEditJobState> {
    const client = await this.deps.temporal();
    const handle = client.workflow.getHandle(workflowId);
    try {
      const description = await handle.describe();
      if (description.memo?.workspaceId !== workspaceId) throw notFound;
      // a query needs a worker: when none answers in time (all busy, or none polling), a running run is reported as
      // queued rather than as a 500 (the soak met that under load); a closed one is answered from its row below
      const live = await queryWorkflowOrNull(client, workflowId, imageEditStateQuery, { timeoutMs: this.queryTimeoutMs, what: 'image edit' });
      if (live) return { jobId, workflowId, ...live };
      if (description.status.name === 'RUNNING') return { jobId, workflowId, status: 'pending', progress: 0, message: QUEUED, error: null, errorCode: null, result: null };
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    // the run may have written its row meanwhile
    const row = (await this.deps.knex('ai_image_edits').where({ workflow_id: workflowId, workspace_id: workspaceId }).first('id', 'status', 'progress', 'message', 'error', 'error_code', 'result')) as
      | StatusRow
      | undefined;
    if (!row) throw notFound;
    return { jobId, workflowId, ...stateOfRow(row) };
  }

  private async streakWarning(workspaceId: string): Promise<string | null> {
    const row = (await this.deps.knex('profiles').where({ id: workspaceId }).first('rejection_streak')) as { rejection_streak: number } | undefined;
    return row && Number(row.rejection_streak) === REJECTION_STREAK_WARNING_AT ? MSG.rejectionStreakWarning : null;
  }
}
