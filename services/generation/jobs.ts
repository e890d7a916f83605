/**
 * The Activity view: a workspace's running and recent jobs (clips, image edits, data exports, assemblies, Enhance
 * Renders' draft jobs), each with the member who started it, or every account's for a site admin, with cancel and
 * retry. The account a job belongs to is its workspace (DESIGN.md "Teams (workspaces)"): the job tables' `workspace_id`
 * names it, their `created_by` the member who started it. Nothing here keeps a copy of a job's state: jobs come from
 * their job tables (image edits too: their row is written when they start and kept current by their run), and only a
 * running image edit started before that, which has no row until it ends, from Temporal's visibility by its search
 * attributes (RsWorkspaceId, and RsUserId for who started it).
 */
import type { Client, QueryDefinition } from '@temporalio/client';
import type { Knex } from 'knex';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { CREDIT_COST } from '../../domain/constants';
import type { ClipJobOptions } from '../../domain/clipGeneration';
import { DomainError } from '../../domain/errors';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import {
  JOB_ERROR_CODES,
  JOB_KINDS,
  JOB_MESSAGES,
  isRunningJobState,
  temporalRunUrl,
  traceViewerLink,
  type ActivityJob,
  type ActivityJobKind,
  type ActivityJobList,
  type ActivityJobState,
  type JobStarter,
} from '../../domain/jobs';
import { draftJobStateQuery } from '../../domain/workflowContracts/draftJob';
import { modelOption } from '../../domain/enhanceRenders';
import { countText } from '../../domain/plural';
import { imageEditStateQuery } from '../../domain/workflowContracts/imageEdit';
import { RS_JOB_KIND, RS_PROJECT_ID, RS_USER_ID, RS_WORKSPACE_ID } from '../../domain/searchAttributes';
import type { VideoGenerationService } from './videoGeneration';
import { queryWorkflowOrNull } from '../platform/workflowQuery';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How many jobs a list holds: the user's latest, or every user's latest for an admin. */
export const JOB_LIST_LIMIT = 50;
export const ADMIN_JOB_LIST_LIMIT = 100;

/** Who asks: the user (with their site role: 'admin' sees and acts on every account's jobs) in a workspace. */
export interface JobActor {
  /** The user. */
  id: string;
  /** The site role (users.role), not the workspace role: the route's workspace grant has checked that one. */
  role: string;
  /** The workspace (account) the request acts in; the user's personal workspace (= their id) when absent. */
  workspaceId?: string;
}

/**
 * A listed job before its starter is looked up: `starterId` is the created_by of its row (or RsUserId of its run);
 * `rowTraceId` its row's trace id (shown to site admins only).
 */
type ListedJob = ActivityJob & { starterId: string | null; rowTraceId: string | null };

export interface JobServiceDeps {
  knex: Knex;
  client: () => Promise<Client>;
  clips: VideoGenerationService;
  config: Pick<AppConfig, 'temporalUiUrl' | 'temporalNamespace'> & Partial<Pick<AppConfig, 'traceViewerUrl'>>;
  logger?: Logger;
  /**
   * How long the listing waits for a running image edit's or Enhance Renders job's own answer (they keep no progress
   * row) before showing it from what it has (ms). Clips, assemblies and exports answer from their rows.
   */
  queryTimeoutMs?: number;
}

function iso(value: Date | string | null | undefined): string | null {
  return value ? new Date(value).toISOString() : null;
}

function durationOf(startedAt: string, finishedAt: string | null, state: ActivityJobState, now: number): number | null {
  const start = Date.parse(startedAt);
  if (finishedAt) return Math.max(0, Date.parse(finishedAt) - start);
  return isRunningJobState(state) ? Math.max(0, now - start) : null;
}

/** The workspace a request acts in: the one it named, else the user's personal workspace (whose id is theirs). */
function workspaceOf(actor: JobActor): string {
  return actor.workspaceId ?? actor.id;
}

/**
 * The workspace a job belongs to, whoever asks (the caller decides what the asker may see), or null for no such job:
 * its row's, or for a running image edit without a row (started before rows were written at the start), the
 * RsWorkspaceId it was started with (RsUserId before workspaces).
 */
export async function jobWorkspaceOf(deps: { knex: Knex; client: () => Promise<Client> }, kind: string, id: string): Promise<string | null> {
  if (!(JOB_KINDS as readonly string[]).includes(kind) || !UUID.test(id)) return null;
  const table = kind === 'clip' ? 'video_generation_jobs' : kind === 'export' ? 'data_exports' : kind === 'assembly' ? 'assembly_jobs' : kind === 'draft' ? 'draft_jobs' : null;
  const row = table
    ? ((await deps.knex(table).where({ id }).first('workspace_id')) as { workspace_id: string } | undefined)
    : ((await deps.knex('ai_image_edits').where({ workflow_id: imageEditWorkflowId(id) }).first('workspace_id')) as { workspace_id: string } | undefined);
  if (row) return row.workspace_id;
  if (kind !== 'image-edit') return null;
  try {
    const described = await (await deps.client()).workflow.getHandle(imageEditWorkflowId(id)).describe();
    return described.typedSearchAttributes.get(RS_WORKSPACE_ID) ?? described.typedSearchAttributes.get(RS_USER_ID) ?? null;
  } catch {
    return null;
  }
}

function notFound(): DomainError {
  return new DomainError(404, JOB_ERROR_CODES.notFound, JOB_MESSAGES.notFound);
}

function clipItem(options: Partial<ClipJobOptions>, sourceName: string | null): string {
  const what = [options.effect, options.platform && options.aspectRatio ? `${options.platform} ${options.aspectRatio}` : options.platform].filter(Boolean).join(', ');
  return sourceName ? `${what || 'Clip'} from ${sourceName}` : what || 'Clip';
}

function shortPrompt(prompt: string): string {
  const text = prompt.trim().replace(/\s+/g, ' ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

interface ClipRow {
  id: string;
  workspace_id: string;
  email: string | null;
  created_by: string | null;
  project_id: string;
  project_name: string | null;
  source_name: string | null;
  status: ActivityJobState;
  progress: number;
  message: string | null;
  error: string | null;
  options: Partial<ClipJobOptions>;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
  trace_id: string | null;
}

interface ImageEditRow {
  id: string;
  workspace_id: string;
  email: string | null;
  created_by: string | null;
  project_id: string | null;
  project_name: string | null;
  workflow_id: string | null;
  edit_prompt: string;
  status: ActivityJobState;
  progress: number;
  message: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  trace_id: string | null;
}

interface ExportRow {
  id: string;
  workspace_id: string;
  email: string | null;
  sequence: number;
  workflow_id: string;
  status: ActivityJobState;
  progress: number;
  message: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  trace_id: string | null;
}

export class JobService {
  private readonly queryTimeoutMs: number;

  constructor(private readonly deps: JobServiceDeps) {
    this.queryTimeoutMs = deps.queryTimeoutMs ?? 250;
  }

  /** The workspace's jobs, or with `all` (site admins only, else 403) every account's, newest first. */
  async list(actor: JobActor, options: { all?: boolean } = {}): Promise<ActivityJobList> {
    const all = options.all === true;
    if (all && actor.role !== 'admin') throw new DomainError(403, 'ADMIN_ONLY', 'Admin access required');
    const userId = all ? null : workspaceOf(actor);
    const limit = all ? ADMIN_JOB_LIST_LIMIT : JOB_LIST_LIMIT;
    const now = Date.now();
    const [clips, [edits, runningEdits], exports, assemblies, drafts] = await Promise.all([
      this.clipJobs(userId, limit, now),
      // runs without a row (started before rows were written at the start) are asked of Temporal
      this.imageEditJobs(userId, limit, now).then(async (rows) => [rows, await this.runningImageEdits(userId, now, new Set(rows.map((job) => job.workflowId)))] as const),
      this.exportJobs(userId, limit, now),
      this.assemblyJobs(userId, limit, now),
      this.draftJobs(userId, limit, now),
    ]);
    const recorded = new Set(edits.map((job) => job.workflowId));
    const listed = [...clips, ...runningEdits.filter((job) => !recorded.has(job.workflowId)), ...edits, ...exports, ...assemblies, ...drafts]
      .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))
      .slice(0, limit);
    const jobs = (await this.withStarters(listed)).map((job) => {
      if (actor.role !== 'admin') delete job.traceId;
      const shown = actor.role === 'admin' ? this.withAdminLinks(job) : job;
      if (!all) delete shown.userEmail;
      return shown;
    });
    return { jobs, all };
  }

  /** What a site admin sees besides: the run in the Temporal UI, and the job's trace (id, and link with a viewer set). */
  private withAdminLinks(job: ActivityJob & { traceId?: string }): ActivityJob {
    const shown: ActivityJob = { ...job, temporalUrl: temporalRunUrl(this.deps.config.temporalUiUrl, this.deps.config.temporalNamespace, job.workflowId) };
    if (job.traceId && this.deps.config.traceViewerUrl) shown.traceUrl = traceViewerLink(this.deps.config.traceViewerUrl, job.traceId);
    return shown;
  }

  /**
   * Each job with who started it: the user's name (their personal workspace's profile, whose id is theirs) and e-mail;
   * null when nobody is recorded or the user was deleted. In a site admin's list of every account's jobs, the e-mail
   * shown for a job is its starter's, else its account owner's.
   */
  private async withStarters(listed: ListedJob[]): Promise<ActivityJob[]> {
    const ids = [...new Set(listed.map((job) => job.starterId).filter((id): id is string => id !== null && UUID.test(id)))];
    const starters = new Map<string, JobStarter>();
    if (ids.length > 0) {
      const rows = (await this.deps.knex('users as u')
        .leftJoin('profiles as p', 'p.id', 'u.id')
        .whereIn('u.id', ids)
        .select('u.id', 'u.email', 'p.name')) as Array<{ id: string; email: string; name: string | null }>;
      for (const row of rows) starters.set(row.id, { userId: row.id, name: row.name ?? '', email: row.email });
    }
    // the trace id rides along as traceId here; list() and clipJob() keep it for site admins only
    return listed.map(({ starterId, rowTraceId, ...job }) => {
      const startedBy = starterId ? (starters.get(starterId) ?? null) : null;
      return { ...job, startedBy, userEmail: startedBy?.email ?? job.userEmail, ...(rowTraceId ? { traceId: rowTraceId } : {}) };
    });
  }

  /** Cancels a running clip (the workflow releases its reservation); a member of its workspace or a site admin may. */
  async cancel(actor: JobActor, kind: string, id: string): Promise<ActivityJob> {
    const ownerId = await this.ownerOf(actor, kind, id);
    if (kind !== 'clip') throw new DomainError(409, JOB_ERROR_CODES.notCancellable, JOB_MESSAGES.notCancellable);
    await this.deps.clips.cancel(ownerId, id, actor.id);
    return this.clipJob(ownerId, id, actor);
  }

  /**
   * Starts a failed or cancelled clip again with the same inputs, for its workspace and started by the actor; a member
   * of its workspace or a site admin may. A site admin's retry of another account's job is recorded as the admin's
   * (created_by), so the Activity list says who started it (docs/security.md "Admins").
   */
  async retry(actor: JobActor, kind: string, id: string): Promise<{ kind: ActivityJobKind; id: string; retriedFrom: string; warning?: string; code?: string }> {
    const ownerId = await this.ownerOf(actor, kind, id);
    if (kind !== 'clip') throw new DomainError(409, JOB_ERROR_CODES.notRetryable, JOB_MESSAGES.notRetryable);
    const answer = await this.deps.clips.retry(ownerId, id, actor.id);
    return {
      kind: 'clip',
      id: answer.jobId,
      retriedFrom: answer.retriedFrom,
      ...(answer.warning ? { warning: answer.warning } : {}),
      ...(answer.code ? { code: answer.code } : {}),
    };
  }

  /** The job's account when the actor may act on it: another workspace's job is not found unless the actor is a site admin. */
  private async ownerOf(actor: JobActor, kind: string, id: string): Promise<string> {
    const ownerId = await jobWorkspaceOf({ knex: this.deps.knex, client: this.deps.client }, kind, id);
    if (!ownerId || (ownerId !== workspaceOf(actor) && actor.role !== 'admin')) throw notFound();
    return ownerId;
  }

  private async clipJob(ownerId: string, id: string, actor: JobActor): Promise<ActivityJob> {
    const [found] = await this.withStarters(await this.clipJobs(ownerId, 1, Date.now(), id));
    if (!found) throw notFound();
    if (actor.role !== 'admin') delete found.traceId;
    const job = actor.role === 'admin' ? this.withAdminLinks(found) : found;
    delete job.userEmail;
    return job;
  }

  // the account of a team workspace is no user: its jobs are joined to users (the owner's e-mail) only where there is one
  private async clipJobs(userId: string | null, limit: number, now: number, id?: string): Promise<ListedJob[]> {
    const { knex } = this.deps;
    const query = knex('video_generation_jobs as j')
      .leftJoin('users as u', 'u.id', 'j.workspace_id')
      .leftJoin('projects as p', 'p.id', 'j.project_id')
      .leftJoin('renders as r', 'r.id', 'j.render_id')
      .leftJoin('images as i', 'i.id', 'j.image_id')
      .select('j.id', 'j.workspace_id', 'u.email', 'j.project_id', 'p.name as project_name', knex.raw('coalesce(r.file_name, i.file_name) as source_name'))
      .select('j.status', 'j.progress', 'j.message', 'j.error', 'j.options', 'j.workflow_id', 'j.created_at', 'j.updated_at', 'j.created_by', 'j.trace_id')
      .orderBy('j.created_at', 'desc')
      .limit(limit);
    if (userId) query.where('j.workspace_id', userId);
    if (id) query.where('j.id', id);
    const rows = (await query) as ClipRow[];
    return Promise.all(
      rows.map(async (row) => {
        let state = row.status;
        let progress = row.progress;
        let message = row.message ?? '';
        let error = row.error;
        if (isRunningJobState(row.status)) {
          // the workflow leads while it runs (the status call merges its query with the row)
          const live = await this.deps.clips.status(row.workspace_id, row.id).catch(() => null);
          if (live) ({ status: state, progress, message, error } = live);
        }
        const startedAt = iso(row.created_at) as string;
        const finishedAt = isRunningJobState(state) ? null : iso(row.updated_at);
        return {
          kind: 'clip' as const,
          id: row.id,
          workflowId: row.workflow_id,
          userId: row.workspace_id,
          userEmail: row.email ?? '',
          startedBy: null,
          starterId: row.created_by,
          rowTraceId: row.trace_id,
          projectId: row.project_id,
          projectName: row.project_name,
          item: clipItem(row.options ?? {}, row.source_name),
          state,
          progress,
          message,
          error,
          startedAt,
          finishedAt,
          durationMs: durationOf(startedAt, finishedAt, state, now),
          cost: CREDIT_COST.clip,
          canCancel: isRunningJobState(state),
          canRetry: state === 'failed' || state === 'cancelled',
        };
      }),
    );
  }

  /**
   * Image edits from their rows, which the run keeps current from its start (a row written before that was written when
   * its run ended: its start and end are that moment).
   */
  private async imageEditJobs(userId: string | null, limit: number, now: number): Promise<ListedJob[]> {
    const query = this.deps.knex('ai_image_edits as e')
      .leftJoin('users as u', 'u.id', 'e.workspace_id')
      .leftJoin('projects as p', 'p.id', 'e.project_id')
      .select(
        'e.id',
        'e.workspace_id',
        'u.email',
        'e.project_id',
        'p.name as project_name',
        'e.workflow_id',
        'e.edit_prompt',
        'e.status',
        'e.progress',
        'e.message',
        'e.error',
        'e.created_at',
        'e.updated_at',
        'e.created_by',
        'e.trace_id',
      )
      .whereNotNull('e.workflow_id')
      .orderBy('e.created_at', 'desc')
      .limit(limit);
    if (userId) query.where('e.workspace_id', userId);
    const rows = (await query) as ImageEditRow[];
    return rows.map((row) => {
      const startedAt = iso(row.created_at) as string;
      const running = isRunningJobState(row.status);
      const finishedAt = running ? null : (iso(row.updated_at) as string);
      const workflowId = row.workflow_id as string;
      return {
        kind: 'image-edit' as const,
        id: workflowId.replace(/^image-edit-/, ''),
        workflowId,
        userId: row.workspace_id,
        userEmail: row.email ?? '',
        startedBy: null,
        starterId: row.created_by,
        rowTraceId: row.trace_id,
        projectId: row.project_id,
        projectName: row.project_name,
        item: shortPrompt(row.edit_prompt),
        state: row.status,
        progress: running ? row.progress : row.status === 'completed' ? 100 : 0,
        message: running ? (row.message ?? '') : row.status === 'completed' ? 'Sent for approval' : (row.error ?? ''),
        error: row.error,
        startedAt,
        finishedAt,
        durationMs: finishedAt === startedAt ? null : durationOf(startedAt, finishedAt, row.status, now),
        cost: CREDIT_COST.image,
        canCancel: false,
        canRetry: false,
      };
    });
  }

  /**
   * Image edits still running, found by their search attributes (at most a few per workspace: each takes seconds): the
   * account is RsWorkspaceId, the starter RsUserId. A run started before workspaces has no RsWorkspaceId: its RsUserId
   * was its account (a personal workspace), so it is looked for under both and kept only when its account matches.
   */
  private async runningImageEdits(userId: string | null, now: number, recorded: ReadonlySet<string> = new Set()): Promise<ListedJob[]> {
    let client: Client;
    try {
      client = await this.deps.client();
    } catch (err) {
      this.deps.logger?.debug({ err }, 'temporal unavailable: running image edits not listed');
      return [];
    }
    if (userId !== null && !UUID.test(userId)) return [];
    const ofAccount = userId ? [`(${RS_WORKSPACE_ID.name} = '${userId}' OR ${RS_USER_ID.name} = '${userId}')`] : [];
    const query = [`${RS_JOB_KIND.name} = 'image-edit'`, `ExecutionStatus = 'Running'`, ...ofAccount].join(' AND ');
    const found: Array<{ workflowId: string; userId: string; starterId: string | null; projectId: string | null; startedAt: string }> = [];
    try {
      for await (const run of client.workflow.list({ query, pageSize: 20 })) {
        const starter = run.typedSearchAttributes.get(RS_USER_ID) ?? null;
        const owner = run.typedSearchAttributes.get(RS_WORKSPACE_ID) ?? starter;
        if (!owner || (userId && owner !== userId) || recorded.has(run.workflowId)) continue;
        found.push({ workflowId: run.workflowId, userId: owner, starterId: starter, projectId: run.typedSearchAttributes.get(RS_PROJECT_ID) ?? null, startedAt: run.startTime.toISOString() });
        if (found.length >= 20) break;
      }
    } catch (err) {
      this.deps.logger?.debug({ err }, 'visibility list failed: running image edits not listed');
      return [];
    }
    if (found.length === 0) return [];
    const accountIds = [...new Set(found.map((f) => f.userId).filter((id) => UUID.test(id)))];
    // the account still exists (a deleted one's runs are being cancelled); its owner's e-mail for a site admin's list
    const accounts = new Set<string>((await this.deps.knex('profiles').whereIn('id', accountIds).pluck('id')) as string[]);
    const users = new Map<string, { email: string }>(
      ((await this.deps.knex('users').whereIn('id', accountIds).select('id', 'email')) as Array<{ id: string; email: string }>).map((u) => [u.id, u]),
    );
    const projectIds = found.map((f) => f.projectId).filter((p): p is string => p !== null && UUID.test(p));
    const projects = new Map<string, string>(
      ((await this.deps.knex('projects').whereIn('id', projectIds).select('id', 'name')) as Array<{ id: string; name: string }>).map((p) => [p.id, p.name]),
    );
    return Promise.all(
      found
        .filter((run) => accounts.has(run.userId))
        .map(async (run) => {
          const live = await this.query(client, run.workflowId, imageEditStateQuery);
          const state: ActivityJobState = live?.status ?? 'processing';
          return {
            kind: 'image-edit' as const,
            id: run.workflowId.replace(/^image-edit-/, ''),
            workflowId: run.workflowId,
            userId: run.userId,
            userEmail: users.get(run.userId)?.email ?? '',
            startedBy: null,
            starterId: run.starterId,
            rowTraceId: null,
            projectId: run.projectId,
            projectName: run.projectId ? (projects.get(run.projectId) ?? null) : null,
            item: 'AI image edit',
            state,
            progress: live?.progress ?? 0,
            message: live?.message ?? '',
            error: live?.error ?? null,
            startedAt: run.startedAt,
            finishedAt: null,
            durationMs: durationOf(run.startedAt, null, state, now),
            cost: CREDIT_COST.image,
            canCancel: false,
            canRetry: false,
          };
        }),
    );
  }

  /** A data export is a person's, of their personal workspace: its starter is that user. */
  private async exportJobs(userId: string | null, limit: number, now: number): Promise<ListedJob[]> {
    const query = this.deps.knex('data_exports as x')
      .leftJoin('users as u', 'u.id', 'x.workspace_id')
      .select('x.id', 'x.workspace_id', 'u.email', 'x.sequence', 'x.workflow_id', 'x.status', 'x.progress', 'x.message', 'x.error', 'x.created_at', 'x.updated_at', 'x.completed_at', 'x.trace_id')
      .orderBy('x.created_at', 'desc')
      .limit(limit);
    if (userId) query.where('x.workspace_id', userId);
    const rows = (await query) as ExportRow[];
    return rows.map((row): ListedJob => {
      const { status: state, progress, error } = row;
      const message = row.message ?? '';
      const startedAt = iso(row.created_at) as string;
      const finishedAt = isRunningJobState(state) ? null : (iso(row.completed_at) ?? iso(row.updated_at));
      return {
        kind: 'export' as const,
        id: row.id,
        workflowId: row.workflow_id,
        userId: row.workspace_id,
        userEmail: row.email ?? '',
        startedBy: null,
        starterId: row.workspace_id,
        rowTraceId: row.trace_id,
        projectId: null,
        projectName: null,
        item: `Data export #${row.sequence}`,
        state,
        progress,
        message,
        error,
        startedAt,
        finishedAt,
        durationMs: durationOf(startedAt, finishedAt, state, now),
        cost: 0,
        canCancel: false,
        canRetry: false,
      };
    });
  }

  /** Assemblies: free (cost 0), neither cancelled nor retried from here; read from their rows, which the workflow keeps current. */
  private async assemblyJobs(userId: string | null, limit: number, now: number): Promise<ListedJob[]> {
    const query = this.deps.knex('assembly_jobs as a')
      .leftJoin('users as u', 'u.id', 'a.workspace_id')
      .leftJoin('projects as p', 'p.id', 'a.project_id')
      .select('a.id', 'a.workspace_id', 'u.email', 'a.project_id', 'p.name as project_name', 'a.platform', 'a.clip_ids', 'a.workflow_id', 'a.status', 'a.progress', 'a.message', 'a.error')
      .select('a.created_by', 'a.trace_id')
      .select('a.created_at', 'a.updated_at')
      .orderBy('a.created_at', 'desc')
      .limit(limit);
    if (userId) query.where('a.workspace_id', userId);
    const rows = (await query) as Array<ExportRow & { project_id: string; project_name: string | null; platform: string; clip_ids: string[]; created_by: string | null }>;
    return rows.map((row): ListedJob => {
      const { status: state, progress, error } = row;
      const message = row.message ?? '';
      const startedAt = iso(row.created_at) as string;
      const finishedAt = isRunningJobState(state) ? null : iso(row.updated_at);
      const count = row.clip_ids.length;
      return {
        kind: 'assembly' as const,
        id: row.id,
        workflowId: row.workflow_id,
        userId: row.workspace_id,
        userEmail: row.email ?? '',
        startedBy: null,
        starterId: row.created_by,
        rowTraceId: row.trace_id,
        projectId: row.project_id,
        projectName: row.project_name,
        item: `${countText(count, 'clip')} for ${row.platform === 'tiktok' ? 'TikTok 9:16' : 'YouTube 16:9'}`,
        state,
        progress,
        message,
        error,
        startedAt,
        finishedAt,
        durationMs: durationOf(startedAt, finishedAt, state, now),
        cost: CREDIT_COST.assembly,
        canCancel: false,
        canRetry: false,
      };
    });
  }

  /**
   * Enhance Renders' model runs (free during the Beta): the model on one draft image, with the draft as its place. A
   * running one answers from its workflow's query; a failed one keeps its reason, retried from its card in the draft.
   */
  private async draftJobs(userId: string | null, limit: number, now: number): Promise<ListedJob[]> {
    const query = this.deps.knex('draft_jobs as j')
      .leftJoin('users as u', 'u.id', 'j.workspace_id')
      .join('drafts as d', 'd.id', 'j.draft_id')
      .join('draft_images as i', 'i.id', 'j.draft_image_id')
      .select('j.id', 'j.workspace_id', 'u.email', 'j.draft_id', 'd.name as draft_name', 'i.name as image_name', 'j.model_id', 'j.prompt', 'j.workflow_id', 'j.status', 'j.error')
      .select('j.created_at', 'j.updated_at', 'j.completed_at', 'j.created_by', 'j.trace_id')
      .orderBy('j.created_at', 'desc')
      .limit(limit);
    if (userId) query.where('j.workspace_id', userId);
    const rows = (await query) as Array<{
      id: string;
      workspace_id: string;
      email: string | null;
      created_by: string | null;
      draft_id: string;
      draft_name: string;
      image_name: string;
      model_id: string;
      prompt: string | null;
      workflow_id: string;
      status: ActivityJobState;
      error: string | null;
      created_at: Date;
      updated_at: Date;
      completed_at: Date | null;
      trace_id: string | null;
    }>;
    const client = this.lazyClient();
    return Promise.all(
      rows.map(async (row) => {
        const { state, progress, message, error } = await this.rowOrLiveState({ ...row, progress: row.status === 'completed' ? 100 : 0, message: null }, client, draftJobStateQuery);
        const startedAt = iso(row.created_at) as string;
        const finishedAt = isRunningJobState(state) ? null : (iso(row.completed_at) ?? iso(row.updated_at));
        const model = modelOption(row.model_id)?.label ?? row.model_id;
        return {
          kind: 'draft' as const,
          id: row.id,
          workflowId: row.workflow_id,
          userId: row.workspace_id,
          userEmail: row.email ?? '',
          startedBy: null,
          starterId: row.created_by,
          rowTraceId: row.trace_id,
          projectId: null,
          projectName: row.draft_name,
          item: `${model} on ${row.image_name}${row.prompt && row.model_id !== 'render-enhance' ? `: ${shortPrompt(row.prompt)}` : ''}`,
          state,
          progress,
          message,
          error,
          startedAt,
          finishedAt,
          durationMs: durationOf(startedAt, finishedAt, state, now),
          cost: 0,
          canCancel: false,
          canRetry: false,
        };
      }),
    );
  }

  /** The Temporal client, connected on first use and at most once per listing; null when Temporal cannot be reached. */
  private lazyClient(): () => Promise<Client | null> {
    let client: Promise<Client | null> | null = null;
    return () => (client ??= this.deps.client().catch(() => null));
  }

  /**
   * A job row's state, or, while the row says it runs, its workflow's live answer (progress never goes back while it
   * processes); the row's when the workflow does not answer.
   */
  private async rowOrLiveState<L extends { status: string; progress: number; message: string; error: string | null }>(
    row: Pick<ExportRow, 'workflow_id' | 'status' | 'progress' | 'message' | 'error'>,
    client: () => Promise<Client | null>,
    stateQuery: QueryDefinition<L, []>,
  ): Promise<{ state: ActivityJobState; progress: number; message: string; error: string | null }> {
    const stored = { state: row.status, progress: row.progress, message: row.message ?? '', error: row.error };
    if (!isRunningJobState(row.status)) return stored;
    const live = await this.query(client, row.workflow_id, stateQuery);
    if (!live) return stored;
    return {
      state: live.status as ActivityJobState,
      progress: live.status === 'processing' ? Math.max(live.progress, row.progress) : live.progress,
      message: live.message,
      error: live.error,
    };
  }

  private query<T>(client: Client | (() => Promise<Client | null>), workflowId: string, query: QueryDefinition<T, []>): Promise<T | null> {
    return queryWorkflowOrNull(client, workflowId, query, { timeoutMs: this.queryTimeoutMs, logger: this.deps.logger, what: 'job' });
  }

}
