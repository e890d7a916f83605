/**
 * One clip generation job (id `clip-<jobId>`): admit it (limits, single clip, cooldown) and reserve 4 credits,
 * prepare the source for the aspect and submit the provider job, wait for it with heartbeats, store the clip
 * with its thumbnail and watermarked preview, then hand it to the approval queue (approval workflow as an
 * abandoned child). A failure or a cancel before the hand-off releases the reservation.
 *
 * The state (status, progress, message, error, result) answers the status call through `clipJobStateQuery`;
 * a hosted render submitted with a callback waits for `clipProviderCallbackSignal` (the API sends it once the provider's
 * callback is verified) and looks at the provider only every few minutes, for a lost callback; one without a callback is
 * followed by a timer between one-look activities; a local render's waiting activity reports its progress with
 * `clipProgressSignal`. The provider's job id is kept in
 * the state, so a retried wait resumes the same job instead of paying for a second one.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { CLIP_ERROR_CODES, CLIP_MESSAGES, CLIP_PROGRESS, CLIP_STEP_RETRY, clipFileName, type ClipResultSummary } from '../domain/clipGeneration';
import { CREDIT_COST } from '../domain/constants';
import { MSG } from '../domain/messages';
import { approvalWorkflow } from './approval';
import { childSearchAttributes } from '../domain/searchAttributes';
import {
  CLIP_FEWER_STEPS_PATCH,
  CLIP_PROVIDER_CALLBACK_PATCH,
  type ClipAdmission,
  type ClipGenerationInput,
  type ClipJobState,
  clipAdmissionUpdate,
  clipJobStateQuery,
  clipProgressSignal,
  clipProviderCallbackSignal,
  clipWorkflowId,
} from '../domain/workflowContracts/clipGeneration';
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
export * from '../domain/workflowContracts/clipGeneration';

type Activities = ReturnType<typeof createActivities>;

const { recordClipJob, abandonClipJob, createPendingApproval } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
});

/**
 * The job row's steps as local activities: run by the worker that runs the workflow code and recorded as markers, so a
 * step costs no round trip through the server and no workflow task of its own (the retry is the same).
 */
const { recordClipJob: recordClipJobLocally, submitForApproval: submitForApprovalLocally } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
});

/** Version marker: runs started before it recorded the row's steps as regular activities, and replay along that path. */
export const CLIP_LOCAL_RECORDS_PATCH = 'clip-local-records';

// a cancel waits for these to finish: what they wrote (a reservation, a paid provider job) is then on the job row
// for the clean-up to undo, instead of landing after it
const { admitClipJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

// submit and finish outlast an open database breaker (domain/clipGeneration.ts CLIP_STEP_RETRY)
const STEP_RETRY = {
  initialInterval: CLIP_STEP_RETRY.initialIntervalMs,
  backoffCoefficient: CLIP_STEP_RETRY.backoffCoefficient,
  maximumInterval: CLIP_STEP_RETRY.maximumIntervalMs,
  maximumAttempts: CLIP_STEP_RETRY.maximumAttempts,
};

const { submitClipVideo } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: STEP_RETRY,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

function failureOf(err: unknown): ApplicationFailure | null {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : null;
}

/** The HTTP status an activity recorded with a refusal (details[0].status), else `fallback`. */
function refusalStatus(failure: ApplicationFailure | null, fallback: number): number {
  const first: unknown = failure?.details?.[0];
  const status = typeof first === 'object' && first !== null ? (first as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : fallback;
}

function describe(err: unknown): string {
  const failure = failureOf(err);
  if (failure) return failure.message;
  return err instanceof Error ? err.message : String(err);
}

export async function clipGenerationWorkflow(input: ClipGenerationInput): Promise<ClipResultSummary> {
  const workspaceId = workspaceIdOf(input);
  const workflowId = clipWorkflowId(input.jobId);
  // who started it (a run from before workspaces names none: its account was its starter's personal workspace)
  const actorId = input.actorId || workspaceId;
  const state: ClipJobState = {
    jobId: input.jobId,
    status: 'pending',
    progress: 0,
    message: CLIP_MESSAGES.checking,
    error: null,
    code: null,
    warning: null,
    result: null,
    providerJobId: null,
  };
  let admission: ClipAdmission | null = null;
  // the API verified the provider's callback for this job's request: the render has ended
  let providerCalledBack = false;

  setHandler(clipJobStateQuery, () => state);
  setHandler(clipAdmissionUpdate, async (): Promise<ClipAdmission> => {
    await condition(() => admission !== null);
    return admission as ClipAdmission;
  });
  setHandler(clipProviderCallbackSignal, () => {
    providerCalledBack = true;
  });
  setHandler(clipProgressSignal, (report) => {
    // render progress only moves forward, and only while the render step is the current one
    if (state.status !== 'processing' || report.progress <= state.progress || report.progress > CLIP_PROGRESS.renderEnd) return;
    state.progress = report.progress;
    state.message = report.message;
  });

  // one look at a hosted provider's job between two timers: a status call, so short, and not on the media queue's
  // slots, which bound the ffmpeg work
  const { checkClipVideo } = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 10 },
  });

  // the render and the ffmpeg work: long, heartbeating, on the media queue
  const { awaitClipVideo } = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
  });
  const { finishClipMedia } = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: STEP_RETRY,
  });
  // a hosted clip's fetch, store, preview and thumbnail in one (the wait's budget and the finish's retry)
  const { collectClipVideo } = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '40 minutes',
    heartbeatTimeout: '1 minute',
    retry: STEP_RETRY,
  });

  const record = patched(CLIP_LOCAL_RECORDS_PATCH) ? recordClipJobLocally : recordClipJob;
  const fewerSteps = patched(CLIP_FEWER_STEPS_PATCH);
  const step = async (progress: number, message: string): Promise<void> => {
    state.progress = Math.max(state.progress, progress);
    state.message = message;
    await record({ jobId: input.jobId, status: state.status, progress: state.progress, message });
  };
  /** The state moves on; the row was moved by the activity that did the step. */
  const stepDone = (progress: number, message: string): void => {
    state.progress = Math.max(state.progress, progress);
    state.message = message;
  };

  let handedOff = false;
  try {
    const admitted = await admitClipJob({
      jobId: input.jobId,
      workflowId,
      workspaceId,
      actorId,
      projectId: input.projectId,
      sourceKind: input.source.kind,
      sourceId: input.source.id,
      options: input.options,
    });
    admission = { admitted: true, warning: admitted.warning, code: admitted.code };
    state.warning = admitted.warning;
    state.status = 'processing';
    if (fewerSteps) stepDone(CLIP_PROGRESS.preparing, CLIP_MESSAGES.preparing);
    else await step(CLIP_PROGRESS.preparing, CLIP_MESSAGES.preparing);

    const { providerJobId, polling } = await submitClipVideo({
      jobId: input.jobId,
      workspaceId,
      source: input.source,
      options: input.options,
      ...(fewerSteps ? { recordSteps: true } : {}),
    });
    state.providerJobId = providerJobId;
    if (fewerSteps) stepDone(CLIP_PROGRESS.submitted, CLIP_MESSAGES.rendering);
    else await step(CLIP_PROGRESS.submitted, CLIP_MESSAGES.rendering);

    if (polling) {
      // a hosted render is waiting, not work: a timer between short looks, so a waiting clip holds no activity slot
      // and a worker carries as many as its workflow cache holds. The wait below then finds the job done and fetches
      // it; past the longest wait it is the one that gives up. (A run from before this had no `polling` in the
      // submit's result and replays into the wait as it did.)
      const giveUpAt = Date.now() + polling.maxWaitMs;
      const fallbackMs = polling.callbackFallbackMs;
      const lookAt = async (): Promise<boolean> => {
        const look = await checkClipVideo({ jobId: input.jobId, providerJobId });
        if (state.status === 'processing' && look.progress > state.progress && look.progress <= CLIP_PROGRESS.renderEnd) {
          state.progress = look.progress;
          state.message = look.message;
        }
        return look.done;
      };
      if (fallbackMs !== undefined && patched(CLIP_PROVIDER_CALLBACK_PATCH)) {
        // submitted with a callback: the signal ends the wait; a look only every fallbackMs, for a callback that was lost
        // (a few history events per clip instead of a few per poll interval)
        for (;;) {
          const calledBack = await condition(() => providerCalledBack, Math.min(fallbackMs, Math.max(1, giveUpAt - Date.now())));
          if (calledBack || Date.now() >= giveUpAt) break;
          if (await lookAt()) break;
        }
      } else {
        for (;;) {
          if ((await lookAt()) || Date.now() >= giveUpAt) break;
          await sleep(Math.min(polling.pollIntervalMs, Math.max(1, giveUpAt - Date.now())));
        }
      }
    }

    let video: Awaited<ReturnType<typeof awaitClipVideo>>;
    let media: Awaited<ReturnType<typeof finishClipMedia>>;
    if (fewerSteps && polling) {
      // a hosted clip: fetched, stored and finished in one media activity, which moves the row along
      ({ video, media } = await collectClipVideo({ jobId: input.jobId, workspaceId, providerJobId }));
      stepDone(CLIP_PROGRESS.finished, CLIP_MESSAGES.approval);
    } else {
      video = await awaitClipVideo({ jobId: input.jobId, workspaceId, providerJobId });
      await step(CLIP_PROGRESS.stored, CLIP_MESSAGES.finishing);

      media = await finishClipMedia({
        jobId: input.jobId,
        workspaceId,
        clipPath: video.path,
        width: video.width,
        height: video.height,
        durationSeconds: video.durationSeconds,
      });
      await step(CLIP_PROGRESS.finished, CLIP_MESSAGES.approval);
    }

    // the clip exists: from here a cancel no longer stops it, the approval queue decides about it
    const result = await CancellationScope.nonCancellable(async () => {
      const approvalId = uuid4();
      const fileName = clipFileName(input.source.fileName, input.options.effect, input.options.aspectRatio);
      const item = {
        approvalId,
        workspaceId,
        createdBy: actorId,
        projectId: input.projectId,
        fileName,
        aspectRatio: input.options.aspectRatio,
        original: { bucket: 'clips' as const, path: video.path },
        watermarked: { bucket: 'clips' as const, path: media.previewPath },
        thumbnailPath: media.thumbnailPath,
        reservationId: admitted.reservationId,
        cost: CREDIT_COST.clip,
        sourceJobId: input.jobId,
        metadata: {
          kind: 'clip' as const,
          renderId: input.source.kind === 'render' ? input.source.id : null,
          imageId: input.source.kind === 'image' ? input.source.id : null,
          effect: input.options.effect,
          platform: input.options.platform,
          aspectRatio: input.options.aspectRatio,
          durationSeconds: video.durationSeconds,
          fileSize: video.sizeBytes,
          mime: 'video/mp4',
          promptUsed: input.options.prompt,
        },
      };
      const approvalSearchAttributes = childSearchAttributes(workflowInfo().typedSearchAttributes, {
        workspaceId,
        actorId,
        kind: 'approval',
        itemId: approvalId,
        projectId: input.projectId,
      });
      let created: { approvalId: string; workflowId: string };
      if (fewerSteps) {
        // the item stored and its approval workflow started by one local step (no activity task, no child to wait for)
        created = await submitForApprovalLocally({ ...item, approvalWorkflow: { taskQueue: input.queues.approvals, searchAttributes: approvalSearchAttributes } });
        handedOff = true;
      } else {
        const pending = await createPendingApproval(item);
        created = pending;
        handedOff = true;
        await startChild(approvalWorkflow, {
          workflowId: pending.workflowId,
          taskQueue: input.queues.approvals,
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: approvalSearchAttributes,
          args: [{ approvalId: pending.approvalId, workspaceId, windowMs: pending.windowMs }],
        });
      }
      const summary: ClipResultSummary = {
        approvalId: created.approvalId,
        approvalWorkflowId: created.workflowId,
        fileName,
        durationSeconds: video.durationSeconds,
        fileSize: video.sizeBytes,
        width: video.width,
        height: video.height,
        aspectRatio: input.options.aspectRatio,
        platform: input.options.platform,
        effect: input.options.effect,
      };
      await record({ jobId: input.jobId, status: 'completed', progress: CLIP_PROGRESS.completed, message: CLIP_MESSAGES.completed, result: summary });
      return summary;
    });
    state.status = 'completed';
    state.progress = CLIP_PROGRESS.completed;
    state.message = CLIP_MESSAGES.completed;
    state.result = result;
    return result;
  } catch (err) {
    const cancelled = isCancellation(err);
    const failure = failureOf(err);
    const refused = admission === null && !cancelled && failure !== null && failure.nonRetryable;
    let error: string = cancelled ? CLIP_MESSAGES.cancelled : CLIP_MESSAGES.failed;
    let code: string = cancelled ? CLIP_ERROR_CODES.cancelled : CLIP_ERROR_CODES.generationFailed;
    if (refused && failure) {
      error = failure.message;
      code = failure.type ?? CLIP_ERROR_CODES.generationFailed;
    } else if (failure?.type === CLIP_ERROR_CODES.sourceMissing) {
      error = `${CLIP_MESSAGES.sourceMissing} ${CLIP_MESSAGES.failed}`;
      code = CLIP_ERROR_CODES.sourceMissing;
    }
    if (admission === null) {
      admission = refused
        ? { admitted: false, error, code, status: refusalStatus(failure, 400) }
        : { admitted: false, error: MSG.failedToStartVideo, code, status: 503 };
    }

    await CancellationScope.nonCancellable(async () => {
      // a refusal wrote nothing; anything later may have a row, a reservation, a provider job and files to undo
      if (!refused && !handedOff) {
        await abandonClipJob({
          jobId: input.jobId,
          workflowId,
          workspaceId,
          actorId,
          providerJobId: state.providerJobId,
          status: cancelled ? 'cancelled' : 'failed',
          error: cancelled ? null : error,
          message: error,
        });
      }
      state.status = cancelled ? 'cancelled' : 'failed';
      state.message = error;
      state.error = cancelled ? null : error;
      state.code = code;
      await condition(allHandlersFinished);
    });
    if (cancelled) throw err;
    throw ApplicationFailure.create({ type: code, message: refused ? error : `${error} (${describe(err)})`, nonRetryable: true });
  }
}
