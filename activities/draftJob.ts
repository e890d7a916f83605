/**
 * Activities of the draft job workflow (workflows/draftJob.ts). The model run goes to the media queue; the records
 * run on the generation queue. Every step is safe to run again: the run writes `<image folder>/v-<jobId>.<ext>`
 * (replacing what an interrupted attempt left), and saving a version is keyed by the job id.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { StoredFile } from '../domain/approvals';
import {
  DRAFT_JOB_ERRORS,
  DRAFT_MODEL_INPUT,
  DRAFTS_BUCKET,
  ENHANCE_MSG,
  draftFolder,
  modelInputMaxSide,
  modelOption,
  pushVersion,
  type DraftImageMetadata,
  type DraftJobResult,
  type DraftJobWorkflowInput,
  type DraftVersion,
} from '../domain/enhanceRenders';
import { publishEvent } from '../services/platform/events';
import { recordJobEvent } from '../services/integrations/webhookEvents';
import { removeStoredFiles } from '../services/content/storedFiles';
import { fileUrl, ObjectNotFoundError } from '../storage';
import type { ActivityDeps } from './deps';
import { reportingRefusals } from './failures';
import { UnreadableImageError, workingCopy } from './workingCopies';

const HEARTBEAT_EVERY_MS = 5000;
const OUTPUT_EXTENSIONS = ['jpg', 'png', 'webp'] as const;

/** What a run stored: the new version's file and what it is. */
export interface DraftModelOutput {
  file: StoredFile;
  mime: string;
  width: number;
  height: number;
  bytes: number;
  providerModel: string;
  description: string | null;
  durationMs: number;
}

export function draftVersionFolder(workspaceId: string, draftId: string, imageId: string): string {
  return `${draftFolder(workspaceId, draftId)}/${imageId}`;
}

function outputPaths(job: Pick<DraftJobWorkflowInput, 'workspaceId' | 'draftId' | 'imageId' | 'jobId'>): string[] {
  return OUTPUT_EXTENSIONS.map((ext) => `${draftVersionFolder(job.workspaceId, job.draftId, job.imageId)}/v-${job.jobId}.${ext}`);
}

function sourceFailure(cause: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: DRAFT_JOB_ERRORS.invalidSource,
    message: ENHANCE_MSG.invalidSourceImage,
    nonRetryable: true,
    cause: cause instanceof Error ? cause : undefined,
  });
}

function imageGone(): ApplicationFailure {
  return ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.imageGone, message: 'The image was removed from the draft', nonRetryable: true });
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

export function createDraftJobActivities(deps: Pick<ActivityDeps, 'knex' | 'storage' | 'providers' | 'logger'>) {
  const { objects } = deps.storage;

  return {
    markDraftJobProcessing: (input: { jobId: string }): Promise<void> =>
      reportingRefusals(async () => {
        await deps.knex('draft_jobs').where({ id: input.jobId, status: 'pending' }).update({ status: 'processing', updated_at: deps.knex.fn.now() });
      }),

    /** Runs the job's model on the source (and references) and stores the result as `v-<jobId>.<ext>` beside the image's versions. */
    runDraftModel: (job: DraftJobWorkflowInput): Promise<DraftModelOutput> =>
      reportingRefusals(() =>
        withHeartbeats(async () => {
          const option = modelOption(job.modelId);
          if (!option) throw ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.failed, message: `Unknown model ${job.modelId}`, nonRetryable: true });
          // the model works on copies within its input size; the stored upload or version is never changed
          let image: Buffer;
          let references: Buffer[];
          try {
            image = (await workingCopy(objects, job.source, modelInputMaxSide(option))).image;
            references = [];
            for (const file of job.references) references.push((await workingCopy(objects, file, DRAFT_MODEL_INPUT.referenceMaxSide)).image);
          } catch (err) {
            // a missing or unreadable file is the input's fault: not retried
            if (err instanceof ObjectNotFoundError || err instanceof UnreadableImageError) throw sourceFailure(err);
            throw err;
          }
          const started = Date.now();
          // an unreadable source is the provider's INPUT refusal: not retried. A cancel (the image or its draft was
          // removed) ends the wait at once and nothing is written after it
          const ctx = Context.current();
          const run = deps.providers.draftModels.run({ mode: job.mode, model: option.model, image, prompt: job.prompt, references, scale: option.scale, caller: job.workspaceId });
          run.catch(() => undefined);
          const result = await Promise.race([run, ctx.cancelled]);
          if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
          const durationMs = Date.now() - started;
          const ext = result.mime === 'image/png' ? 'png' : result.mime === 'image/webp' ? 'webp' : 'jpg';
          const paths = outputPaths(job);
          await objects.remove(DRAFTS_BUCKET, paths);
          const path = paths.find((p) => p.endsWith(`.${ext}`)) as string;
          await objects.put(DRAFTS_BUCKET, path, result.image);
          return {
            file: { bucket: DRAFTS_BUCKET, path },
            mime: result.mime,
            width: result.width,
            height: result.height,
            bytes: result.image.length,
            providerModel: result.model,
            description: result.description ?? null,
            durationMs,
          };
        }),
      ),

    /**
     * Pushes the run's file on top of the image's history (8 kept), records the job's usage (free during the Beta) and
     * tells the user's browsers, in one transaction; then removes the files of versions that fell off. Saving the same
     * job again changes nothing.
     */
    saveDraftVersion: (input: { job: DraftJobWorkflowInput; output: DraftModelOutput }): Promise<DraftJobResult> =>
      reportingRefusals(async () => {
        const { job, output } = input;
        const url = fileUrl(output.file.bucket, output.file.path);
        const saved = await deps.knex.transaction(async (trx) => {
          const row = (await trx('draft_images')
            .join('drafts', 'drafts.id', 'draft_images.draft_id')
            .where({ 'draft_images.id': job.imageId, 'drafts.id': job.draftId, 'drafts.workspace_id': job.workspaceId })
            .forUpdate()
            .first('draft_images.metadata')) as { metadata: DraftImageMetadata } | undefined;
          if (!row) throw imageGone();
          const current = row.metadata;
          const already = current.history.find((v) => v.job_id === job.jobId);
          if (already) return { version: already, evicted: [] as DraftVersion[] };
          const version: DraftVersion = {
            url,
            storage: output.file,
            created_at: new Date().toISOString(),
            source: job.mode,
            model_id: job.modelId,
            prompt: job.prompt,
            job_id: job.jobId,
          };
          const { metadata, evicted } = pushVersion(current, version);
          await trx('draft_images')
            .where({ id: job.imageId })
            .update({ metadata: JSON.stringify({ ...metadata, width: output.width, height: output.height, mime: output.mime }), resolved_url: url, updated_at: trx.fn.now() });
          await trx('draft_jobs')
            .where({ id: job.jobId })
            .update({
              status: 'completed',
              error: null,
              provider_model: output.providerModel,
              result_url: url,
              credits_charged: 0,
              usage: JSON.stringify({
                mode: job.mode,
                modelId: job.modelId,
                providerModel: output.providerModel,
                references: job.references.length,
                width: output.width,
                height: output.height,
                bytes: output.bytes,
                durationMs: output.durationMs,
                credits: 0,
                note: 'free during the Beta',
              }),
              completed_at: trx.fn.now(),
              updated_at: trx.fn.now(),
            });
          await trx('drafts').where({ id: job.draftId }).update({ updated_at: trx.fn.now() });
          await publishEvent(trx, job.workspaceId, { kind: 'job', job: 'draft', jobId: job.jobId, status: 'completed', draftId: job.draftId, imageId: job.imageId });
          await recordJobEvent(trx, { workspaceId: job.workspaceId, projectId: null, jobId: job.jobId, kind: 'enhance', status: 'completed', startedBy: job.actorId ?? null, draftId: job.draftId, draftImageId: job.imageId });
          return { version, evicted };
        });
        // files of versions no row points at any more; a failure leaves an orphan (removed with the draft), never a broken history
        await removeStoredFiles(objects, saved.evicted.map((v) => v.storage), deps.logger);
        return { jobId: job.jobId, imageId: job.imageId, version: saved.version, evicted: saved.evicted.length };
      }),

    /** Marks the job failed (unless it completed) and removes its output, unless that output became a version. */
    failDraftJob: (input: { jobId: string; workspaceId: string; draftId: string; imageId: string; error: string }): Promise<void> =>
      reportingRefusals(async () => {
        const inHistory = await deps.knex.transaction(async (trx) => {
          const failed: Array<{ created_by: string | null }> = await trx('draft_jobs')
            .where({ id: input.jobId })
            .whereIn('status', ['pending', 'processing'])
            .update({ status: 'failed', error: input.error.slice(0, 1000), completed_at: trx.fn.now(), updated_at: trx.fn.now() })
            .returning(['created_by']);
          for (const row of failed) {
            await recordJobEvent(trx, {
              workspaceId: input.workspaceId,
              projectId: null,
              jobId: input.jobId,
              kind: 'enhance',
              status: 'failed',
              startedBy: row.created_by,
              draftId: input.draftId,
              draftImageId: input.imageId,
              error: input.error.slice(0, 1000),
            });
          }
          const row = (await trx('draft_images').where({ id: input.imageId }).first('metadata')) as { metadata: DraftImageMetadata } | undefined;
          await publishEvent(trx, input.workspaceId, { kind: 'job', job: 'draft', jobId: input.jobId, status: 'failed', draftId: input.draftId, imageId: input.imageId });
          return row?.metadata.history.some((v) => v.job_id === input.jobId) ?? false;
        });
        if (!inHistory) await objects.remove(DRAFTS_BUCKET, outputPaths({ ...input }));
      }),
  };
}
