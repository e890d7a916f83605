/**
 * Notifications (issue 42, DESIGN.md "Review"): one row per person and event (a mention, an approval needed, a
 * decision or comment on an item they started, a reply to their comment), recorded in the transaction of what caused
 * it, for the workspace's current members only and never for the person who caused it; their open apps are told
 * over the event stream and the bell re-reads. Read and marked read per person and workspace.
 */
import type { Knex } from 'knex';
import { NOTIFICATIONS_LISTED, type NotificationKind, type NotificationView } from '../../domain/notifications';
import { publishEvent } from '../platform/events';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NewNotification {
  workspaceId: string;
  /** who is told (people who are not members of the workspace, and the one who caused it, are left out) */
  recipients: ReadonlyArray<string | null | undefined>;
  kind: NotificationKind;
  item: { kind: string; id: string } | null;
  projectId?: string | null;
  threadId?: string | null;
  /** who caused it; null for the system */
  by: string | null;
  text: string;
}

/** Records the notifications inside the caller's transaction; answers who was told. */
export async function notify(trx: Knex.Transaction, n: NewNotification): Promise<string[]> {
  const wanted = [...new Set(n.recipients.filter((id): id is string => typeof id === 'string'))].filter((id) => id !== n.by);
  if (wanted.length === 0) return [];
  const members = (await trx('workspace_members').where({ workspace_id: n.workspaceId }).whereIn('user_id', wanted).pluck('user_id')) as string[];
  if (members.length === 0) return [];
  await trx('notifications').insert(
    members.map((userId) => ({
      workspace_id: n.workspaceId,
      user_id: userId,
      kind: n.kind,
      item_kind: n.item?.kind ?? null,
      item_id: n.item?.id ?? null,
      project_id: n.projectId ?? null,
      thread_id: n.threadId ?? null,
      created_by: n.by,
      text: n.text,
    })),
  );
  await publishEvent(trx, n.workspaceId, { kind: 'notification', userIds: members });
  return members;
}

/** A person's name as notifications say it: their name, else their e-mail. */
export async function personName(db: Db, userId: string | null | undefined): Promise<string> {
  if (!userId) return 'Someone';
  const row = (await db('users as u').leftJoin('profiles as p', 'p.id', 'u.id').where('u.id', userId).first('u.email', 'p.name')) as { email: string; name: string | null } | undefined;
  return row ? row.name || row.email : 'Someone';
}

interface NotificationRow {
  id: string;
  kind: NotificationKind;
  item_kind: string | null;
  item_id: string | null;
  project_id: string | null;
  created_by: string | null;
  by_name: string | null;
  by_email: string | null;
  text: string;
  created_at: Date;
  read_at: Date | null;
}

/** The person's newest notifications in the workspace, and how many are unread. */
export async function listNotifications(db: Db, workspaceId: string, userId: string): Promise<{ notifications: NotificationView[]; unread: number }> {
  const rows = (await db('notifications as n')
    .leftJoin('users as u', 'u.id', 'n.created_by')
    .leftJoin('profiles as p', 'p.id', 'n.created_by')
    .where({ 'n.workspace_id': workspaceId, 'n.user_id': userId })
    .orderBy([
      { column: 'n.created_at', order: 'desc' },
      { column: 'n.id', order: 'desc' },
    ])
    .limit(NOTIFICATIONS_LISTED)
    .select('n.*', 'p.name as by_name', 'u.email as by_email')) as NotificationRow[];
  const [{ count }] = (await db('notifications').where({ workspace_id: workspaceId, user_id: userId }).whereNull('read_at').count({ count: '*' })) as Array<{ count: string }>;
  return {
    unread: Number(count),
    notifications: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      text: r.text,
      item: r.item_kind && r.item_id ? { kind: r.item_kind, id: r.item_id } : null,
      project_id: r.project_id,
      by: r.created_by ? { user_id: r.created_by, name: r.by_name || r.by_email || 'Someone' } : null,
      created_at: new Date(r.created_at).toISOString(),
      read: r.read_at !== null,
    })),
  };
}

/** Marks the person's notifications in the workspace read: the ones named, or all. Answers how many changed. */
export async function markNotificationsRead(db: Db, workspaceId: string, userId: string, ids?: readonly string[]): Promise<number> {
  const q = db('notifications').where({ workspace_id: workspaceId, user_id: userId }).whereNull('read_at');
  if (ids) {
    const valid = ids.filter((id) => UUID.test(id));
    if (valid.length === 0) return 0;
    q.whereIn('id', valid);
  }
  return q.update({ read_at: db.fn.now() });
}
