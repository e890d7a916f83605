/**
 * The realtime channel (DESIGN.md "Live updates"): the code that changes an account's state publishes a small event
 * with `publishEvent`; every API process LISTENs on one PostgreSQL connection and hands each event to the event
 * streams (/api/events) of that account open in the process. The account is the workspace (DESIGN.md "Teams"):
 * every member's stream of a workspace gets its events.
 *
 * The same connection LISTENs on rs_auth_changed (services/platform/notifyChannels.ts), so each stream hears of its
 * user's session changes from whichever process made them, with no gap: a stream is open only while that connection
 * is up. It also holds the advisory locks that bound the streams per user (services/platform/eventStreamSlots.ts).
 *
 * An event is a row of `user_events` plus a NOTIFY, written by one statement. Published with the transaction of
 * the change it announces, it is delivered only if that transaction commits, and never before. The row is what a
 * reconnecting stream replays after its Last-Event-ID; rows older than an hour are pruned.
 */
import type { Knex } from 'knex';
import pg from 'pg';
import { logger as rootLogger, type Logger } from '../../config/logger';
import { UserEvent } from '../../db/models/UserEvent';
import type { DeliveredEvent, RealtimeEvent } from '../../domain/events';
import { createStreamSlots, EventStreamLimitReached, type StreamSlots } from './eventStreamSlots';
import { AUTH_CHANGED_CHANNEL } from './notifyChannels';

export { EventStreamLimitReached };

export type Db = Knex | Knex.Transaction;

export const EVENTS_CHANNEL = 'rs_events';
/**
 * A workspace membership was removed or changed: '<workspace id>:<user id>' ('*' for all), sent on commit by the
 * membership table's trigger and by services/workspaces/members.ts. The user's streams re-check their membership.
 */
export const MEMBERS_CHANGED_CHANNEL = 'rs_members_changed';
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; the envelope (id, user id) needs some room. */
export const MAX_EVENT_BYTES = 7000;
/** Replayed events stay this long (a browser offline for longer re-reads everything anyway). */
export const EVENT_RETENTION_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** The most events one reconnect replays; past that the browser's full re-read on connect covers the rest. */
export const REPLAY_LIMIT = 500;

interface Notification {
  id: string;
  userId: string;
  event: RealtimeEvent;
}

/**
 * Records the event and notifies every API process, in one statement: inside `db`'s transaction when it is one
 * (delivered on commit, dropped on rollback), on its own otherwise.
 */
export async function publishEvent(db: Db, userId: string, event: RealtimeEvent): Promise<void> {
  const payload = JSON.stringify(event);
  if (Buffer.byteLength(payload) > MAX_EVENT_BYTES) throw new Error(`realtime event too large (${Buffer.byteLength(payload)} bytes): ${event.kind}`);
  await db.raw(
    `with e as (insert into user_events (workspace_id, payload) values (?, ?::jsonb) returning id, workspace_id, payload)
     select pg_notify(?, json_build_object('id', e.id::text, 'userId', e.workspace_id, 'event', e.payload)::text) from e`,
    [userId, payload, EVENTS_CHANNEL],
  );
}

/**
 * For progress and other notes published outside a transaction, where a lost event must not fail the work:
 * the stream's fallback polling and the next event cover it.
 */
export function publishEventQuietly(db: Db, userId: string, event: RealtimeEvent, logger: Pick<Logger, 'warn'> = rootLogger): Promise<void> {
  return publishEvent(db, userId, event).catch((err: unknown) => logger.warn({ err, kind: event.kind }, 'could not publish realtime event'));
}

/** The user's events after `afterId`, oldest first (what a reconnecting stream missed). */
export async function replayEvents(db: Db, userId: string, afterId: string): Promise<DeliveredEvent[]> {
  const rows = await UserEvent.query(db).where({ workspace_id: userId }).andWhere('id', '>', afterId).orderBy('id').limit(REPLAY_LIMIT).select('id', 'payload');
  return rows.map((r) => ({ ...r.payload, id: String(r.id) }));
}

export async function pruneEvents(db: Db, olderThanMs = EVENT_RETENTION_MS): Promise<number> {
  return UserEvent.query(db).where('created_at', '<', new Date(Date.now() - olderThanMs)).delete();
}

export interface EventSubscriber {
  onEvent: (event: DeliveredEvent) => void;
  /** The hub stopped (shutdown, or its LISTEN connection broke): the stream ends and the browser reconnects. */
  onClose: () => void;
  /** Something that may end the user's sessions or memberships changed (rs_auth_changed, rs_members_changed): the stream re-checks its own. */
  onAuthChange?: () => void;
}

export interface SubscribeOptions {
  /**
   * The account (workspace) whose events the stream carries; the user's own (personal workspace, whose id is the
   * user's id) when absent. Events are published per account (`publishEvent(db, accountId, ...)`), so every member's
   * stream of a team workspace gets them; the user's session notes (rs_auth_changed) still reach it by the user id.
   */
  accountId?: string;
  /**
   * The most streams the user may have open across every API process (EVENT_STREAMS_PER_ACCOUNT): past it the
   * subscribe rejects with EventStreamLimitReached. Unset: no limit.
   */
  maxStreamsPerUser?: number;
}

export interface EventHub {
  /**
   * Resolves once the process LISTENs, so nothing committed after it is missed; returns the unsubscribe. Rejects
   * with EventStreamLimitReached when the user already has `maxStreamsPerUser` streams open (over all workspaces).
   */
  subscribe: (userId: string, subscriber: EventSubscriber, options?: SubscribeOptions) => Promise<() => void>;
  /** Open streams in this process. */
  clientCount: () => number;
  /** Ends every stream and the LISTEN connection. */
  close: () => Promise<void>;
}

export interface EventHubOptions {
  databaseUrl: string;
  /** Replays read and pruning go through the pool; live delivery does not read tables. */
  knex: Knex;
  logger: Logger;
  /** How the LISTEN connection shows in pg_stat_activity (default 'render-studio events'). */
  applicationName?: string;
}

function parseNotification(payload: string | undefined): Notification | null {
  if (!payload) return null;
  try {
    const parsed = JSON.parse(payload) as Partial<Notification>;
    if (typeof parsed.id !== 'string' || typeof parsed.userId !== 'string' || typeof parsed.event !== 'object' || parsed.event === null) return null;
    return parsed as Notification;
  } catch {
    return null;
  }
}

/**
 * One LISTEN connection per API process, opened with the first stream and released with the last one. When the
 * connection breaks, every stream is ended: browsers reconnect with their Last-Event-ID and get what they missed
 * replayed, and the next stream opens a new connection.
 */
export function createEventHub(options: EventHubOptions): EventHub {
  const { logger } = options;
  // events are delivered by account (workspace), session notes by user: one stream is in one set of each
  const byAccount = new Map<string, Set<EventSubscriber>>();
  const byUser = new Map<string, Set<EventSubscriber>>();
  let client: pg.Client | null = null;
  let slots: StreamSlots | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let pruneTimer: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  /** Counts releases: a connect that a release overtook (the hub closed, or its last stream left) ends its client. */
  let releases = 0;

  const count = () => [...byUser.values()].reduce((n, set) => n + set.size, 0);

  const endAll = () => {
    const all = [...byUser.values()].flatMap((set) => [...set]);
    byUser.clear();
    byAccount.clear();
    for (const s of all) s.onClose();
  };

  const release = async (broken: boolean) => {
    releases += 1;
    const c = client;
    client = null;
    slots?.drop();
    slots = null;
    connecting = null;
    if (pruneTimer) clearInterval(pruneTimer);
    pruneTimer = null;
    if (broken) endAll();
    if (c) {
      c.removeAllListeners('notification');
      await c.end().catch(() => undefined);
    }
  };

  const prune = () => {
    pruneEvents(options.knex).catch((err: unknown) => logger.warn({ err }, 'could not prune realtime events'));
  };

  const connect = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const opening = releases;
      const c = new pg.Client({ connectionString: options.databaseUrl, application_name: options.applicationName ?? 'render-studio events', keepAlive: true });
      c.on('error', (err) => {
        if (client !== c) return;
        logger.warn({ err }, 'realtime LISTEN connection lost; streams end and reconnect');
        void release(true);
      });
      c.on('end', () => {
        if (client !== c) return;
        logger.warn('realtime LISTEN connection ended; streams end and reconnect');
        void release(true);
      });
      c.on('notification', (msg) => {
        if (msg.channel === AUTH_CHANGED_CHANNEL) {
          for (const s of byUser.get(msg.payload ?? '') ?? []) s.onAuthChange?.();
          return;
        }
        if (msg.channel === MEMBERS_CHANGED_CHANNEL) {
          const payload = msg.payload ?? '*';
          const member = payload === '*' ? null : payload.slice(payload.indexOf(':') + 1);
          const affected = member === null ? [...byUser.values()].flatMap((set) => [...set]) : [...(byUser.get(member) ?? [])];
          for (const s of affected) s.onAuthChange?.();
          return;
        }
        if (msg.channel !== EVENTS_CHANNEL) return;
        const note = parseNotification(msg.payload);
        if (!note) {
          logger.warn({ payload: msg.payload?.slice(0, 200) }, 'ignored a malformed realtime notification');
          return;
        }
        // the notification's `userId` is the account the event was published for (user_events.workspace_id)
        const subscribers = byAccount.get(note.userId);
        if (!subscribers) return;
        const delivered: DeliveredEvent = { ...note.event, id: note.id };
        for (const s of subscribers) s.onEvent(delivered);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${EVENTS_CHANNEL}`);
        await c.query(`LISTEN ${AUTH_CHANGED_CHANNEL}`);
        await c.query(`LISTEN ${MEMBERS_CHANGED_CHANNEL}`);
      } catch (err) {
        if (releases === opening) connecting = null;
        await c.end().catch(() => undefined);
        throw err;
      }
      if (closed || releases !== opening) {
        // released while it opened: nobody would end this connection, and it would keep the process alive
        await c.end().catch(() => undefined);
        throw new Error(closed ? 'event hub closed' : 'the realtime LISTEN connection was released while it opened');
      }
      client = c;
      slots = createStreamSlots(c, (err) => logger.warn({ err }, 'could not give back an event stream slot'));
      pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
      pruneTimer.unref();
      prune();
      return c;
    })();
    return connecting;
  };

  return {
    async subscribe(userId, subscriber, options = {}) {
      if (closed) throw new Error('event hub closed');
      const accountId = options.accountId ?? userId;
      const add = (map: Map<string, Set<EventSubscriber>>, key: string) => {
        let set = map.get(key);
        if (!set) map.set(key, (set = new Set()));
        set.add(subscriber);
      };
      const remove = (map: Map<string, Set<EventSubscriber>>, key: string): boolean => {
        const current = map.get(key);
        if (!current?.delete(subscriber)) return false;
        if (current.size === 0) map.delete(key);
        return true;
      };
      add(byUser, userId);
      add(byAccount, accountId);
      let slot: { of: StreamSlots; n: number } | null = null;
      const unsubscribe = () => {
        remove(byAccount, accountId);
        if (!remove(byUser, userId)) return;
        if (slot) slot.of.give(userId, slot.n);
        if (byUser.size === 0) void release(false);
      };
      try {
        await connect();
        const limit = options.maxStreamsPerUser;
        if (limit !== undefined) {
          const of = slots;
          if (!of) throw new Error('the realtime LISTEN connection is gone');
          const n = await of.take(userId, limit);
          if (n === null) throw new EventStreamLimitReached(limit);
          slot = { of, n };
        }
        // ended meanwhile (the connection broke, or the hub closed)
        if (!byUser.get(userId)?.has(subscriber)) {
          slot?.of.give(userId, slot.n);
          throw new Error('the realtime LISTEN connection is gone');
        }
      } catch (err) {
        unsubscribe();
        throw err;
      }
      return unsubscribe;
    },
    clientCount: count,
    async close() {
      closed = true;
      endAll();
      await release(false);
    },
  };
}
