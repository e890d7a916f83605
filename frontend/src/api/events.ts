import { STREAM_READY_EVENT, STREAM_SESSION_ENDED_EVENT, STREAM_WORKSPACE_ENDED_EVENT, type DeliveredEvent, type RealtimeEventKind } from '../../../domain/events';
import { WORKSPACE_PARAM } from '../../../domain/workspaceRoles';

export type { DeliveredEvent } from '../../../domain/events';

const EVENT_KINDS: readonly RealtimeEventKind[] = ['job', 'approval', 'credits', 'content', 'workspace', 'webhook', 'comments', 'notification'];
/** Waits before reconnecting after the stream failed: 1 s, then longer, up to 30 s; a stream that opens resets it. */
export const RECONNECT_BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000] as const;

export function reconnectDelay(attempt: number): number {
  const base = RECONNECT_BACKOFF_MS[Math.min(attempt, RECONNECT_BACKOFF_MS.length - 1)];
  // a little jitter so many tabs do not come back in step after a restart
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export interface EventStreamHandlers {
  /** An event, with its stream id (the stream resumes after it). */
  onEvent: (event: DeliveredEvent, id: string | null) => void;
  /** The stream is open; `reconnected` after an earlier one had failed. */
  onOpen: (reconnected: boolean) => void;
  /** The stream failed; a reconnect is scheduled. */
  onDown: () => void;
  /**
   * The server ended the stream because its session ended (signed out elsewhere, expired, revoked, a password
   * change, account deletion). No reconnect is scheduled: the app is signed out.
   */
  onSessionEnded: () => void;
  /**
   * The server ended the stream because the user is no longer a member of its workspace (removed, or the workspace
   * deleted). No reconnect is scheduled: the app reads its workspaces again and leaves this one.
   */
  onWorkspaceEnded: () => void;
  /**
   * A connect failed before the stream opened. EventSource does not tell why (a 401 looks like a network
   * failure), so the app checks its session; a reconnect is scheduled either way.
   */
  onRefused: () => void;
}

/**
 * The stream's address: the workspace's events (`?workspaceId=`, none for the personal workspace, the server's
 * default; EventSource sends no custom header) from after `lastEventId`.
 */
export function eventStreamUrl(workspaceId: string | null, lastEventId: string | null): string {
  const params = new URLSearchParams();
  if (workspaceId) params.set(WORKSPACE_PARAM, workspaceId);
  if (lastEventId) params.set('lastEventId', lastEventId);
  const query = params.toString();
  return query ? `/api/events?${query}` : '/api/events';
}

/** A running subscription: `close` ends it; `retryNow` reconnects at once instead of after the backoff. */
export interface EventSubscription {
  close: () => void;
  retryNow: () => void;
}

/**
 * The signed-in user's event stream (/api/events) in one workspace (null: the personal one). The app reconnects
 * itself, with backoff, instead of EventSource's fixed retry, and passes the last event id so the server replays
 * what was missed (`fromEventId`: the first connect already resumes after it). Another workspace is another
 * subscription. One tab per browser holds it (api/sharedEvents.ts).
 */
export function subscribeToEvents(workspaceId: string | null, handlers: EventStreamHandlers, fromEventId: string | null = null): EventSubscription {
  let source: EventSource | null = null;
  let lastEventId: string | null = fromEventId;
  let attempt = 0;
  let failedBefore = false;
  let retryTimer: number | undefined;
  let stopped = false;

  const connect = () => {
    if (stopped) return;
    const current = new EventSource(eventStreamUrl(workspaceId, lastEventId));
    source = current;
    let opened = false;
    current.addEventListener(STREAM_READY_EVENT, () => {
      opened = true;
      attempt = 0;
      handlers.onOpen(failedBefore);
    });
    current.addEventListener(STREAM_SESSION_ENDED_EVENT, () => {
      if (source !== current) return;
      current.close();
      source = null;
      stopped = true;
      handlers.onSessionEnded();
    });
    current.addEventListener(STREAM_WORKSPACE_ENDED_EVENT, () => {
      if (source !== current) return;
      current.close();
      source = null;
      stopped = true;
      handlers.onWorkspaceEnded();
    });
    for (const kind of EVENT_KINDS) {
      current.addEventListener(kind, (message: MessageEvent<string>) => {
        if (message.lastEventId) lastEventId = message.lastEventId;
        try {
          handlers.onEvent(JSON.parse(message.data) as DeliveredEvent, message.lastEventId || null);
        } catch (error) {
          console.warn('unreadable realtime event', error);
        }
      });
    }
    current.onerror = () => {
      if (source !== current) return;
      current.close();
      source = null;
      failedBefore = true;
      handlers.onDown();
      if (!opened) handlers.onRefused();
      if (stopped) return;
      retryTimer = window.setTimeout(connect, reconnectDelay(attempt));
      attempt += 1;
    };
  };

  connect();
  return {
    close: () => {
      stopped = true;
      window.clearTimeout(retryTimer);
      source?.close();
      source = null;
    },
    retryNow: () => {
      // only while waiting to reconnect: an open or opening stream is left alone
      if (stopped || source) return;
      window.clearTimeout(retryTimer);
      connect();
    },
  };
}
