/**
 * One assembly (id `assembly-<jobId>`): admit it (1 to 5 of the user's approved clips of one orientation, the
 * project the user's own) and build its timeline in each format asked for (the platform's own by default), render
 * every format in one activity on the media queue (an ffmpeg run per format, started together; heartbeats,
 * progress), store each
 * compiled video with its thumbnail and watermarked preview, then hand each to the approval queue as its own item
 * with cost 0 ('Free'). A failure or a cancel before the first hand-off removes what was made.
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
  patched,
  proxyActivities,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  ASSEMBLY_ERROR_CODES,
  ASSEMBLY_FORMAT_SPECS,
  ASSEMBLY_MESSAGES,
  ASSEMBLY_MSG,
  ASSEMBLY_PROGRESS,
  platformFormat,
  type AssemblyFormatResult,
  type AssemblyResultSummary,
} from '../domain/assembly';
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

/**
 * Every format from one edit (issue 44 item 4): the formats render in one activity (renderAssemblyFormats) and each
 * goes to Approvals. Histories from before it rendered one format with renderAssembly.
 */
export const ASSEMBLY_FORMATS_PATCH = 'assembly-formats';

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

  const { renderAssembly, renderAssemblyFormats } = proxyActivities<Activities>({
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

  // where a history from before formats has its first command, so it replays as it ran
  const formatsPatch = patched(ASSEMBLY_FORMATS_PATCH);
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
      ...(formatsPatch ? { formats: input.formats && input.formats.length > 0 ? input.formats : [platformFormat(input.platform)] } : {}),
    });
    admission = { admitted: true };
    state.status = 'processing';
    await step(ASSEMBLY_PROGRESS.validated, ASSEMBLY_MESSAGES.rendering);

    const editions = admitted.editions ?? [{ format: admitted.timeline.output.aspectRatio, timeline: admitted.timeline, fileName: admitted.fileName }];
    // one format renders as before formats (renderAssembly); several in one activity, side by side
    const videos = formatsPatch && editions.length > 1
      ? await renderAssemblyFormats({ jobId: input.jobId, workspaceId, editions: editions.map(({ format, timeline }) => ({ format, timeline })) })
      : [await renderAssembly({ jobId: input.jobId, workspaceId, timeline: admitted.timeline })];
    await step(ASSEMBLY_PROGRESS.stored, ASSEMBLY_MESSAGES.finishing);

    const medias: Array<{ thumbnailPath: string; previewPath: string }> = [];
    for (const video of videos) medias.push(await finishAssemblyMedia({ jobId: input.jobId, workspaceId, videoPath: video.path }));
    await step(ASSEMBLY_PROGRESS.finished, ASSEMBLY_MESSAGES.approval);

    // the videos exist: from here a cancel no longer stops them, the approval queue decides about each
    const result = await CancellationScope.nonCancellable(async () => {
      // every format's row first, then every approval item: a failure before the first hand-off still undoes them all
      const compiledVideoIds: string[] = [];
      for (const [i, edition] of editions.entries()) {
        const video = videos[i];
        const { compiledVideoId } = await storeCompiledVideo({
          jobId: input.jobId,
          // the row of a further format is keyed on the workflow and its format
          workflowId: i === 0 ? workflowId : `${workflowId}/${ASSEMBLY_FORMAT_SPECS[edition.format].slug}`,
          workspaceId,
          projectId: input.projectId,
          fileName: edition.fileName,
          videoPath: video.path,
          thumbnailPath: medias[i].thumbnailPath,
          sizeBytes: video.sizeBytes,
          durationSeconds: video.durationSeconds,
          clipIds: input.clipIds,
          platform: input.platform,
          aspectRatio: edition.timeline.output.aspectRatio,
          editing: input.editing,
        });
        compiledVideoIds.push(compiledVideoId);
      }
      const summaries: AssemblyFormatResult[] = [];
      for (const [i, edition] of editions.entries()) {
        const video = videos[i];
        const media = medias[i];
        const aspectRatio = edition.timeline.output.aspectRatio;
        const approvalId = uuid4();
        const created = await createPendingApproval({
          approvalId,
          workspaceId,
          createdBy: input.actorId ?? null,
          projectId: input.projectId,
          fileName: edition.fileName,
          aspectRatio,
          original: { bucket: 'videos', path: video.path },
          watermarked: { bucket: 'videos', path: media.previewPath },
          thumbnailPath: media.thumbnailPath,
          reservationId: null,
          cost: CREDIT_COST.assembly,
          sourceJobId: input.jobId,
          metadata: {
            kind: 'assembly',
            compiledVideoId: compiledVideoIds[i],
            clipIds: input.clipIds,
            platform: input.platform,
            aspectRatio,
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
        summaries.push({
          approvalId: created.approvalId,
          approvalWorkflowId: created.workflowId,
          compiledVideoId: compiledVideoIds[i],
          fileName: edition.fileName,
          durationSeconds: video.durationSeconds,
          fileSize: video.sizeBytes,
          width: video.width,
          height: video.height,
          platform: input.platform,
          aspectRatio,
        });
      }
      const summary: AssemblyResultSummary = { ...summaries[0], ...(summaries.length > 1 ? { formats: summaries } : {}) };
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
