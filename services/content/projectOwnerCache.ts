/**
 * Which workspace (account) owns each project, kept in the API process: `projects.workspace_id`, which names the owning
 * workspace (DESIGN.md "Teams (workspaces)"; a personal workspace's id is its owner's user id). The ownership check the
 * content listing makes on every request (its reused listings included) and the workspace a route's project names
 * (api/workspace.ts) come from here rather than from a pooled database query per request: under load that one indexed
 * read was a quarter of the API's CPU and much of PostgreSQL's.
 *
 * Exactness: a project's removal (its own delete, its workspace's cascade, a truncate) or a change of its id or owning
 * workspace notifies `rs_projects_changed` with the project's id on commit (database triggers,
 * db/migrations/20261126000100_project_owner_notify.ts), whichever process or code path made it; the noted cache
 * (services/platform/notedCache.ts, which explains the barrier that closes the window between a commit and its note) drops
 * that entry, so a lookup never names a workspace for a project that was removed or handed over before the lookup began.
 *
 * "No such project" is never kept: a new project needs no note, and an unknown id is read each time.
 */
import type { Knex } from 'knex';
import { createNotedCache, type NotedCacheSettings, type NotedCacheStats } from '../platform/notedCache';

export const PROJECTS_CHANGED_CHANNEL = 'rs_projects_changed';

export type ProjectOwnerCacheOptions = NotedCacheSettings;

export interface ProjectOwnerCache {
  /**
   * The id of the workspace that owns the project (`projects.workspace_id`: the account, which is the workspace; for a
   * personal workspace that is its owner's user id), as PostgreSQL prints a uuid (lower-case), or null when there is
   * no such project. `projectId` must be a uuid (callers reject anything else first). It says nothing about who may
   * use the project: membership and role are services/workspaces/access.ts's.
   */
  ownerOf: (db: Knex, projectId: string) => Promise<string | null>;
  stats: () => NotedCacheStats;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

async function readOwner(db: Knex, projectId: string): Promise<string | null> {
  const row = await db('projects').where({ id: projectId }).first<{ workspace_id: string } | undefined>('workspace_id');
  return row?.workspace_id ?? null;
}

export function createProjectOwnerCache(options: ProjectOwnerCacheOptions): ProjectOwnerCache {
  const cache = createNotedCache<string | null>({
    ...options,
    channel: PROJECTS_CHANGED_CHANNEL,
    name: 'project owner cache',
    readsMeanwhile: 'project owners',
    keeps: (owner) => owner !== null,
  });
  const { stats, ready, close } = cache;
  return {
    // the key as the notes spell it (OLD.id::text is lower-case)
    ownerOf: (db, projectId) => cache.get(projectId.toLowerCase(), () => readOwner(db, projectId)),
    stats,
    ready,
    close,
  };
}
