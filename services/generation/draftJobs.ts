/**
 * POST /api/enhance-set/jobs/dispatch: one draft-job workflow (`draft-job-<jobId>`) per selected image, answered as
 * the spec's { success, dispatched, results[] (ok, error, data.details), error }. The request as a whole is checked
 * first (draft, model and mode, prompt, references, Sync Images' pinned image), refused with a 4xx and the spec's text;
 * then each image gets its own result: an image not in the draft, or one still processing, fails alone.
 * Also the vision prompt (POST /api/ai-enhance-prompt/vision), which reads the user's own draft files only.
 * The account (`workspaceId`) is the workspace the drafts belong to (DESIGN.md "Teams (workspaces)"); the member who
 * dispatches a job is its `actorId`, recorded as draft_jobs.created_by.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { UniqueViolationError } from 'objection';
import type { Logger } from '../../config/logger';
import { DraftImage } from '../../db/models';
import type { StoredFile } from '../../domain/approvals';
import {
  DRAFT_LIMITS,
  ENHANCE_MSG,
  RENDER_ENHANCE_PROMPT,
  STYLE_SYNC_DEFAULT_PROMPT,
  STYLE_TRANSFER_DEFAULT_PROMPT,
  draftJobWorkflowId,
  modeMatchesModel,
  modelOption,
  type DispatchResponse,
  type DispatchResultItem,
  type DraftImageMetadata,
  type DraftJobResult,
  type DraftJobMode,
  type DraftJobWorkflowInput,
  type EnhanceModelOption,
  type VisionPromptMode,
} from '../../domain/enhanceRenders';
import { DomainError } from '../../domain/errors';
import type { Providers } from '../../providers/types';
import type { Storage } from '../../storage';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import { createdByValue } from './actor';
import { isOwnDraftFile, type DraftService } from './drafts';
import type { DraftUploads } from './draftUploads';
import { recordJobEvent } from '../integrations/webhookEvents';
import { currentTraceId } from '../../config/tracing';

/** The workflow's signature (workflows/draftJob.ts), started by its type name: services do not import workflows. */
type DraftJobWorkflow = (input: DraftJobWorkflowInput) => Promise<DraftJobResult>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface DispatchRequest {
  draftId: string;
  imageIds: string[];
  prompt: string | null;
  modelId: string;
  mode: DraftJobMode;
  /** Attachment URLs (uploads with purpose 'reference', or other images of the user's drafts). */
  references: string[];
  /** Sync Images: the pinned image whose look the targets take. */
  syncImageId: string | null;
}

/** What a dispatch asked, kept on each of its jobs so a Retry asks the same again. */
interface StoredDispatchRequest {
  prompt: string | null;
  references: string[];
  syncImageId: string | null;
}

interface FailedJobRow {
  id: string;
  draft_id: string;
  draft_image_id: string;
  model_id: string;
  mode: DraftJobMode;
  prompt: string | null;
  status: string;
  request: StoredDispatchRequest | null;
}

export interface DraftJobServiceDeps {
  knex: Knex;
  storage: Storage;
  drafts: DraftService;
  /** Reference uploads a dispatch starts jobs with are registered through it (kept, no longer swept). */
  draftUploads: DraftUploads;
  temporal: () => Promise<Client>;
  queues: { generation: string; media: string };
  logger?: Logger;
}

function badRequest(code: string, message: string): DomainError {
  return new DomainError(400, code, message);
}

/** The first 300 characters of an unexpected error, for the result's details (never a stack). */
function detailOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, 300);
}

export class DraftJobService {
  constructor(private readonly deps: DraftJobServiceDeps) {}

  /** The model option, checked against the mode, the prompt and the references (the spec's texts). */
  private checkRequest(request: DispatchRequest): { option: EnhanceModelOption; prompt: string | null } {
    const option = modelOption(request.modelId);
    if (!option) throw badRequest('UNKNOWN_MODEL', `Unknown model "${request.modelId}"`);
    if (!modeMatchesModel(request.mode, option)) throw badRequest('MODE_MODEL_MISMATCH', `${option.label} does not run ${request.mode}`);
    if (request.imageIds.length === 0) throw badRequest('NO_IMAGES', ENHANCE_MSG.selectImage);
    if (!request.imageIds.some((id) => UUID.test(id))) throw badRequest('IMAGES_NOT_SAVED', ENHANCE_MSG.waitForSaving);

    if (request.mode === 'style_sync') {
      if (request.references.length > 0) throw badRequest('ATTACHMENTS_IN_SYNC', ENHANCE_MSG.attachmentsDisabledInSync);
      if (!request.syncImageId) throw badRequest('SYNC_NEEDS_PINNED', ENHANCE_MSG.syncNeedsPinned);
      if (request.imageIds.includes(request.syncImageId)) throw badRequest('PINNED_NOT_TARGET', ENHANCE_MSG.pinnedNotTarget);
    } else if (request.references.length > 0) {
      if (!option.allowsAttachments) throw badRequest('ATTACHMENTS_NOT_ALLOWED', ENHANCE_MSG.attachmentsModelOnly);
      if (request.references.length > option.maxReferences) throw badRequest('TOO_MANY_ATTACHMENTS', ENHANCE_MSG.maxAttachments(option.maxReferences));
      if (request.references.length > DRAFT_LIMITS.maxReferencesSent) throw badRequest('TOO_MANY_REFERENCES', ENHANCE_MSG.referencesPerJob);
    }
    if (option.mode === 'style_transfer' && request.references.length === 0) throw badRequest('STYLE_NEEDS_REFERENCE', ENHANCE_MSG.styleNeedsReference);

    const words = option.promptEnabled ? (request.prompt?.trim() ?? '') : '';
    if (words.length > DRAFT_LIMITS.promptMaxLength) throw badRequest('PROMPT_TOO_LONG', `The prompt must be at most ${DRAFT_LIMITS.promptMaxLength} characters`);
    if (option.promptRequired && request.mode !== 'style_sync' && !words) throw badRequest('PROMPT_REQUIRED', ENHANCE_MSG.promptRequired);
    const prompt =
      request.mode === 'style_sync'
        ? words || STYLE_SYNC_DEFAULT_PROMPT
        : option.mode === 'render_enhance'
          ? RENDER_ENHANCE_PROMPT
          : option.mode === 'style_transfer'
            ? words || STYLE_TRANSFER_DEFAULT_PROMPT
            : option.promptEnabled
              ? words
              : null;
    return { option, prompt };
  }

  /** A reference URL back to one of the user's own draft files that exists; anything else is refused. */
  async resolveOwnFile(workspaceId: string, url: string): Promise<StoredFile> {
    const file = this.ownFile(workspaceId, url);
    await this.assertExists(file);
    return file;
  }

  private ownFile(workspaceId: string, url: string): StoredFile {
    const file = this.deps.storage.urls.parse(url);
    if (!isOwnDraftFile(file, workspaceId)) throw badRequest('REFERENCE_NOT_FOUND', ENHANCE_MSG.referenceNotFound);
    return file;
  }

  private async assertExists(file: StoredFile): Promise<void> {
    if (!(await this.deps.storage.objects.stat(file.bucket, file.path))) throw badRequest('REFERENCE_NOT_FOUND', ENHANCE_MSG.referenceNotFound);
  }

  async dispatch(workspaceId: string, request: DispatchRequest, actorId: string = workspaceId): Promise<DispatchResponse> {
    const { option, prompt } = this.checkRequest(request);
    const draft = await this.deps.drafts.findOwned(workspaceId, request.draftId, undefined, { activeOnly: true });
    let references: StoredFile[];
    if (request.mode === 'style_sync') {
      const pinned = UUID.test(request.syncImageId ?? '') ? await DraftImage.query(this.deps.knex).findOne({ id: request.syncImageId, draft_id: draft.id }) : undefined;
      if (!pinned) throw badRequest('SYNC_NEEDS_PINNED', ENHANCE_MSG.syncNeedsPinned);
      references = [(pinned.metadata as unknown as DraftImageMetadata).storage];
    } else {
      references = request.references.map((url) => this.ownFile(workspaceId, url));
    }

    // waiting reference uploads are registered first (a sweep removing one is waited for), then every reference must
    // still exist; when no job starts they wait again, so refused dispatches cannot keep uploads past their slots
    const registered = await this.deps.draftUploads.registerReferences(workspaceId, references);
    const results: DispatchResultItem[] = [];
    try {
      for (const file of references) await this.assertExists(file);
      const client = await this.deps.temporal();
      const asked: StoredDispatchRequest = { prompt: request.prompt, references: request.references, syncImageId: request.syncImageId };
      for (const imageId of [...new Set(request.imageIds)]) {
        results.push(await this.startOne(client, { workspaceId, actorId }, draft.id, imageId, option, request.mode, prompt, references, asked));
      }
    } finally {
      if (!results.some((r) => r.ok)) await this.deps.draftUploads.unregister(registered);
    }
    const dispatched = results.filter((r) => r.ok).length;
    const failed = results.find((r) => !r.ok);
    return {
      success: dispatched === results.length,
      dispatched,
      results,
      error: failed ? (failed.data.details ?? failed.error) : null,
    };
  }

  /** The user's own failed job (404 otherwise: another user's job is not found). */
  private async failedJob(workspaceId: string, jobId: string): Promise<FailedJobRow> {
    const row = UUID.test(jobId)
      ? ((await this.deps.knex('draft_jobs').where({ id: jobId, workspace_id: workspaceId }).first('id', 'draft_id', 'draft_image_id', 'model_id', 'mode', 'prompt', 'status', 'request')) as FailedJobRow | undefined)
      : undefined;
    if (!row) throw new DomainError(404, 'JOB_NOT_FOUND', 'Job not found');
    if (row.status !== 'failed') throw new DomainError(409, 'JOB_NOT_FAILED', 'Only a failed job can be retried or dismissed');
    return row;
  }

  /**
   * Runs a failed job again on its image: the same model, mode, prompt and references, through the same checks as a
   * dispatch (a reference removed since is refused with its text). The failure is dismissed once the new job starts.
   */
  async retry(workspaceId: string, jobId: string, actorId: string = workspaceId): Promise<DispatchResponse> {
    const failed = await this.failedJob(workspaceId, jobId);
    const asked = failed.request ?? { prompt: failed.prompt, references: [], syncImageId: null };
    const reply = await this.dispatch(
      workspaceId,
      {
      draftId: failed.draft_id,
      imageIds: [failed.draft_image_id],
      prompt: asked.prompt,
      modelId: failed.model_id,
      mode: failed.mode,
        references: asked.references,
        syncImageId: asked.syncImageId,
      },
      actorId,
    );
    if (reply.dispatched > 0) await this.deps.knex('draft_jobs').where({ id: failed.id }).update({ failure_dismissed_at: this.deps.knex.fn.now() });
    return reply;
  }

  /** The user has read the failure: its image's card shows it no more. */
  async dismiss(workspaceId: string, jobId: string): Promise<void> {
    const failed = await this.failedJob(workspaceId, jobId);
    await this.deps.knex('draft_jobs').where({ id: failed.id }).whereNull('failure_dismissed_at').update({ failure_dismissed_at: this.deps.knex.fn.now() });
  }

  private async startOne(
    client: Client,
    { workspaceId, actorId }: { workspaceId: string; actorId: string },
    draftId: string,
    imageId: string,
    option: EnhanceModelOption,
    mode: DraftJobMode,
    prompt: string | null,
    references: StoredFile[],
    asked: StoredDispatchRequest,
  ): Promise<DispatchResultItem> {
    const refused = (error: string, details?: string): DispatchResultItem => ({ imageId, ok: false, error, data: { details: details ?? error } });
    if (!UUID.test(imageId)) return refused(ENHANCE_MSG.waitForSaving);
    const image = await DraftImage.query(this.deps.knex).findOne({ id: imageId, draft_id: draftId });
    if (!image) return refused(ENHANCE_MSG.imageNotFound);
    const source = (image.metadata as unknown as DraftImageMetadata).storage;
    if (!source) return refused(ENHANCE_MSG.invalidSourceImage);

    const jobId = randomUUID();
    try {
      await this.deps.knex.transaction(async (trx) => {
        await trx('draft_jobs').insert({
          id: jobId,
          draft_id: draftId,
          draft_image_id: imageId,
          workspace_id: workspaceId,
          created_by: createdByValue(trx, actorId),
          model_id: option.id,
          mode,
          prompt,
          status: 'pending',
          workflow_id: draftJobWorkflowId(jobId),
          request: JSON.stringify(asked),
          trace_id: currentTraceId(),
        });
        await recordJobEvent(trx, { workspaceId, projectId: null, jobId, kind: 'enhance', status: 'started', startedBy: actorId, draftId, draftImageId: imageId });
      });
    } catch (err) {
      if (err instanceof UniqueViolationError || (err as { code?: string }).code === '23505') return refused(ENHANCE_MSG.jobAlreadyRunning);
      throw err;
    }
    const workflowId = draftJobWorkflowId(jobId);
    try {
      await client.workflow.start<DraftJobWorkflow>('draftJobWorkflow', {
        taskQueue: this.deps.queues.generation,
        workflowId,
        memo: { workspaceId, actorId, draftId, imageId },
        typedSearchAttributes: jobSearchAttributes({ workspaceId, actorId, kind: 'draft-job', itemId: jobId }),
        args: [{ jobId, workspaceId, actorId, draftId, imageId, mode, modelId: option.id, prompt, source, references, mediaQueue: this.deps.queues.media }],
      });
    } catch (err) {
      this.deps.logger?.warn({ err, workflowId }, 'could not start a draft job');
      await this.deps.knex.transaction(async (trx) => {
        await trx('draft_jobs').where({ id: jobId }).update({ status: 'failed', error: 'Failed to start job', updated_at: trx.fn.now() });
        await recordJobEvent(trx, { workspaceId, projectId: null, jobId, kind: 'enhance', status: 'failed', startedBy: actorId, draftId, draftImageId: imageId, error: 'Failed to start job' });
      });
      return refused('Failed to start job', detailOf(err));
    }
    return { imageId, ok: true, error: null, data: { jobId, workflowId, status: 'pending' } };
  }
}

export interface VisionPromptRequestBody {
  mode: VisionPromptMode;
  prompt: string;
  imageUrls: string[];
  referenceUrls: string[];
}

/** The vision prompt: the user's own draft files read from storage, then the provider's enhancer. */
export async function enhanceVisionPrompt(
  deps: { storage: Storage; providers: Pick<Providers, 'visionPrompt'>; jobs: DraftJobService },
  workspaceId: string,
  body: VisionPromptRequestBody,
): Promise<{ enhancedPrompt: string; method: string }> {
  const read = async (url: string): Promise<Buffer> => {
    const file = await deps.jobs.resolveOwnFile(workspaceId, url);
    const stream = await deps.storage.objects.read(file.bucket, file.path);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const images = await Promise.all(body.imageUrls.map(read));
  const references = await Promise.all(body.referenceUrls.map(read));
  return deps.providers.visionPrompt.enhance({ mode: body.mode, prompt: body.prompt, images, references });
}
