/**
 * Which projects' library content changed, heard from PostgreSQL: every insert, update or delete of a listed row
 * notifies `rs_content_changed` with its project's id on commit, '*' for a TRUNCATE (database triggers,
 * db/migrations/20261128000300_content_listing_notify.ts), whichever process or code path made it. The content
 * library (services/content/library.ts) drops a project's reused listing and first pages on the note, which keeps
 * its reuse exact across API processes the way the noted caches are (services/platform/notedCache.ts explains the
 * window between a commit and its note, and the barrier that closes it: `caughtUp`).
 */
import type { Logger } from '../../config/logger';
import { createListenBarrier } from '../platform/listenBarrier';
import { createListenConnection } from '../platform/listenConnection';

export const CONTENT_CHANGED_CHANNEL = 'rs_content_changed';

export interface ContentChangesOptions {
  databaseUrl: string;
  logger: Pick<Logger, 'warn'>;
  /** wait before reconnecting a lost LISTEN connection (default 1 s) */
  reconnectMs?: number;
}

export interface ContentChanges {
  /**
   * Calls `onChange` with the project id of every change (lower-case, as PostgreSQL prints a uuid), and with '*' when
   * every project must be taken as changed (a TRUNCATE, the LISTEN connection lost or re-opened). Returns the unsubscribe.
   */
  subscribe: (onChange: (projectId: string) => void) => () => void;
  /**
   * True once every note of a change committed before the call has been handed to the subscribers; false while the
   * LISTEN connection is down, when nothing held in memory may be answered.
   */
  caughtUp: () => Promise<boolean>;
  /** Whether the LISTEN connection is up right now: a read made while it is down is not kept. */
  listening: () => boolean;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export function createContentChanges(options: ContentChangesOptions): ContentChanges {
  const subscribers = new Set<(projectId: string) => void>();
  const tell = (projectId: string) => {
    for (const onChange of subscribers) onChange(projectId);
  };
  const listen = createListenConnection({
    databaseUrl: options.databaseUrl,
    channel: CONTENT_CHANGED_CHANNEL,
    name: 'content listing cache',
    readsMeanwhile: 'listings',
    logger: options.logger,
    onNote: tell,
    onReset: () => tell('*'),
    reconnectMs: options.reconnectMs,
  });
  const barrier = createListenBarrier(listen, 'content listing cache');
  return {
    subscribe(onChange) {
      subscribers.add(onChange);
      return () => subscribers.delete(onChange);
    },
    async caughtUp() {
      const c = listen.client();
      if (!c) return false;
      try {
        await barrier(c);
      } catch {
        return false;
      }
      return listen.client() === c;
    },
    listening: listen.listening,
    ready: listen.ready,
    close: listen.close,
  };
}
