/**
 * One assembly (id `assembly-<jobId>`): admit it (1 to 5 of the user's approved clips of one orientation, the
 * project the user's own) and build its timeline, render the timeline with one ffmpeg filter graph on the media
 * queue (heartbeats, progress), store the compiled video with its thumbnail and watermarked preview, then hand it
 * to the approval queue with cost 0 ('Free'). A failure or a cancel before the hand-off removes what was made.
 *
 * The state answers the status call through `assemblyJobStateQuery`; the rendering activity reports progress
 * with `assemblyProgressSignal`.
 */
import { workspaceIdOf } from '../domain/workflowContracts/workspaceInput';
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { ASSEMBLY_ERROR_CODES, ASSEMBLY_MESSAGES, ASSEMBLY_MSG, ASSEMBLY_PROGRESS, type AssemblyResultSummary } from '../domain/assembly';
import { CREDIT_COST } from '../domain/constants';
import { approvalWorkflow } from './approval';
import { childSearchAttributes } from '../domain/searchAttributes';
import {
  assemblyAdmissionUpdate,
  assemblyJobStateQuery,
  assemblyProgressSignal,
  assemblyWorkflowId,
  type AssemblyAdmission,
  type AssemblyInput,
  type AssemblyJobState,
} from '../domain/workflowContracts/assembly';
export * from '../domain/workflowContracts/assembly';

type Activities = ReturnType<typeof createActivities>;

const { recordAssemblyJob, abandonAssemblyJob, storeCompiledVideo, createPendingApproval } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
});

// a cancel waits for it: the row it writes is then there for the clean-up
const { admitAssemblyJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

function failureOf(err: unknown): ApplicationFailure | null {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : null;
}

function refusalStatus(failure: ApplicationFailure | null, fallback: number): number {
  const first: unknown = failure?.details?.[0];
  const status = typeof first === 'object' && first !== null ? (first as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : fallback;
}

export async function assemblyWorkflow(input: AssemblyInput): Promise<AssemblyResultSummary> {
  const workspaceId = workspaceIdOf(input);
  const workflowId = assemblyWorkflowId(input.jobId);
  const state: AssemblyJobState = {
    jobId: input.jobId,
    status: 'pending',
    progress: 0,
    message: ASSEMBLY_MESSAGES.validating,
    error: null,
    code: null,
    result: null,
  };
  let admission: AssemblyAdmission | null = null;

  setHandler(assemblyJobStateQuery, () => state);
  setHandler(assemblyAdmissionUpdate, async (): Promise<AssemblyAdmission> => {
    await condition(() => admission !== null);
    return admission as AssemblyAdmission;
  });
  setHandler(assemblyProgressSignal, (report) => {
    if (state.status !== 'processing' || report.progress <= state.progress || report.progress > ASSEMBLY_PROGRESS.renderEnd) return;
    state.progress = report.progress;
    state.message = report.message;
  });

  const { renderAssembly } = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });
  const { finishAssemblyMedia } = proxyActivities<Activities>({
    taskQueue: input.queues.media,
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

  const step = async (progress: number, message: string): Promise<void> => {
    state.progress = Math.max(state.progress, progress);
    state.message = message;
    await recordAssemblyJob({ jobId: input.jobId, status: state.status, progress: state.progress, message });
  };

  let handedOff = false;
  try {
    const admitted = await admitAssemblyJob({
      jobId: input.jobId,
      workflowId,
      workspaceId,
      actorId: input.actorId ?? null,
      projectId: input.projectId,
      platform: input.platform,
      clipIds: input.clipIds,
      editing: input.editing,
      transitions: input.transitions ?? [],
    });
    admission = { admitted: true };
    state.status = 'processing';
    await step(ASSEMBLY_PROGRESS.validated, ASSEMBLY_MESSAGES.rendering);

    const video = await renderAssembly({ jobId: input.jobId, workspaceId, timeline: admitted.timeline });
    await step(ASSEMBLY_PROGRESS.stored, ASSEMBLY_MESSAGES.finishing);

    const media = await finishAssemblyMedia({ jobId: input.jobId, workspaceId, videoPath: video.path });
    await step(ASSEMBLY_PROGRESS.finished, ASSEMBLY_MESSAGES.approval);

    // the video exists: from here a cancel no longer stops it, the approval queue decides about it
    const result = await CancellationScope.nonCancellable(async () => {
      const { compiledVideoId } = await storeCompiledVideo({
        jobId: input.jobId,
        workflowId,
        workspaceId,
        projectId: input.projectId,
        fileName: admitted.fileName,
        videoPath: video.path,
        thumbnailPath: media.thumbnailPath,
        sizeBytes: video.sizeBytes,
        durationSeconds: video.durationSeconds,
        clipIds: input.clipIds,
        platform: input.platform,
        aspectRatio: admitted.timeline.output.aspectRatio,
        editing: input.editing,
      });
      const approvalId = uuid4();
      const created = await createPendingApproval({
        approvalId,
        workspaceId,
        createdBy: input.actorId ?? null,
        projectId: input.projectId,
        fileName: admitted.fileName,
        aspectRatio: admitted.timeline.output.aspectRatio,
        original: { bucket: 'videos', path: video.path },
        watermarked: { bucket: 'videos', path: media.previewPath },
        thumbnailPath: media.thumbnailPath,
        reservationId: null,
        cost: CREDIT_COST.assembly,
        sourceJobId: input.jobId,
        metadata: {
          kind: 'assembly',
          compiledVideoId,
          clipIds: input.clipIds,
          platform: input.platform,
          aspectRatio: admitted.timeline.output.aspectRatio,
          durationSeconds: video.durationSeconds,
          fileSize: video.sizeBytes,
          mime: 'video/mp4',
        },
      });
      handedOff = true;
      await startChild(approvalWorkflow, {
        workflowId: created.workflowId,
        taskQueue: input.queues.approvals,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: childSearchAttributes(workflowInfo().typedSearchAttributes, { workspaceId, actorId: input.actorId, kind: 'approval', itemId: created.approvalId, projectId: input.projectId }),
        args: [{ approvalId: created.approvalId, workspaceId, windowMs: created.windowMs }],
      });
      const summary: AssemblyResultSummary = {
        approvalId: created.approvalId,
        approvalWorkflowId: created.workflowId,
        compiledVideoId,
        fileName: admitted.fileName,
        durationSeconds: video.durationSeconds,
        fileSize: video.sizeBytes,
        width: video.width,
        height: video.height,
        platform: input.platform,
        aspectRatio: admitted.timeline.output.aspectRatio,
      };
      await recordAssemblyJob({ jobId: input.jobId, status: 'completed', progress: ASSEMBLY_PROGRESS.completed, message: ASSEMBLY_MESSAGES.completed, result: summary });
      return summary;
    });
    state.status = 'completed';
    state.progress = ASSEMBLY_PROGRESS.completed;
    state.message = ASSEMBLY_MESSAGES.completed;
    state.result = result;
    return result;
  } catch (err) {
    const cancelled = isCancellation(err);
    const failure = failureOf(err);
    const refused = admission === null && !cancelled && failure !== null && failure.nonRetryable;
    const error = refused && failure ? failure.message : cancelled ? ASSEMBLY_MESSAGES.cancelled : ASSEMBLY_MESSAGES.failed;
    const code = refused && failure ? (failure.type ?? ASSEMBLY_ERROR_CODES.renderFailed) : cancelled ? 'CANCELLED' : ASSEMBLY_ERROR_CODES.renderFailed;
    if (admission === null) {
      admission = refused ? { admitted: false, error, code, status: refusalStatus(failure, 400) } : { admitted: false, error: ASSEMBLY_MSG.failedToStart, code: ASSEMBLY_ERROR_CODES.startFailed, status: 503 };
    }
    await CancellationScope.nonCancellable(async () => {
      // a refusal wrote nothing; anything later may have a row and files to undo
      if (!refused && !handedOff) {
        await abandonAssemblyJob({ jobId: input.jobId, workspaceId, status: cancelled ? 'cancelled' : 'failed', error: cancelled ? null : error, message: error });
      }
      state.status = cancelled ? 'cancelled' : 'failed';
      state.message = error;
      state.error = cancelled ? null : error;
      state.code = code;
      await condition(allHandlersFinished);
    });
    if (cancelled) throw err;
    const detail = failure?.message ?? (err instanceof Error ? err.message : String(err));
    throw ApplicationFailure.create({ type: code, message: refused ? error : `${error} (${detail})`, nonRetryable: true });
  }
}
