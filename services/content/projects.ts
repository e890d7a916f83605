import type { TransactionOrKnex } from 'objection';
import type { Logger } from '../../config/logger';
import { Clip, CompiledVideo, GeneratedContent, Image, PendingApproval, Project, Render } from '../../db/models';
import { PICTURE_ORIGINAL_MAX_BYTES } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import type { ProjectView } from '../../domain/projects';
import type { Storage } from '../../storage';
import { isBucket } from '../../storage';
import { removeStoredFiles, signedPreviewOf, signedThumbnailOf, signedUrlOf, storedFilesOf, type StoredFileRef } from './storedFiles';
import { releaseReservation } from '../billing/credits';
import { publishEvent } from '../platform/events';
import type { ProjectOwnerCache } from './projectOwnerCache';

export const PROJECT_NAME_MAX = 200;
export const PROJECT_ADDRESS_MAX = 500;

export interface ProjectChanges {
  name?: string;
  address?: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class ProjectNotFoundError extends DomainError {
  constructor() {
    super(404, 'PROJECT_NOT_FOUND', 'Project not found');
  }
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new DomainError(400, 'VALIDATION_ERROR', 'Project name is required');
  if (trimmed.length > PROJECT_NAME_MAX) throw new DomainError(400, 'VALIDATION_ERROR', `Project name must be at most ${PROJECT_NAME_MAX} characters`);
  return trimmed;
}

function cleanAddress(address: string | null | undefined): string | null {
  const trimmed = address?.trim() ?? '';
  if (trimmed.length > PROJECT_ADDRESS_MAX) throw new DomainError(400, 'VALIDATION_ERROR', `Address must be at most ${PROJECT_ADDRESS_MAX} characters`);
  return trimmed || null;
}

/** Every file a project's rows point at, so deleting the project leaves nothing on disk. */
async function projectFiles(projectIds: readonly string[], trx: TransactionOrKnex): Promise<StoredFileRef[]> {
  const columns = ['storage_bucket', 'storage_path', 'thumbnail_path', 'file_url'] as const;
  // one after another: a transaction is one connection
  const renders = await Render.query(trx).whereIn('project_id', projectIds).select(...columns, 'preview_path');
  const images = await Image.query(trx).whereIn('project_id', projectIds).select(...columns);
  const clips = await Clip.query(trx).whereIn('project_id', projectIds).select(...columns);
  const videos = await CompiledVideo.query(trx).whereIn('project_id', projectIds).select(...columns);
  const generated = await GeneratedContent.query(trx).whereIn('project_id', projectIds).select('storage_bucket', 'storage_path', 'file_url');
  const approvals = await PendingApproval.query(trx)
    .whereIn('project_id', projectIds)
    .select('original_bucket', 'original_path', 'watermarked_bucket', 'watermarked_path', 'thumbnail_path');
  const refs: StoredFileRef[] = [...renders, ...images, ...clips, ...videos, ...generated].flatMap((row) => storedFilesOf(row));
  for (const a of approvals) {
    // an approval's thumbnail lives beside its original (domain/approvals.ts)
    if (isBucket(a.originalBucket)) {
      refs.push({ bucket: a.originalBucket, path: a.originalPath });
      if (a.thumbnailPath) refs.push({ bucket: a.originalBucket, path: a.thumbnailPath });
    }
    if (isBucket(a.watermarkedBucket)) refs.push({ bucket: a.watermarkedBucket, path: a.watermarkedPath });
  }
  return refs;
}

export interface ProjectServiceDeps {
  storage: Storage;
  logger?: Logger;
  /** Projects' owning workspaces kept in this process (services/content/projectOwnerCache.ts) for assertOwned; without it each check is read. */
  owners?: ProjectOwnerCache;
}

/**
 * Projects of one account, which is a workspace (query builders name snake_case columns; rows come back camelCase):
 * every call is scoped to the owning workspace (`workspaceId` is the workspace id, `projects.workspace_id`), and another
 * workspace's project is simply not found. Who may call is decided before (services/workspaces/access.ts).
 */
export class ProjectService {
  constructor(private readonly deps: ProjectServiceDeps) {}

  /** The account's (workspace's) project or ProjectNotFoundError (also for ids that are not UUIDs). */
  async findOwned(workspaceId: string, projectId: string): Promise<Project> {
    if (!UUID.test(projectId)) throw new ProjectNotFoundError();
    const project = await Project.query().findOne({ id: projectId, workspace_id: workspaceId });
    if (!project) throw new ProjectNotFoundError();
    return project;
  }

  /**
   * Throws ProjectNotFoundError unless the account (workspace) owns the project, like findOwned, as one indexed read of the id with
   * no model built: what the content listing checks on every request, its cached answers included. With `owners` the
   * owner comes from that exact in-process cache instead (no query while it holds the project).
   */
  async assertOwned(workspaceId: string, projectId: string): Promise<void> {
    if (!UUID.test(projectId)) throw new ProjectNotFoundError();
    const { owners } = this.deps;
    if (owners) {
      const owner = await owners.ownerOf(Project.knex(), projectId);
      // uuid equality, as the query compares: case does not matter
      if (owner === null || owner.toLowerCase() !== workspaceId.toLowerCase()) throw new ProjectNotFoundError();
      return;
    }
    const owned = await Project.knex()(Project.tableName).where({ id: projectId, workspace_id: workspaceId }).first('id');
    if (!owned) throw new ProjectNotFoundError();
  }

  async get(workspaceId: string, projectId: string): Promise<ProjectView> {
    const project = await this.findOwned(workspaceId, projectId);
    const [view] = await this.withThumbnails([project]);
    return view;
  }

  /** Newest first, each with the oldest render as its thumbnail. */
  async list(workspaceId: string): Promise<ProjectView[]> {
    const projects = await Project.query().where({ workspace_id: workspaceId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return this.withThumbnails(projects);
  }

  async create(workspaceId: string, input: { name: string; address?: string | null }): Promise<ProjectView> {
    const project = await Project.query().insertAndFetch({ workspaceId, name: cleanName(input.name), address: cleanAddress(input.address) });
    return this.toView(project, null);
  }

  async update(workspaceId: string, projectId: string, changes: ProjectChanges): Promise<ProjectView> {
    const project = await this.findOwned(workspaceId, projectId);
    const patch: Partial<Pick<Project, 'name' | 'address'>> = {};
    if (changes.name !== undefined) patch.name = cleanName(changes.name);
    if (changes.address !== undefined) patch.address = cleanAddress(changes.address);
    const updated = Object.keys(patch).length ? await project.$query().patchAndFetch(patch) : project;
    const [view] = await this.withThumbnails([updated]);
    return view;
  }

  /**
   * Deletes the user's projects, all or none: an id that is not the user's project fails the whole call with 404.
   * Rows go in one transaction (content rows cascade), then the files they pointed at are removed. `actorId`, the
   * member who deletes, is recorded on the releases of the pending items' reservations.
   */
  async remove(workspaceId: string, projectIds: readonly string[], acting: { actorId?: string } = {}): Promise<number> {
    const ids = [...new Set(projectIds)];
    if (ids.length === 0) return 0;
    if (!ids.every((id) => UUID.test(id))) throw new ProjectNotFoundError();
    const files = await Project.transaction(async (trx) => {
      // the profile first: every writer of credits and approvals locks in the order profile, approval, reservation
      await trx('profiles').where({ id: workspaceId }).forUpdate().first('id');
      const owned = await Project.query(trx).whereIn('id', ids).where({ workspace_id: workspaceId }).forUpdate().select('id');
      if (owned.length !== ids.length) throw new ProjectNotFoundError();
      const refs = await projectFiles(ids, trx);
      // pending items go with their project: give back the credits they hold (their approval workflows then find no row)
      const pending = await PendingApproval.query(trx)
        .whereIn('project_id', ids)
        .where({ status: 'pending' })
        .whereNotNull('reservation_id')
        .forUpdate()
        .select('reservation_id');
      for (const { reservationId } of pending) {
        if (reservationId) await releaseReservation(trx, { reservationId, reason: 'project deleted', ...(acting.actorId ? { actorId: acting.actorId } : {}) });
      }
      await Project.query(trx).whereIn('id', ids).delete();
      for (const id of ids) await publishEvent(trx, workspaceId, { kind: 'content', change: 'removed', contentKind: 'project', projectId: id });
      return refs;
    });
    await removeStoredFiles(this.deps.storage.objects, files, this.deps.logger);
    return ids.length;
  }

  private async withThumbnails(projects: Project[]): Promise<ProjectView[]> {
    if (projects.length === 0) return [];
    const oldest = await Render.query()
      .distinctOn('project_id')
      .whereIn('project_id', projects.map((p) => p.id))
      .orderBy([{ column: 'project_id' }, { column: 'created_at', order: 'asc' }, { column: 'id', order: 'asc' }])
      .select('project_id', 'storage_bucket', 'storage_path', 'thumbnail_path', 'preview_path', 'file_url', 'file_size');
    // the original only while it is small: a large one waits for its derived copies (the card shows no picture meanwhile)
    const picture = (r: Render): string | null =>
      signedThumbnailOf(this.deps.storage, r) ?? signedPreviewOf(this.deps.storage, r) ?? (Number(r.fileSize) <= PICTURE_ORIGINAL_MAX_BYTES ? signedUrlOf(this.deps.storage, r) : null);
    const byProject = new Map(oldest.map((r) => [r.projectId, picture(r)]));
    return projects.map((p) => this.toView(p, byProject.get(p.id) ?? null));
  }

  private toView(p: Project, thumbnail: string | null): ProjectView {
    return {
      id: p.id,
      user_id: p.workspaceId,
      name: p.name,
      address: p.address,
      created_at: new Date(p.createdAt).toISOString(),
      updated_at: new Date(p.updatedAt).toISOString(),
      thumbnail,
    };
  }
}
