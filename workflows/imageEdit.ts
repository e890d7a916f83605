/**
 * One image edit (id `image-edit-<jobId>`): start rule and 1-credit reservation, prompt refinement, edit,
 * upscale, watermarked preview, the ai_image_edits record, then the pending approval and its approval workflow
 * (a child that outlives this one). Any failure after the reservation gives the credits back and removes the files.
 */
import { editedImageFileName } from '../domain/itemNames';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { CREDIT_COST } from '../domain/constants';
import { ERROR_CODES, MSG } from '../domain/messages';
import { approvalWorkflowId, type ImageApprovalMetadata, type NewPendingApproval } from '../domain/approvals';
import {
  IMAGE_EDIT_ERRORS,
  IMAGE_EDIT_MESSAGES,
  type ImageEditResult,
  type ImageEditState,
  type ImageEditWorkflowInput,
  type StoredImage,
} from '../domain/imageEdit';
import type { HostedImageJob, ImagePreviews, MadeEditedImage, RecordImageEditInput } from '../activities/imageEdit';
import type { CreatedPendingApproval } from '../activities/approvals';
import { approvalWorkflow } from './approval';
import { childSearchAttributes } from '../domain/searchAttributes';
import { IMAGE_EDIT_PROVIDER_CALLBACK_PATCH, imageEditProviderCallbackSignal, imageEditStateQuery } from '../domain/workflowContracts/imageEdit';
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
export * from '../domain/workflowContracts/imageEdit';

type Activities = ReturnType<typeof createActivities>;

const records = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * The same short database and prompt steps as local activities: run by the worker that runs the workflow code,
 * recorded as markers, so a chain of them costs no round trip through the server (the retry is the same).
 */
const localRecords = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * Version marker: workflows started before it ran the media part as three activities (generate, upscale,
 * previews, each writing its image to storage for the next to read back) and the records as regular activities;
 * their histories replay along that path.
 */
export const IMAGE_EDIT_ONE_MEDIA_STEP = 'image-edit-one-media-step';

/**
 * Version marker: workflows that reached their records before it saved the edit, then created the pending item,
 * then started the approval workflow as a child (one more workflow task, only to learn the child started);
 * their histories replay along that path.
 */
export const IMAGE_EDIT_SUBMIT_FOR_APPROVAL = 'image-edit-submit-for-approval';

/**
 * Version marker: workflows started before it kept their state in memory only (the status call asked them by query)
 * and wrote their row at the end; from it, each step is written on the row (the API writes it pending at the start),
 * the row closes with the result or the refusal's code, and a cancelled run still closes it.
 */
export const IMAGE_EDIT_STATUS_ROW = 'image-edit-status-row';

/**
 * Version marker: workflows started before it wrote each step's progress on the row before starting the step (a
 * local activity each, one after another: about a database write's time per step on the way to the approval queue);
 * from it, each write starts beside its step, and the run waits for them before it ends.
 */
export const IMAGE_EDIT_PROGRESS_BESIDE_STEPS = 'image-edit-progress-beside-steps';

/** One fallback look at a hosted job (a status call): short, and not on the media queue's slots. */
const looks = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

// giving credits back must happen eventually: retried until it does
const compensations = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * The words the user sees for a failure: the start rule's own texts; an unreadable source; otherwise a plain
 * "failed, not charged" (a provider's own message names hosts and request ids, not for users).
 */
function userFacingFailure(err: unknown): ApplicationFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && (cause.type === 'PROVIDER_INPUT' || cause.type === 'PROVIDER_VALIDATION')) {
    return ApplicationFailure.create({
      type: IMAGE_EDIT_ERRORS.invalidBaseImage,
      message: IMAGE_EDIT_MESSAGES.invalidBaseImage,
      details: [{ status: 400 }],
      nonRetryable: true,
    });
  }
  if (cause instanceof ApplicationFailure && cause.nonRetryable && cause.type && !cause.type.startsWith('PROVIDER_')) {
    const message = cause.type === ERROR_CODES.insufficientCredits ? MSG.insufficientCreditsImage : cause.message;
    return ApplicationFailure.create({ type: cause.type, message, details: cause.details ? [...cause.details] : undefined, nonRetryable: true });
  }
  return ApplicationFailure.create({
    type: IMAGE_EDIT_ERRORS.generationFailed,
    message: IMAGE_EDIT_MESSAGES.generationFailed,
    details: [{ status: 502 }],
    nonRetryable: true,
  });
}

export async function imageEditWorkflow(input: ImageEditWorkflowInput): Promise<ImageEditResult> {
  const workspaceId = workspaceIdOf(input);
  const state: ImageEditState = { status: 'pending', progress: 0, message: 'Queued', error: null, errorCode: null, result: null };
  setHandler(imageEditStateQuery, () => state);
  // the API verified the provider's callback for one of the run's hosted jobs (its request id)
  const calledBack = new Set<string>();
  setHandler(imageEditProviderCallbackSignal, ({ requestId }) => {
    calledBack.add(requestId);
  });
  const { workflowId } = workflowInfo();
  // who started it (a run from before workspaces names none: its account was its starter's personal workspace)
  const actorId = input.actorId || workspaceId;
  const statusRow = patched(IMAGE_EDIT_STATUS_ROW);
  const progressBeside = statusRow && patched(IMAGE_EDIT_PROGRESS_BESIDE_STEPS);
  const rowOf = { workflowId, workspaceId, actorId, projectId: input.projectId, originalImageUrl: input.source.fileUrl, editPrompt: input.prompt };
  // the row's progress writes started beside the steps they announce (progressBeside); each is scheduled at once, so
  // a replay schedules the same commands whatever order they ended in (the activity never moves progress back)
  const progressWrites: Promise<void>[] = [];
  const step = async (progress: number, message: string): Promise<void> => {
    state.status = 'processing';
    state.progress = progress;
    state.message = message;
    if (!statusRow) return;
    const written = localRecords.markImageEditProgress({ ...rowOf, jobId: input.jobId, progress, message });
    if (!progressBeside) return written;
    // a write that failed all its attempts only leaves the row's progress behind: the step itself fails the run if the
    // database is gone, and a write after the row closed changes nothing (the activity writes open rows only)
    progressWrites.push(written.catch(() => undefined));
  };

  const media = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 3 },
  });

  // chosen here, so a replay picks the same one: it names the files and the approval workflow
  const approvalId = uuid4();
  let reservationId: string | null = null;
  let approvalCreated = false;

  try {
    const oneMediaStep = patched(IMAGE_EDIT_ONE_MEDIA_STEP);
    const db = oneMediaStep ? localRecords : records;

    await step(5, 'Checking credits');
    ({ reservationId } = await db.reserveImageEditCredits({ workspaceId, actorId, workflowId, projectId: input.projectId }));

    await step(15, 'Refining your prompt');
    const promptRefinement = await db.refineImagePrompt({
      prompt: input.prompt,
      imageDescription: input.imageDescription,
      validateRefinement: input.validateRefinement,
    });

    await step(30, 'Generating image');
    let generated: Omit<StoredImage, 'file'>;
    let original: StoredImage;
    let previews: ImagePreviews;
    const callbacks = oneMediaStep ? input.hostedCallbacks : undefined;
    if (callbacks && patched(IMAGE_EDIT_PROVIDER_CALLBACK_PATCH)) {
      // the hosted jobs submitted with a callback: the run waits for its signal (no activity held meanwhile) and looks
      // at the provider only every fallbackPollMs, for a callback that was lost
      const awaitJob = async (job: HostedImageJob, kind: 'edit' | 'upscale'): Promise<void> => {
        const giveUpAt = Date.now() + job.maxWaitMs;
        for (;;) {
          if (await condition(() => calledBack.has(job.requestId), Math.max(1, Math.min(callbacks.fallbackPollMs, giveUpAt - Date.now())))) return;
          const giveUp = Date.now() >= giveUpAt;
          if ((await looks.lookAtHostedImageJob({ workflowId, providerJobId: job.jobId, kind, giveUp })).done) return;
          if (giveUp) throw ApplicationFailure.create({ type: 'PROVIDER_TIMEOUT', message: `The hosted ${kind} did not end in time`, nonRetryable: true });
        }
      };
      const hostedInput = {
        workflowId,
        jobId: input.jobId,
        approvalId,
        source: input.source,
        prompt: promptRefinement.refinedPrompt,
        format: input.format,
        quality: input.quality,
        scale: input.upscaleScale,
      };
      const made = await (async (): Promise<MadeEditedImage> => {
        const edit = await media.submitHostedImageEdit(hostedInput);
        if (edit.made) return edit.made;
        await awaitJob(edit.submitted, 'edit');
        await step(60, 'Upscaling');
        const upscale = await media.continueHostedImageEdit({ ...hostedInput, editJobId: edit.submitted.jobId });
        if (upscale.made) return upscale.made;
        await awaitJob(upscale.submitted, 'upscale');
        await step(80, 'Creating preview');
        return media.finishHostedImageEdit({ ...hostedInput, upscaleJobId: upscale.submitted.jobId, generated: upscale.generated });
      })();
      ({ generated, original, previews } = made);
    } else if (oneMediaStep) {
      ({ generated, original, previews } = await media.makeEditedImage({
        approvalId,
        source: input.source,
        prompt: promptRefinement.refinedPrompt,
        format: input.format,
        quality: input.quality,
        scale: input.upscaleScale,
      }));
    } else {
      const stored = await media.generateEditedImage({
        approvalId,
        source: input.source,
        prompt: promptRefinement.refinedPrompt,
        format: input.format,
        quality: input.quality,
      });
      generated = stored;

      await step(60, 'Upscaling');
      original = await media.upscaleEditedImage({ approvalId, generated: stored, scale: input.upscaleScale });

      await step(80, 'Creating preview');
      previews = await media.renderImagePreviews({ approvalId, original, generated: stored.file, format: input.format });
    }

    await step(88, 'Saving');
    // what was asked tells the edits of one render apart; a counter is added when the item is recorded
    const fileName = editedImageFileName(input.source.fileName, input.prompt, original.file.path.split('.').pop() ?? 'jpg');
    const record: RecordImageEditInput = {
      workflowId,
      workspaceId,
      actorId,
      projectId: input.projectId,
      originalImageUrl: input.source.fileUrl,
      editPrompt: input.prompt,
      status: 'completed',
      editedImage: original.file,
      editData: {
        jobId: input.jobId,
        approvalId,
        refinedPrompt: promptRefinement.refinedPrompt,
        refinementMethod: promptRefinement.refinementMethod,
        userIntent: input.userIntent,
        platform: input.platform,
        format: input.format,
        quality: input.quality,
        upscaleScale: input.upscaleScale,
        source: { kind: input.source.kind, id: input.source.id },
        generatedModel: generated.model,
        upscaleModel: original.model,
        width: original.width,
        height: original.height,
      },
      error: null,
    };
    const metadata: ImageApprovalMetadata = {
      kind: 'image',
      originalPrompt: input.prompt,
      refinedPrompt: promptRefinement.refinedPrompt,
      baseImageUrl: input.source.fileUrl,
      format: input.format,
      width: original.width,
      height: original.height,
      fileSize: original.fileSize,
      mime: original.mime,
      upscaled: input.upscaleScale > 1,
    };
    const item: NewPendingApproval = {
      approvalId,
      workspaceId,
      createdBy: actorId,
      projectId: input.projectId,
      fileName,
      aspectRatio: previews.aspectRatio,
      original: original.file,
      watermarked: previews.watermarked,
      thumbnailPath: previews.thumbnailPath,
      reservationId,
      cost: CREDIT_COST.image,
      sourceJobId: input.jobId,
      metadata,
    };
    const approvalSearchAttributes = childSearchAttributes(workflowInfo().typedSearchAttributes, {
      workspaceId,
      actorId,
      kind: 'approval',
      itemId: approvalId,
      projectId: input.projectId,
    });

    /** What the run answers with, once its pending item exists (the record's id added when it is known). */
    const resultOf = (approval: CreatedPendingApproval): Omit<ImageEditResult, 'editId'> => ({
      jobId: input.jobId,
      promptRefinement,
      generatedImage: { width: generated.width, height: generated.height, mime: generated.mime, model: generated.model, description: generated.description },
      upscaledImage: { width: original.width, height: original.height, mime: original.mime, model: original.model, scale: input.upscaleScale, fileSize: original.fileSize },
      savedImage: {
        status: 'pending_approval',
        approvalId,
        approvalWorkflowId: approval.workflowId,
        fractionalCostCharged: 0,
        fullCost: CREDIT_COST.image,
        approvalDeadline: approval.approvalDeadline,
        fileName,
        aspectRatio: previews.aspectRatio,
        watermarked: previews.watermarked,
      },
    });

    let editId: string;
    let approval: CreatedPendingApproval;
    if (statusRow && patched(IMAGE_EDIT_SUBMIT_FOR_APPROVAL)) {
      // the pending item first (its step also starts its approval workflow), then the row closes with the result the
      // status call answers with. Set first: a step that failed may still have stored the item.
      approvalCreated = true;
      await step(94, 'Sending for approval');
      approval = await db.submitForApproval({ ...item, approvalWorkflow: { taskQueue: input.queues.approvals, searchAttributes: approvalSearchAttributes } });
      ({ editId } = await db.recordImageEdit({ ...record, result: resultOf(approval), message: IMAGE_EDIT_MESSAGES.sentForApproval }));
    } else if (patched(IMAGE_EDIT_SUBMIT_FOR_APPROVAL)) {
      // the record and the pending item side by side; the step that stores the item also starts its approval
      // workflow. Set first: a step that failed may still have stored the item, and expiring an absent one is a no-op.
      approvalCreated = true;
      await step(94, 'Sending for approval');
      // both settle before either failure counts, so the compensation never runs beside a step still storing the item
      const [recorded, submitted] = await Promise.allSettled([
        db.recordImageEdit(record),
        db.submitForApproval({ ...item, approvalWorkflow: { taskQueue: input.queues.approvals, searchAttributes: approvalSearchAttributes } }),
      ]);
      if (recorded.status === 'rejected') throw recorded.reason;
      if (submitted.status === 'rejected') throw submitted.reason;
      ({ editId } = recorded.value);
      approval = submitted.value;
    } else {
      ({ editId } = await db.recordImageEdit(record));
      await step(94, 'Sending for approval');
      approval = await db.createPendingApproval(item);
      approvalCreated = true;
      await startChild(approvalWorkflow, {
        workflowId: approvalWorkflowId(approvalId),
        taskQueue: input.queues.approvals,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: approvalSearchAttributes,
        args: [{ approvalId, workspaceId, windowMs: approval.windowMs }],
      });
    }

    await Promise.all(progressWrites);
    const ended = resultOf(approval);
    const result: ImageEditResult = {
      jobId: ended.jobId,
      editId,
      promptRefinement: ended.promptRefinement,
      generatedImage: ended.generatedImage,
      upscaledImage: ended.upscaledImage,
      savedImage: ended.savedImage,
    };
    state.status = 'completed';
    state.progress = 100;
    state.message = IMAGE_EDIT_MESSAGES.sentForApproval;
    state.result = result;
    return result;
  } catch (err) {
    const failure = userFacingFailure(err);
    state.status = 'failed';
    state.message = failure.message;
    state.error = failure.message;
    state.errorCode = failure.type ?? null;
    if (statusRow) {
      // a cancelled run too: its clean-up and its row's close must run (a cancelled scope would refuse them)
      const cancelled = isCancellation(err);
      await CancellationScope.nonCancellable(async () => {
        await Promise.all(progressWrites);
        if (approvalCreated) await compensations.expirePendingItem({ approvalId });
        if (reservationId) {
          await compensations.releaseImageEditCredits({ reservationId, actorId });
          await compensations.discardImageEditFiles({ approvalId });
        }
        // the row says how it ended, a refusal before the reservation included (the status call answers from it); its
        // own failure (say, the project was deleted, taking the row with it) must not hide the first
        await records
          .recordImageEdit({
            ...rowOf,
            status: cancelled ? 'cancelled' : 'failed',
            editedImage: null,
            editData: { jobId: input.jobId, approvalId, errorCode: failure.type ?? null },
            error: failure.message,
            errorCode: failure.type ?? null,
            message: failure.message,
            progress: state.progress,
            started: reservationId !== null,
          })
          .catch(() => undefined);
      });
      throw failure;
    }
    // compensation: the item never reached the queue, so nothing of it may stay reserved or stored
    if (approvalCreated) await compensations.expirePendingItem({ approvalId });
    if (reservationId) {
      await compensations.releaseImageEditCredits({ reservationId, actorId });
      await compensations.discardImageEditFiles({ approvalId });
      // the record of the failure is for history only: its own failure (say, the project was deleted) must not hide the first
      await records
        .recordImageEdit({
          workflowId,
          workspaceId,
          actorId,
          projectId: input.projectId,
          originalImageUrl: input.source.fileUrl,
          editPrompt: input.prompt,
          status: 'failed',
          editedImage: null,
          editData: { jobId: input.jobId, approvalId, errorCode: failure.type ?? null },
          error: failure.message,
        })
        .catch(() => undefined);
    }
    throw failure;
  }
}
