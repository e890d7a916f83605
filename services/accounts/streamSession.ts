/**
 * What keeps an event stream (/api/events) within its session's authority: the stream is open only while the
 * session it was opened with is. It ends when the session is deleted (sign-out, a password change that ends the
 * other sessions, an operator revoking it, account deletion) or its expiry passes.
 *
 * The stream learns of deletions from rs_auth_changed (the hub's LISTEN connection hands each note to the user's
 * streams, services/platform/events.ts), and re-reads its session then; a timer set to the session's expiry covers
 * the end no one announces. Teams: a stream carries one workspace's events, and `readStreamSession` checks the
 * user's membership of it too; removing a member (or deleting the workspace) notifies rs_auth_changed with the
 * member's user id in the same transaction (services/workspaces/members.ts), so a removal ends the stream the same way.
 */
import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** Longest setTimeout delay Node keeps (about 24.8 days); a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;
/** When the database still calls the session valid at its expiry (clocks differ), it is read again this much later. */
const EXPIRY_RECHECK_MS = 1000;

/**
 * The expiry of the user's session `sessionId` while it is valid and the user is still a member of `workspaceId`
 * (when given), else null (ended, expired, another user's, or no longer a member). The one place a stream's
 * authority is decided. Every role may read a workspace's events, so membership is all it takes.
 */
export async function readStreamSession(db: Db, userId: string, sessionId: string, workspaceId?: string): Promise<Date | null> {
  const query = db('sessions')
    .join('users', 'users.id', 'sessions.user_id')
    .where('sessions.id', sessionId)
    .andWhere('sessions.user_id', userId)
    .andWhere('sessions.expires_at', '>', db.fn.now());
  if (workspaceId !== undefined) {
    query.whereExists(db('workspace_members').where('workspace_members.workspace_id', workspaceId).andWhereRaw('workspace_members.user_id = sessions.user_id'));
  }
  const row = await query.first<{ expires_at: Date } | undefined>('sessions.expires_at');
  return row ? new Date(row.expires_at) : null;
}

export interface StreamSessionWatchOptions {
  knex: Knex;
  userId: string;
  sessionId: string;
  /** The workspace whose events the stream carries: the stream ends when the user stops being its member. */
  workspaceId?: string;
  /** The session's expiry as read when the stream opened. */
  expiresAt: Date;
  /** The session has ended: the stream must end. Called once. */
  onEnded: () => void;
  /** A re-read failed: the stream ends too (its reconnect is checked like any request). Called once. */
  onFailed: (err: unknown) => void;
  now?: () => number;
}

export interface StreamSessionWatch {
  /** Reads the session again (after an rs_auth_changed note for the user); concurrent calls fold into one read. */
  recheck: () => void;
  stop: () => void;
}

/** Watches one stream's session: a timer to its expiry, and a re-read whenever `recheck` is called. */
export function watchStreamSession(options: StreamSessionWatchOptions): StreamSessionWatch {
  const now = options.now ?? Date.now;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let reading = false;
  let readAgain = false;

  const arm = (expiresAt: Date, minimumMs = 0) => {
    if (timer) clearTimeout(timer);
    const delay = Math.min(Math.max(expiresAt.getTime() - now(), minimumMs), MAX_TIMER_MS);
    timer = setTimeout(recheck, delay);
    timer.unref();
  };

  const end = (report: () => void) => {
    if (stopped) return;
    stop();
    report();
  };

  function recheck(): void {
    if (stopped) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    readStreamSession(options.knex, options.userId, options.sessionId, options.workspaceId).then(
      (expiresAt) => {
        reading = false;
        if (stopped) return;
        if (!expiresAt) return end(options.onEnded);
        // still valid: a session whose expiry the database has not reached yet is read again a little later
        arm(expiresAt, expiresAt.getTime() <= now() ? EXPIRY_RECHECK_MS : 0);
        if (readAgain) {
          readAgain = false;
          recheck();
        }
      },
      (err: unknown) => {
        reading = false;
        end(() => options.onFailed(err));
      },
    );
  }

  function stop(): void {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
  }

  arm(options.expiresAt);
  return { recheck, stop };
}
