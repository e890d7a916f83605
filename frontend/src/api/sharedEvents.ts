import { subscribeToEvents, type DeliveredEvent, type EventStreamHandlers, type EventSubscription } from './events';

/**
 * One event stream per browser, shared by its tabs (DESIGN.md "Live updates"). A browser opens at most 6 HTTP/1.1
 * connections to one host, so a stream per tab froze the seventh tab; and the account's stream limit counts
 * browsers, not tabs, this way. The tabs of one account in one workspace elect a leader with the Web Locks API:
 * the tab holding the lock opens the stream and relays everything it hears over a BroadcastChannel; the others
 * wait for the lock. When the leader closes (or leaves the workspace), the lock passes to a waiting tab, which
 * opens the stream from the last event id it heard relayed, so the server replays what fell in between. A
 * browser without Web Locks or BroadcastChannel keeps a stream per tab.
 */

type Relay =
  | { type: 'event'; event: DeliveredEvent; id: string | null }
  | { type: 'open'; reconnected: boolean }
  | { type: 'down' }
  | { type: 'refused' }
  | { type: 'session-ended' }
  | { type: 'workspace-ended' }
  /** A tab that joined asks the leader how the stream is. */
  | { type: 'hello' }
  /** A follower's "Retry now": the leader reconnects at once. */
  | { type: 'retry' };

/** The lock and channel name shared by the tabs of one account in one workspace. */
export function sharedStreamName(userId: string, workspaceId: string | null): string {
  return `rs-events:${userId}:${workspaceId ?? 'personal'}`;
}

function canShare(): boolean {
  return typeof BroadcastChannel !== 'undefined' && typeof navigator !== 'undefined' && !!navigator.locks;
}

export function subscribeToSharedEvents(userId: string, workspaceId: string | null, handlers: EventStreamHandlers): EventSubscription {
  if (!canShare()) return subscribeToEvents(workspaceId, handlers);

  const name = sharedStreamName(userId, workspaceId);
  const channel = new BroadcastChannel(name);
  const waiting = new AbortController();
  let stopped = false;
  let own: EventSubscription | null = null;
  let release: (() => void) | null = null;
  let lastEventId: string | null = null;
  /** What the leader last said, so a tab that joins later is told (null: nothing yet). */
  let connected: boolean | null = null;

  const post = (message: Relay) => {
    if (!stopped) channel.postMessage(message);
  };

  channel.onmessage = (message: MessageEvent<Relay>) => {
    const relay = message.data;
    switch (relay.type) {
      case 'event':
        if (relay.id) lastEventId = relay.id;
        handlers.onEvent(relay.event, relay.id);
        break;
      case 'open':
        handlers.onOpen(relay.reconnected);
        break;
      case 'down':
        handlers.onDown();
        break;
      case 'refused':
        handlers.onRefused();
        break;
      case 'session-ended':
        handlers.onSessionEnded();
        break;
      case 'workspace-ended':
        handlers.onWorkspaceEnded();
        break;
      case 'hello':
        if (own && connected !== null) post(connected ? { type: 'open', reconnected: false } : { type: 'down' });
        break;
      case 'retry':
        own?.retryNow();
        break;
    }
  };

  /**
   * Holds the stream until this tab closes or leaves the workspace. A tab that took over from another leader
   * resumes after the last event it heard relayed, and re-reads everything once its stream is open, for what may
   * have happened while no tab held the stream.
   */
  const lead = (tookOver: boolean): Promise<void> => {
    if (stopped) return Promise.resolve();
    const heardBefore = lastEventId;
    let firstOpen = true;
    own = subscribeToEvents(
      workspaceId,
      {
        onEvent: (event, id) => {
          if (id) lastEventId = id;
          handlers.onEvent(event, id);
          post({ type: 'event', event, id });
        },
        onOpen: (reconnected) => {
          const resync = reconnected || (firstOpen && tookOver);
          firstOpen = false;
          connected = true;
          handlers.onOpen(resync);
          post({ type: 'open', reconnected: resync });
        },
        onDown: () => {
          connected = false;
          handlers.onDown();
          post({ type: 'down' });
        },
        onRefused: () => {
          handlers.onRefused();
          post({ type: 'refused' });
        },
        onSessionEnded: () => {
          handlers.onSessionEnded();
          post({ type: 'session-ended' });
        },
        onWorkspaceEnded: () => {
          handlers.onWorkspaceEnded();
          post({ type: 'workspace-ended' });
        },
      },
      heardBefore,
    );
    return new Promise<void>((resolve) => (release = resolve));
  };

  const elect = async () => {
    const ledAtOnce = await navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
      if (!lock) return false;
      await lead(false);
      return true;
    });
    if (ledAtOnce || stopped) return;
    // another tab leads: follow it, and take over when it ends
    post({ type: 'hello' });
    await navigator.locks.request(name, { signal: waiting.signal }, () => lead(true));
  };
  elect().catch(() => undefined); // aborted while waiting: this tab closed or left the workspace

  return {
    close: () => {
      stopped = true;
      waiting.abort();
      own?.close();
      own = null;
      release?.();
      channel.close();
    },
    retryNow: () => {
      if (own) own.retryNow();
      else post({ type: 'retry' });
    },
  };
}
