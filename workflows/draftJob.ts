/**
 * One Enhance Renders job (id `draft-job-<jobId>`): one model run on one draft image. The model runs on the media
 * queue through the provider interface; the new version is pushed on top of the image's history (8 kept, the files of
 * older ones removed) and the job's usage recorded (free during the Beta). A failure marks the job failed and removes
 * whatever the run stored; the image keeps its current version.
 */
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { DRAFT_JOB_ERRORS, ENHANCE_MSG, type DraftJobResult, type DraftJobState, type DraftJobWorkflowInput } from '../domain/enhanceRenders';
import { draftJobStateQuery } from '../domain/workflowContracts/draftJob';
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
export * from '../domain/workflowContracts/draftJob';

type Activities = ReturnType<typeof createActivities>;

const records = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

// marking the failure and removing its files must happen eventually: retried until it does
const compensations = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * The words the user sees (the card keeps them until dismissed): an unreadable source, a model's refusal of the input
 * (it says why), a model that ran out of time or whose breaker is open, a local model's own failure (it says why),
 * else a plain failure.
 */
function userFacingFailure(err: unknown): ApplicationFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type === DRAFT_JOB_ERRORS.imageGone) {
    return ApplicationFailure.create({ type: cause.type, message: cause.message, nonRetryable: true });
  }
  if (cause instanceof ApplicationFailure && cause.type === DRAFT_JOB_ERRORS.invalidSource) {
    return ApplicationFailure.create({ type: cause.type, message: ENHANCE_MSG.invalidSourceImage, nonRetryable: true });
  }
  if (cause instanceof ApplicationFailure && (cause.type === 'PROVIDER_INPUT' || cause.type === 'PROVIDER_VALIDATION')) {
    return ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.failed, message: `${ENHANCE_MSG.jobFailed} (${cause.message})`.slice(0, 500), nonRetryable: true });
  }
  if (cause instanceof ApplicationFailure && cause.type === 'CircuitBreakerError') {
    const message = /timeout after/.test(cause.message) ? ENHANCE_MSG.modelTimedOut : ENHANCE_MSG.modelPaused;
    return ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.failed, message, nonRetryable: true });
  }
  if (cause instanceof ApplicationFailure && cause.type === 'PROVIDER_MEDIA') {
    return ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.failed, message: `${ENHANCE_MSG.jobFailed} (${cause.message})`.slice(0, 500), nonRetryable: true });
  }
  return ApplicationFailure.create({ type: DRAFT_JOB_ERRORS.failed, message: ENHANCE_MSG.jobFailed, nonRetryable: true });
}

export async function draftJobWorkflow(input: DraftJobWorkflowInput): Promise<DraftJobResult> {
  const workspaceId = workspaceIdOf(input);
  const state: DraftJobState = { status: 'pending', progress: 0, message: 'Queued', error: null, result: null };
  setHandler(draftJobStateQuery, () => state);
  const step = (progress: number, message: string): void => {
    state.status = 'processing';
    state.progress = progress;
    state.message = message;
  };

  const media = proxyActivities<Activities>({
    taskQueue: input.mediaQueue,
    // a creative upscale takes about a minute on the hosted model; the heartbeat notices a dead worker long before
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 3 },
    // on a cancel, wait until the run has stopped, so the clean-up after it finds every file it wrote
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });

  try {
    step(5, 'Starting');
    await records.markDraftJobProcessing({ jobId: input.jobId });
    step(15, 'Processing…');
    const output = await media.runDraftModel(input);
    step(90, 'Saving the new version');
    const result = await records.saveDraftVersion({ job: input, output });
    state.status = 'completed';
    state.progress = 100;
    state.message = 'Done';
    state.result = result;
    return result;
  } catch (err) {
    const failure = userFacingFailure(err);
    state.status = 'failed';
    state.message = failure.message;
    state.error = failure.message;
    // also when cancelled (the image or its draft was removed): the clean-up must still run
    await CancellationScope.nonCancellable(() =>
      compensations.failDraftJob({ jobId: input.jobId, workspaceId, draftId: input.draftId, imageId: input.imageId, error: failure.message }),
    );
    if (isCancellation(err)) throw err;
    throw failure;
  }
}
