/**
 * Video assembly for the API (spec 001 section 7): the user's clips for assembly, the dry-run (the edit the
 * assembly will run), the start (POST /api/video/assemble) and the job's status. The workflow `assembly-<jobId>`
 * answers the status while it runs; the assembly_jobs row once it has closed.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import {
  ASSEMBLY_ERROR_CODES,
  ASSEMBLY_MSG,
  ASSEMBLY_FORMAT_SPECS,
  ASSEMBLY_OUTPUTS,
  assemblyFormatsFor,
  isFinalAssemblyStatus,
  normalizeEditingConfig,
  platformForAspect,
  platformForOrientation,
  type AssemblyClip,
  type AssemblyFormat,
  type AssemblyJobStatus,
  type AssemblyJobView,
  type AssemblyPlatform,
  type AssemblyResultSummary,
  type EditingConfig,
} from '../../domain/assembly';
import { brandPartOf, captionTrackOf, videoTrackOf, type AssemblyEdit, type JunctionOverride } from '../../domain/assemblyTimeline';
import { DomainError } from '../../domain/errors';
import type { Orientation } from '../../domain/orientation';
import type { Storage } from '../../storage';
import { TASK_QUEUES } from '../../domain/taskQueues';
import {
  assemblyAdmissionUpdate,
  assemblyWorkflowId,
  type AssemblyAdmission,
  type AssemblyInput,
  type AssemblyQueues,
} from '../../domain/workflowContracts/assembly';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import type { AestheticChatService } from './aestheticChat';
import { assemblyClipView, assertAssemblyMayStart, assertPlatformFits, assertSelectionSize, listOwnedClips, loadSelectedClips, timelineFor, type AssemblyClipRow } from './assemblyClips';
import { TIMED_OUT, withTimeoutAborting } from '../platform/timeouts';
import { soundtrackSourceFor } from '../content/musicTracks';
import { musicSummary } from '../../domain/music';
import { brandPartsSummary, type BrandPartsSetting } from '../../domain/brandVideo';
import { brandSourceFor } from '../workspaces/brandKit';

/** The workflow's signature (workflows/assembly.ts), started by its type name: services do not import workflows. */
type AssemblyWorkflow = (input: AssemblyInput) => Promise<AssemblyResultSummary>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface DryRunRequest {
  projectId: string | null;
  clipIds: string[];
  aspectRatio: string | null;
  transitions: JunctionOverride[];
  /** The formats the edit is shown in (issue 44 item 4); absent: the platform's own. */
  formats?: AssemblyFormat[];
}

/** The edit in one format: its size and brand layout (the timing is the same in every format). */
export interface DryRunFormat {
  format: AssemblyFormat;
  /** "Reels", "Square", "Feed", "YouTube". */
  label: string;
  width: number;
  height: number;
  request: AssemblyEdit;
}

export interface DryRunPreviewClip {
  id: string;
  name: string;
  project_name: string;
  thumbnail_url: string | null;
  start: number;
  length: number;
  transition_in: string | null;
  transition_out: string | null;
  transition_in_seconds: number;
  transition_out_seconds: number;
  caption: string | null;
}

/** The music of the edit as the view shows it: which track, what part of it, and the same in words. */
/** The brand parts of the edit as the view shows them: whether the workspace has a kit, the switches, and in words. */
export interface DryRunBrand {
  kitStored: boolean;
  parts: BrandPartsSetting;
  /** Which parts the edit has (a switched-on part can be missing: no logo in the kit, no title text). */
  present: { titleCard: boolean; captions: boolean; logo: boolean; endCard: boolean };
  title: string | null;
  summary: string;
}

export interface DryRunMusic {
  trackId: string;
  name: string;
  /** Seconds into the track where the music starts, and how long it plays. */
  trim: number;
  length: number;
  volume: number;
  fadeInSeconds: number;
  fadeOutSeconds: number;
  summary: string;
}

/** POST /api/video-assembly/dry-run's answer: the edit (Shotstack-shaped) and what the view draws of it. */
export interface DryRunAnswer {
  success: true;
  /** The edit in the platform's own format (as before formats). */
  request: AssemblyEdit;
  /** The edit in each format asked for (only the platform's own when none was), in the picker's order. */
  formats: DryRunFormat[];
  preview: {
    platform: AssemblyPlatform;
    aspectRatio: '16:9' | '9:16';
    orientation: Orientation;
    width: number;
    height: number;
    totalDuration: number;
    clips: DryRunPreviewClip[];
    editingConfig: EditingConfig;
    /** null: the video is silent. */
    music: DryRunMusic | null;
    brand: DryRunBrand;
  };
}

export interface StartAssemblyRequest {
  projectId: string | null;
  platform: AssemblyPlatform;
  /** Clip ids in play order (clipOrder over contentItems). */
  clipIds: string[];
  /** The formats to render, each its own approval item; absent: the platform's own (as before formats). */
  formats?: AssemblyFormat[];
}

export interface VideoAssemblyDeps {
  knex: Knex;
  storage: Storage;
  chat: AestheticChatService;
  logger?: Logger;
  client: () => Promise<Client>;
  queues: AssemblyQueues & { generation: string };
  admissionTimeoutMs?: number;
}

export function defaultAssemblyQueues(overrides: Partial<Record<keyof typeof TASK_QUEUES, string>> = {}): AssemblyQueues & { generation: string } {
  return {
    generation: overrides.generation ?? TASK_QUEUES.generation,
    media: overrides.media ?? TASK_QUEUES.media,
    approvals: overrides.approvals ?? TASK_QUEUES.approvals,
  };
}

function failedToStart(): DomainError {
  return new DomainError(503, ASSEMBLY_ERROR_CODES.startFailed, ASSEMBLY_MSG.failedToStart);
}

function jobNotFound(): DomainError {
  return new DomainError(404, ASSEMBLY_ERROR_CODES.jobNotFound, 'Assembly job not found');
}

interface AssemblyJobRow {
  id: string;
  workspace_id: string;
  project_id: string;
  platform: AssemblyPlatform;
  clip_ids: string[];
  status: AssemblyJobStatus;
  progress: number;
  message: string | null;
  error: string | null;
  result: AssemblyResultSummary | null;
  workflow_id: string;
  created_at: Date;
}

/** An assembly as its status call shows it: from its row, which the workflow's activities write at every step. */
function toView(row: AssemblyJobRow): AssemblyJobView {
  return {
    jobId: row.id,
    status: row.status,
    progress: row.progress,
    message: row.message ?? '',
    error: row.error,
    projectId: row.project_id,
    platform: row.platform,
    clipIds: row.clip_ids,
    result: row.result ?? null,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function brandOf(edit: AssemblyEdit, editing: EditingConfig, kitStored: boolean): DryRunBrand {
  const title = brandPartOf(edit, 'titleCard');
  return {
    kitStored,
    parts: editing.brand,
    present: {
      titleCard: title !== null,
      captions: captionTrackOf(edit).some((c) => c.asset.style === 'brand'),
      logo: brandPartOf(edit, 'logo') !== null,
      endCard: brandPartOf(edit, 'endCard') !== null,
    },
    title: title?.asset.text ?? null,
    summary: brandPartsSummary(editing.brand, kitStored),
  };
}

export class VideoAssemblyService {
  private readonly admissionTimeoutMs: number;

  constructor(private readonly deps: VideoAssemblyDeps) {
    this.admissionTimeoutMs = deps.admissionTimeoutMs ?? 20_000;
  }

  /** The user's approved clips for assembly (spec 001 section 3), newest first, optionally of one orientation. */
  async clips(workspaceId: string, orientation?: Orientation): Promise<AssemblyClip[]> {
    const rows = await listOwnedClips(this.deps.knex, workspaceId);
    const views = rows.map((row) => assemblyClipView(this.deps.storage, row));
    return orientation ? views.filter((clip) => clip.orientation === orientation) : views;
  }

  /** The project the video is saved into: required, and the user's own (spec 001 section 6). */
  private async assertProject(workspaceId: string, projectId: string | null): Promise<string> {
    return (await this.projectOf(workspaceId, projectId)).id;
  }

  private async projectOf(workspaceId: string, projectId: string | null): Promise<{ id: string; name: string }> {
    if (!projectId || !projectId.trim()) throw new DomainError(400, ASSEMBLY_ERROR_CODES.noProject, ASSEMBLY_MSG.selectProject);
    const permission = new DomainError(403, ASSEMBLY_ERROR_CODES.projectPermission, ASSEMBLY_MSG.projectPermission);
    if (!UUID.test(projectId)) throw permission;
    const project = (await this.deps.knex('projects').where({ id: projectId, workspace_id: workspaceId }).first('id', 'name')) as { id: string; name: string } | undefined;
    if (!project) throw permission;
    return project;
  }

  async dryRun(workspaceId: string, request: DryRunRequest): Promise<DryRunAnswer> {
    const project = await this.projectOf(workspaceId, request.projectId);
    const projectId = project.id;
    assertSelectionSize(request.clipIds);
    const { rows, orientation } = await loadSelectedClips(this.deps.knex, workspaceId, request.clipIds);
    const platform = request.aspectRatio ? platformForAspect(request.aspectRatio) : platformForOrientation(orientation);
    assertPlatformFits(platform, orientation);
    const editing = await this.deps.chat.editingConfig(workspaceId, projectId);
    const soundtrack = await soundtrackSourceFor(this.deps.knex, workspaceId, editing);
    const brand = await brandSourceFor(this.deps.knex, workspaceId, { titleText: editing.brand.title_text, projectName: project.name });
    const edit = timelineFor(rows, platform, editing, request.transitions, soundtrack, brand);
    const formats = assemblyFormatsFor(platform, request.formats) ?? [];
    return {
      success: true,
      request: edit,
      formats: formats.map((format) => {
        const spec = ASSEMBLY_FORMAT_SPECS[format];
        return { format, label: spec.label, width: spec.width, height: spec.height, request: format === edit.output.aspectRatio ? edit : timelineFor(rows, platform, editing, request.transitions, soundtrack, brand, format) };
      }),
      preview: { ...this.preview(edit, rows, orientation, editing), music: await this.musicOf(workspaceId, edit, editing), brand: brandOf(edit, editing, brand !== null) },
    };
  }

  private async musicOf(workspaceId: string, edit: AssemblyEdit, editing: EditingConfig): Promise<DryRunMusic | null> {
    const soundtrack = edit.timeline.soundtrack;
    if (!soundtrack || !editing.music) return null;
    const row = (await this.deps.knex('music_tracks').where({ id: soundtrack.trackId, workspace_id: workspaceId }).first('name')) as { name: string } | undefined;
    const name = row?.name ?? '';
    return {
      trackId: soundtrack.trackId,
      name,
      trim: soundtrack.trim,
      length: soundtrack.length,
      volume: soundtrack.volume,
      fadeInSeconds: soundtrack.fadeInSeconds,
      fadeOutSeconds: soundtrack.fadeOutSeconds,
      summary: musicSummary({ ...editing.music, fade_in_seconds: soundtrack.fadeInSeconds, fade_out_seconds: soundtrack.fadeOutSeconds }, name),
    };
  }

  private preview(edit: AssemblyEdit, rows: AssemblyClipRow[], orientation: Orientation, editing: EditingConfig): Omit<DryRunAnswer['preview'], 'music' | 'brand'> {
    const output = ASSEMBLY_OUTPUTS[edit.output.platform];
    const captions = new Map(captionTrackOf(edit).map((c) => [c.clipId, c.asset.text]));
    const views = new Map(rows.map((row) => [row.id, assemblyClipView(this.deps.storage, row)]));
    return {
      platform: output.platform,
      aspectRatio: output.aspectRatio,
      orientation,
      width: output.width,
      height: output.height,
      totalDuration: edit.totalDuration,
      editingConfig: editing,
      clips: videoTrackOf(edit).map((clip) => {
        const view = views.get(clip.clipId) as AssemblyClip;
        return {
          id: clip.clipId,
          name: view.custom_name?.trim() || view.file_name,
          project_name: view.project_name,
          thumbnail_url: view.thumbnail_url,
          start: clip.start,
          length: clip.length,
          transition_in: clip.transition?.in ?? null,
          transition_out: clip.transition?.out ?? null,
          transition_in_seconds: clip.transitionSeconds.in,
          transition_out_seconds: clip.transitionSeconds.out,
          caption: captions.get(clip.clipId) ?? null,
        };
      }),
    };
  }

  /**
   * Checks the request here (quick 4xx answers), then starts the workflow, whose admission checks it again. `workspaceId` is
   * the account (workspace) the video belongs to; `actorId` the member who started it (recorded as created_by).
   */
  async start(workspaceId: string, request: StartAssemblyRequest, acting: { actorId?: string } = {}): Promise<{ success: true; jobId: string }> {
    const projectId = await this.assertProject(workspaceId, request.projectId);
    assertSelectionSize(request.clipIds);
    const { orientation } = await loadSelectedClips(this.deps.knex, workspaceId, request.clipIds);
    assertPlatformFits(request.platform, orientation);
    await assertAssemblyMayStart(this.deps.knex, workspaceId);
    const editing = normalizeEditingConfig(await this.deps.chat.editingConfig(workspaceId, projectId));
    // a chosen track that is gone is refused here, before anything starts (the admission checks it again)
    await soundtrackSourceFor(this.deps.knex, workspaceId, editing);

    const jobId = randomUUID();
    const input: AssemblyInput = {
      jobId,
      workspaceId,
      ...(acting.actorId ? { actorId: acting.actorId } : {}),
      projectId,
      platform: request.platform,
      clipIds: request.clipIds,
      editing,
      ...(request.formats && request.formats.length > 0 ? { formats: assemblyFormatsFor(request.platform, request.formats) ?? undefined } : {}),
      queues: { media: this.deps.queues.media, approvals: this.deps.queues.approvals },
    };
    let client: Client;
    try {
      client = await this.deps.client();
    } catch (err) {
      this.deps.logger?.error({ err }, 'temporal unavailable: assembly not started');
      throw failedToStart();
    }
    const startOperation = new WithStartWorkflowOperation<AssemblyWorkflow>('assemblyWorkflow', {
      workflowId: assemblyWorkflowId(jobId),
      taskQueue: this.deps.queues.generation,
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: jobSearchAttributes({ workspaceId, actorId: acting.actorId, kind: 'assembly', itemId: jobId, projectId }),
      args: [input],
    });
    let admission: AssemblyAdmission | typeof TIMED_OUT;
    try {
      admission = await withTimeoutAborting(
        (signal) => client.withAbortSignal(signal, () => client.workflow.executeUpdateWithStart(assemblyAdmissionUpdate, { startWorkflowOperation: startOperation })),
        this.admissionTimeoutMs,
      );
    } catch (err) {
      this.deps.logger?.error({ err, jobId }, 'assembly workflow could not start');
      throw failedToStart();
    }
    if (admission === TIMED_OUT) {
      // no worker answered in time: the user is told it failed, so the job must not go on later unseen
      this.deps.logger?.error({ jobId }, 'assembly admission timed out; cancelling the workflow');
      await client.workflow
        .getHandle(assemblyWorkflowId(jobId))
        .cancel()
        .catch(() => undefined);
      throw failedToStart();
    }
    if (!admission.admitted) throw new DomainError(admission.status, admission.code, admission.error);
    return { success: true, jobId };
  }

  private async ownedJob(workspaceId: string, jobId: string): Promise<AssemblyJobRow> {
    if (!UUID.test(jobId)) throw jobNotFound();
    const row = (await this.deps.knex('assembly_jobs').where({ id: jobId, workspace_id: workspaceId }).first()) as AssemblyJobRow | undefined;
    if (!row) throw jobNotFound();
    return row;
  }

  async status(workspaceId: string, jobId: string): Promise<AssemblyJobView> {
    const row = await this.ownedJob(workspaceId, jobId);
    return toView(row);
  }
}
