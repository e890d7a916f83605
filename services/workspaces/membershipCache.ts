/**
 * Each (workspace, user) role, kept in the API process, so the access check every request makes (api/workspace.ts)
 * does not spend a pooled database query per request.
 *
 * Exactness: a membership's removal or role change, by any process or code path, notifies `rs_members_changed` with
 * '<workspace id>:<user id>' on commit (db/migrations/20261127000710_workspace_members_notify.ts); the noted cache
 * (services/platform/notedCache.ts explains the barrier that closes the window between a commit and its note) drops
 * that entry, so a lookup never answers a role that was removed or changed before the lookup began: a removed
 * member's very next request is refused.
 *
 * "Not a member" is never kept: a new membership needs no note, and a non-member is read each time.
 */
import type { Knex } from 'knex';
import { isWorkspaceRole, type WorkspaceRole } from '../../domain/workspaceRoles';
import { createNotedCache, type NotedCacheSettings, type NotedCacheStats } from '../platform/notedCache';

export const MEMBERS_CHANGED_CHANNEL = 'rs_members_changed';

export interface MembershipCache {
  /** The user's role in the workspace, or null. Both ids must be uuids (callers check first). */
  roleOf: (db: Knex, workspaceId: string, userId: string) => Promise<WorkspaceRole | null>;
  stats: () => NotedCacheStats;
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export async function readRole(db: Knex | Knex.Transaction, workspaceId: string, userId: string): Promise<WorkspaceRole | null> {
  const row = await db('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first<{ role: string } | undefined>('role');
  return row && isWorkspaceRole(row.role) ? row.role : null;
}

export function createMembershipCache(options: NotedCacheSettings): MembershipCache {
  const cache = createNotedCache<WorkspaceRole | null>({
    ...options,
    channel: MEMBERS_CHANGED_CHANNEL,
    name: 'workspace membership cache',
    readsMeanwhile: 'memberships',
    keeps: (role) => role !== null,
  });
  const { stats, ready, close } = cache;
  return {
    // the key as the notes spell it (uuid::text is lower-case)
    roleOf: (db, workspaceId, userId) => {
      const key = `${workspaceId.toLowerCase()}:${userId.toLowerCase()}`;
      return cache.get(key, () => readRole(db, workspaceId, userId));
    },
    stats,
    ready,
    close,
  };
}
