/**
 * Activities of the assembly workflow (workflows/assembly.ts). Each is safe to run again: admission is keyed on
 * the job id, files have fixed paths under videos/<workspaceId>/<jobId>/ and are never rewritten, the compiled video
 * row is keyed on the workflow id.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  ASSEMBLY_ACTIVE_STATUSES,
  ASSEMBLY_ERROR_CODES,
  ASSEMBLY_MESSAGES,
  ASSEMBLY_MSG,
  ASSEMBLY_PROGRESS,
  ASSEMBLY_FORMAT_SPECS,
  assemblyFileName,
  assemblyFormatFileName,
  assemblyRenderProgress,
  platformFormat,
  normalizeEditingConfig,
  type AssemblyFormat,
  type AssemblyJobStatus,
  type AssemblyPlatform,
  type AssemblyResultSummary,
  type EditingConfig,
} from '../domain/assembly';
import { brandPartOf, videoTrackOf, type AssemblyEdit, type JunctionOverride } from '../domain/assemblyTimeline';
import { DomainError } from '../domain/errors';
import type { RealtimeEvent } from '../domain/events';
import { assemblyProgressSignal } from '../domain/workflowContracts/assembly';
import { probeVideo } from '../providers/media/ffmpeg';
import { resetChatAfterAssembly } from '../services/generation/aestheticChat';
import { soundtrackSourceFor } from '../services/content/musicTracks';
import { brandSourceFor } from '../services/workspaces/brandKit';
import { assertAssemblyMayStart, assertPlatformFits, loadSelectedClips, timelineFor } from '../services/generation/assemblyClips';
import { publishEvent, publishEventQuietly } from '../services/platform/events';
import { recordJobEvent } from '../services/integrations/webhookEvents';
import { ObjectExistsError, fileUrl, parseFileUrl, type Bucket, type LocalFile } from '../storage';
import { renderEdit } from './assemblyMedia';
import { videoThumbnail } from './clipMedia';
import type { ActivityDeps } from './deps';
import { reportingRefusals } from './failures';
import { currentTraceId } from '../config/tracing';

const VIDEOS: Bucket = 'videos';
export const ASSEMBLY_THUMBNAIL_WIDTH = 480;

export type AssemblyActivityDeps = Pick<ActivityDeps, 'knex' | 'config' | 'logger' | 'storage'>;

export interface AssemblyActivityOptions {
  /** How often the long activities heartbeat on their own, besides every ffmpeg progress line (ms). */
  heartbeatIntervalMs?: number;
  /** Least time between two progress reports to the workflow and the job row (ms). */
  progressIntervalMs?: number;
}

export interface AdmitAssemblyInput {
  jobId: string;
  workflowId: string;
  /** The account (workspace) the video belongs to. */
  workspaceId: string;
  /** The member who started it; absent (or null) in histories from before workspaces. */
  actorId?: string | null;
  projectId: string;
  platform: AssemblyPlatform;
  clipIds: string[];
  editing: EditingConfig;
  transitions: JunctionOverride[];
  /** The formats to render (issue 44 item 4); absent: the platform's own, as before formats. */
  formats?: AssemblyFormat[];
}

/** One format of the edit: its timeline (its size and brand layout) and the name its approval item gets. */
export interface AssemblyEdition {
  format: AssemblyFormat;
  timeline: AssemblyEdit;
  fileName: string;
}

export interface AdmittedAssembly {
  /** The first format's (the only one before formats). */
  timeline: AssemblyEdit;
  fileName: string;
  /** Every format, the first one first; absent in results recorded before formats. */
  editions?: AssemblyEdition[];
}

export interface StoredAssemblyVideo {
  path: string;
  sizeBytes: number;
  durationSeconds: number;
  width: number;
  height: number;
}

export interface StoreCompiledVideoInput {
  jobId: string;
  workflowId: string;
  workspaceId: string;
  projectId: string;
  fileName: string;
  videoPath: string;
  thumbnailPath: string;
  sizeBytes: number;
  durationSeconds: number;
  clipIds: string[];
  platform: AssemblyPlatform;
  aspectRatio: string;
  editing: EditingConfig;
}

export function assemblyFolder(workspaceId: string, jobId: string): string {
  return `${workspaceId}/${jobId}`;
}

/**
 * Where one format's files go: the first format's in the job's folder (where a one-format assembly's always were),
 * each further format's in a folder of its own named after it (…/<jobId>/1x1/video.mp4).
 */
export function editionFolder(workspaceId: string, jobId: string, index: number, format: AssemblyFormat): string {
  return index === 0 ? assemblyFolder(workspaceId, jobId) : `${assemblyFolder(workspaceId, jobId)}/${ASSEMBLY_FORMAT_SPECS[format].slug}`;
}

/** The names of the formats' approval items: as before formats for the platform's own alone, else told apart by format. */
function editionFileNames(projectName: string, platform: AssemblyPlatform, formats: readonly AssemblyFormat[], clipCount: number): string[] {
  if (formats.length === 1 && formats[0] === platformFormat(platform)) return [assemblyFileName(projectName, platform, clipCount)];
  return formats.map((format) => assemblyFormatFileName(projectName, format, clipCount));
}

const JOB_EVENT_COLUMNS = ['id', 'workspace_id', 'project_id', 'status', 'progress'];
interface JobEventRow {
  id: string;
  workspace_id: string;
  project_id: string;
  status: AssemblyJobStatus;
  progress: number;
}

function assemblyJobEvent(row: JobEventRow): RealtimeEvent {
  return { kind: 'job', job: 'assembly', jobId: row.id, status: row.status, progress: row.progress, projectId: row.project_id };
}

const PG_FOREIGN_KEY_VIOLATION = '23503';

export function createAssemblyActivities(deps: AssemblyActivityDeps, options: AssemblyActivityOptions = {}) {
  const { knex, storage, logger } = deps;
  const preset = deps.config.videoPreset;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
  const progressIntervalMs = options.progressIntervalMs ?? 1000;

  const exists = async (objectPath: string): Promise<boolean> => (await storage.objects.stat(VIDEOS, objectPath)) !== null;

  /** A cancel does not wait for the long activities: they look before storing anything, so nothing lands after the clean-up. */
  const assertStillActive = async (jobId: string): Promise<void> => {
    const row = (await knex('assembly_jobs').where({ id: jobId }).first('status')) as { status: AssemblyJobStatus } | undefined;
    if (!row || !ASSEMBLY_ACTIVE_STATUSES.includes(row.status)) throw new CancelledFailure(`Assembly job ${jobId} is ${row?.status ?? 'gone'}`);
  };

  const storeOnce = async (objectPath: string, file: string): Promise<number> => {
    try {
      return (await storage.objects.put(VIDEOS, objectPath, createReadStream(file))).size;
    } catch (error) {
      if (!(error instanceof ObjectExistsError)) throw error;
      const stat = await storage.objects.stat(VIDEOS, objectPath);
      if (!stat) throw error;
      return stat.size;
    }
  };

  const probeStored = async (objectPath: string): Promise<StoredAssemblyVideo> => {
    const local = await storage.objects.localFile(VIDEOS, objectPath);
    try {
      const probe = await probeVideo(local.path);
      const stat = await storage.objects.stat(VIDEOS, objectPath);
      return { path: objectPath, sizeBytes: stat?.size ?? 0, durationSeconds: Math.round(probe.durationSeconds * 1000) / 1000, width: probe.width, height: probe.height };
    } finally {
      await local.release();
    }
  };

  const moveJob = async (jobId: string, patch: Record<string, unknown>, end: { approvalId?: string | null; error?: string | null } = {}): Promise<void> => {
    await knex.transaction(async (trx) => {
      const rows: Array<JobEventRow & { created_by: string | null }> = await trx('assembly_jobs')
        .where({ id: jobId })
        .whereIn('status', ASSEMBLY_ACTIVE_STATUSES)
        .update({ ...patch, updated_at: trx.fn.now() })
        .returning([...JOB_EVENT_COLUMNS, 'created_by']);
      for (const row of rows) {
        // a completed assembly used up its clips: the project's chat forgets the selection and what was written for it
        if (patch.status === 'completed') await resetChatAfterAssembly(trx, row.workspace_id, row.project_id, new Date());
        await publishEvent(trx, row.workspace_id, assemblyJobEvent(row));
        if (row.status === 'completed' || row.status === 'failed' || row.status === 'cancelled') {
          await recordJobEvent(trx, {
            workspaceId: row.workspace_id,
            projectId: row.project_id,
            jobId: row.id,
            kind: 'assembly',
            status: row.status,
            startedBy: row.created_by,
            approvalId: row.status === 'completed' ? (end.approvalId ?? null) : null,
            error: end.error ?? null,
          });
        }
      }
    });
  };

  /**
   * Renders the formats of one edit (`targets`, the first one's timeline giving the clips, music and logo) into their
   * video and watermarked preview paths, one ffmpeg run per format started together, heartbeating all along and
   * reporting progress (the slowest format's). A retry
   * finds all of them stored and returns them; otherwise it renders again from the start (a file an earlier attempt
   * stored is kept).
   */
  const renderTargets = async (input: { jobId: string; workspaceId: string }, targets: ReadonlyArray<{ timeline: AssemblyEdit; videoPath: string; previewPath: string }>): Promise<StoredAssemblyVideo[]> => {
    const ctx = Context.current();
    const stored = await Promise.all(targets.map(async (t) => (await exists(t.videoPath)) && (await exists(t.previewPath))));
    if (stored.every(Boolean)) return Promise.all(targets.map((t) => probeStored(t.videoPath)));
    const timeline = targets[0].timeline;
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'assembly-'));
    const locals: LocalFile[] = [];
    let fraction = 0;
    const beat = () => ctx.heartbeat({ fraction });
    beat();
    const timer = setInterval(beat, heartbeatIntervalMs);
    const workflowId = ctx.info.workflowExecution?.workflowId ?? `assembly-${input.jobId}`;
    let sentAt = 0;
    let sentProgress = -1;
    let reporting: Promise<void> = Promise.resolve();
    const report = (progress: number): void => {
      const now = Date.now();
      if (progress <= sentProgress || now - sentAt < progressIntervalMs) return;
      sentProgress = progress;
      sentAt = now;
      reporting = reporting.then(async () => {
        await knex('assembly_jobs')
          .where({ id: input.jobId })
          .whereIn('status', ASSEMBLY_ACTIVE_STATUSES)
          .update({ progress: knex.raw('greatest(progress, ?)', [progress]), message: ASSEMBLY_MESSAGES.rendering, updated_at: knex.fn.now() })
          .returning(JOB_EVENT_COLUMNS)
          .then((rows: JobEventRow[]) => Promise.all(rows.map((row) => publishEventQuietly(knex, row.workspace_id, assemblyJobEvent(row), logger))))
          .catch((err: unknown) => logger.warn({ err, jobId: input.jobId }, 'could not record assembly progress'));
        await ctx.client.workflow
          .getHandle(workflowId)
          .signal(assemblyProgressSignal, { progress, message: ASSEMBLY_MESSAGES.rendering })
          .catch((err: unknown) => logger.warn({ err, workflowId }, 'could not report assembly progress to the workflow'));
      });
    };
    try {
      let soundtrackFile: string | undefined;
      const soundtrack = timeline.timeline.soundtrack;
      if (soundtrack) {
        const ref = parseFileUrl(soundtrack.src);
        if (!ref) throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.musicFileMissing, message: `Not a stored track: ${soundtrack.src}`, nonRetryable: true });
        try {
          const local = await storage.objects.localFile(ref.bucket, ref.path);
          locals.push(local);
          soundtrackFile = local.path;
        } catch (error) {
          throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.musicFileMissing, message: `The music track's file is missing (${(error as Error).message})`, nonRetryable: true });
        }
      }
      let logoFile: string | undefined;
      const logoSrc = brandPartOf(timeline, 'logo')?.asset.src ?? brandPartOf(timeline, 'endCard')?.asset.logoSrc ?? null;
      if (logoSrc) {
        const ref = parseFileUrl(logoSrc);
        if (!ref) throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.logoFileMissing, message: `Not a stored logo: ${logoSrc}`, nonRetryable: true });
        try {
          const local = await storage.objects.localFile(ref.bucket, ref.path);
          locals.push(local);
          logoFile = local.path;
        } catch (error) {
          throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.logoFileMissing, message: `The brand logo's file is missing (${(error as Error).message})`, nonRetryable: true });
        }
      }
      const clipFiles: string[] = [];
      for (const clip of videoTrackOf(timeline)) {
        const ref = parseFileUrl(clip.asset.src);
        if (!ref) throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.clipFileMissing, message: `Not a stored clip: ${clip.asset.src}`, nonRetryable: true });
        try {
          const local = await storage.objects.localFile(ref.bucket, ref.path);
          locals.push(local);
          clipFiles.push(local.path);
        } catch (error) {
          throw ApplicationFailure.create({ type: ASSEMBLY_ERROR_CODES.clipFileMissing, message: `A clip's file is missing (${(error as Error).message})`, nonRetryable: true });
        }
      }
      const files = targets.map((_, i) => ({ output: path.join(scratch, `video-${i}.mp4`), preview: path.join(scratch, `preview-${i}.mp4`) }));
      const onProgress = (f: number): void => {
        fraction = f;
        beat();
        report(assemblyRenderProgress(f));
      };
      const common = { preset, soundtrackFile, logoFile, signal: ctx.cancellationSignal, onProgress };
      if (targets.length === 1) {
        await renderEdit(timeline, clipFiles, files[0].output, scratch, { ...common, previewOutput: files[0].preview });
      } else {
        // one ffmpeg run per format, all at once (measured faster than one run splitting the decoded clips to every
        // format: ffmpeg 5.1 runs a filter graph on one thread); the first failure stops the others
        const stop = new AbortController();
        const abort = (): void => stop.abort();
        ctx.cancellationSignal.addEventListener('abort', abort, { once: true });
        const fractions = targets.map(() => 0);
        try {
          await Promise.all(
            targets.map(async (t, i) => {
              const own = path.join(scratch, `format-${i}`);
              await fs.mkdir(own);
              await renderEdit(t.timeline, clipFiles, files[i].output, own, {
                ...common,
                previewOutput: files[i].preview,
                signal: stop.signal,
                // the slowest format is the render's progress
                onProgress: (f) => {
                  fractions[i] = f;
                  onProgress(Math.min(...fractions));
                },
              }).catch((error: unknown) => {
                stop.abort();
                throw error;
              });
            }),
          );
        } finally {
          ctx.cancellationSignal.removeEventListener('abort', abort);
        }
      }
      await assertStillActive(input.jobId);
      for (const [i, t] of targets.entries()) {
        await storeOnce(t.videoPath, files[i].output);
        await storeOnce(t.previewPath, files[i].preview);
      }
      return await Promise.all(targets.map((t) => probeStored(t.videoPath)));
    } catch (error) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Assembly render cancelled');
      throw error;
    } finally {
      clearInterval(timer);
      await reporting;
      await Promise.all(locals.map((l) => l.release()));
      await fs.rm(scratch, { recursive: true, force: true });
    }
  };

  return {
    /**
     * Checks the assembly (the project is the user's, 1 to 5 of the user's approved clips of one orientation that
     * fits the platform), builds its timeline and records the job with it. A repeat returns the recorded timeline.
     */
    admitAssemblyJob: (input: AdmitAssemblyInput): Promise<AdmittedAssembly> =>
      reportingRefusals(async () =>
        knex.transaction(async (trx) => {
          const project = (await trx('projects').where({ id: input.projectId, workspace_id: input.workspaceId }).first('id', 'name')) as { id: string; name: string } | undefined;
          if (!project) throw new DomainError(403, ASSEMBLY_ERROR_CODES.projectPermission, ASSEMBLY_MSG.projectPermission);
          const formats = input.formats && input.formats.length > 0 ? input.formats : [platformFormat(input.platform)];
          const names = editionFileNames(project.name, input.platform, formats, input.clipIds.length);
          const fileName = names[0];
          const existing = (await trx('assembly_jobs').where({ id: input.jobId }).first('options')) as { options: { timeline?: AssemblyEdit; editions?: AssemblyEdition[] } } | undefined;
          if (existing?.options.timeline) {
            const recorded = existing.options.editions;
            return { timeline: existing.options.timeline, fileName, ...(input.formats ? { editions: recorded ?? [{ format: formats[0], timeline: existing.options.timeline, fileName }] } : {}) };
          }
          const { rows, orientation } = await loadSelectedClips(trx, input.workspaceId, input.clipIds);
          assertPlatformFits(input.platform, orientation);
          // under the profile lock, so two starts at the cap cannot both pass
          await trx('profiles').where({ id: input.workspaceId }).forUpdate().first('id');
          await assertAssemblyMayStart(trx, input.workspaceId);
          // the track the chat or the music picker chose, locked against a delete until the job row names it
          const soundtrack = await soundtrackSourceFor(trx, input.workspaceId, input.editing);
          // the workspace's kit as it is now: the edit keeps its colours, texts and logo file for the render
          const brand = await brandSourceFor(trx, input.workspaceId, { titleText: input.editing.brand?.title_text ?? null, projectName: project.name });
          const editing = normalizeEditingConfig(input.editing);
          // one edit, one timeline per format: the same clips and timing, each its size and its brand layout
          const editions: AssemblyEdition[] = formats.map((format, i) => ({ format, timeline: timelineFor(rows, input.platform, editing, input.transitions, soundtrack, brand, format), fileName: names[i] }));
          const timeline = editions[0].timeline;
          await trx('assembly_jobs').insert({
            id: input.jobId,
            workspace_id: input.workspaceId,
            // the member who started it; a history from before workspaces names none, and its account is the personal
            // workspace of its owner, whose id is theirs. A subquery: a member deleted meanwhile records nobody.
            created_by: trx.raw('(select id from users where id = ?)', [input.actorId || input.workspaceId]),
            project_id: input.projectId,
            platform: input.platform,
            clip_ids: input.clipIds,
            status: 'pending',
            progress: ASSEMBLY_PROGRESS.admitted,
            message: ASSEMBLY_MESSAGES.queued,
            options: JSON.stringify({ editing: input.editing, transitions: input.transitions, timeline, ...(input.formats ? { formats, editions } : {}) }),
            workflow_id: input.workflowId,
            trace_id: currentTraceId(),
          });
          await publishEvent(trx, input.workspaceId, { kind: 'job', job: 'assembly', jobId: input.jobId, status: 'pending', progress: ASSEMBLY_PROGRESS.admitted, projectId: input.projectId });
          await recordJobEvent(trx, { workspaceId: input.workspaceId, projectId: input.projectId, jobId: input.jobId, kind: 'assembly', status: 'started', startedBy: input.actorId || input.workspaceId });
          return { timeline, fileName, ...(input.formats ? { editions } : {}) };
        }),
      ),

    /** Moves the job row along; progress never goes back and a finished row is left as it is. */
    async recordAssemblyJob(input: { jobId: string; status: AssemblyJobStatus; progress: number; message: string; result?: AssemblyResultSummary }): Promise<void> {
      await moveJob(input.jobId, {
        status: input.status,
        progress: knex.raw('greatest(progress, ?)', [Math.round(input.progress)]),
        message: input.message,
        ...(input.result ? { result: JSON.stringify(input.result) } : {}),
      }, { approvalId: input.result?.approvalId ?? null });
    },

    /**
     * Renders the timeline into videos/<workspaceId>/<jobId>/video.mp4 and its watermarked preview (preview.mp4, half
     * size) with one ffmpeg run (renderTargets). Histories from before formats.
     */
    async renderAssembly(input: { jobId: string; workspaceId: string; timeline: AssemblyEdit }): Promise<StoredAssemblyVideo> {
      const folder = assemblyFolder(input.workspaceId, input.jobId);
      const [video] = await renderTargets(input, [{ timeline: input.timeline, videoPath: `${folder}/video.mp4`, previewPath: `${folder}/preview.mp4` }]);
      return video;
    },

    /**
     * Renders every format of the edit, one ffmpeg run per format started together (renderTargets), each into its
     * folder (editionFolder: video.mp4 and preview.mp4); answers the stored videos in the formats' order.
     */
    async renderAssemblyFormats(input: { jobId: string; workspaceId: string; editions: Array<{ format: AssemblyFormat; timeline: AssemblyEdit }> }): Promise<StoredAssemblyVideo[]> {
      return renderTargets(
        input,
        input.editions.map((edition, i) => {
          const folder = editionFolder(input.workspaceId, input.jobId, i, edition.format);
          return { timeline: edition.timeline, videoPath: `${folder}/video.mp4`, previewPath: `${folder}/preview.mp4` };
        }),
      );
    },

    /** The thumbnail (a frame as WebP) beside the stored video and its preview. */
    async finishAssemblyMedia(input: { jobId: string; workspaceId: string; videoPath: string }): Promise<{ thumbnailPath: string; previewPath: string }> {
      const ctx = Context.current();
      // the video's own folder: the job's, or a further format's (editionFolder)
      const folder = input.videoPath.slice(0, input.videoPath.lastIndexOf('/'));
      if (folder !== assemblyFolder(input.workspaceId, input.jobId) && !folder.startsWith(`${assemblyFolder(input.workspaceId, input.jobId)}/`)) throw new Error(`${input.videoPath} is not a video of ${input.jobId}`);
      const thumbnailPath = `${folder}/thumbnail.webp`;
      const previewPath = `${folder}/preview.mp4`;
      if (!(await exists(previewPath))) throw new Error(`the preview of ${input.jobId} is missing`);
      if (await exists(thumbnailPath)) return { thumbnailPath, previewPath };
      const local = await storage.objects.localFile(VIDEOS, input.videoPath);
      const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'assembly-media-'));
      try {
        ctx.heartbeat();
        const probe = await probeVideo(local.path);
        const thumb = await videoThumbnail(local.path, Math.min(1, probe.durationSeconds / 2), ASSEMBLY_THUMBNAIL_WIDTH);
        const file = path.join(scratch, 'thumbnail.webp');
        await fs.writeFile(file, thumb.data);
        await assertStillActive(input.jobId);
        await storeOnce(thumbnailPath, file);
        return { thumbnailPath, previewPath };
      } finally {
        await local.release();
        await fs.rm(scratch, { recursive: true, force: true });
      }
    },

    /**
     * The compiled video row (editing_data.status pending_approval until its approval), once per workflow: a
     * retry finds the row the first attempt wrote.
     */
    storeCompiledVideo: (input: StoreCompiledVideoInput): Promise<{ compiledVideoId: string }> =>
      reportingRefusals(async () => {
        try {
          await knex('compiled_videos')
            .insert({
              project_id: input.projectId,
              workspace_id: input.workspaceId,
              file_url: fileUrl(VIDEOS, input.videoPath),
              file_name: input.fileName,
              duration: input.durationSeconds,
              clip_ids: input.clipIds,
              editing_data: JSON.stringify({
                status: 'pending_approval',
                platform: input.platform,
                aspect_ratio: input.aspectRatio,
                transition: input.editing.transition,
                pacing: input.editing.pacing,
                transition_duration: input.editing.transition_duration,
                captions: input.editing.captions,
                music: input.editing.music ?? null,
              }),
              thumbnail_path: input.thumbnailPath,
              storage_bucket: VIDEOS,
              storage_path: input.videoPath,
              storage_mime: 'video/mp4',
              storage_size: input.sizeBytes,
              workflow_id: input.workflowId,
              assembly_job_id: input.jobId,
            })
            .onConflict('workflow_id')
            .ignore();
        } catch (err) {
          // the project (or the user) was deleted while the video was made: no retry can insert it
          if ((err as { code?: unknown }).code === PG_FOREIGN_KEY_VIOLATION) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
          throw err;
        }
        const row = (await knex('compiled_videos').where({ workflow_id: input.workflowId }).first('id')) as { id: string } | undefined;
        if (!row) throw new Error(`compiled video of ${input.workflowId} neither inserted nor found`);
        return { compiledVideoId: row.id };
      }),

    /** Undoes a job that will not reach the approval queue: its files, its unapproved compiled video, its row's status. */
    async abandonAssemblyJob(input: { jobId: string; workspaceId: string; status: 'failed' | 'cancelled'; error: string | null; message: string }): Promise<void> {
      await knex('compiled_videos').where({ assembly_job_id: input.jobId }).whereRaw("editing_data->>'status' <> 'approved'").delete();
      await storage.objects.removePrefix(VIDEOS, assemblyFolder(input.workspaceId, input.jobId));
      await moveJob(input.jobId, { status: input.status, error: input.error, message: input.message }, { error: input.error ?? input.message });
    },
  };
}

export type AssemblyActivities = ReturnType<typeof createAssemblyActivities>;
