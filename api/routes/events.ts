import Router from '@koa/router';
import type { Context } from 'koa';
import { STREAM_READY_EVENT, STREAM_SESSION_ENDED_EVENT, STREAM_WORKSPACE_ENDED_EVENT, type DeliveredEvent } from '../../domain/events';
import { WORKSPACE_PARAM } from '../../domain/workspaceRoles';
import { workspaceGrant } from '../workspace';
import { readStreamSession, watchStreamSession, type StreamSessionWatch } from '../../services/accounts/streamSession';
import { EventStreamLimitReached, replayEvents, type EventHub } from '../../services/platform/events';
import type { AppDeps } from '../deps';
import { AUTH_MSG, currentSessionId, currentUser } from '../middleware/auth';
import { parse, RequestError } from '../validation';
import { countSseStreamStopped, trackSseClient } from '../../services/platform/metrics';
import { z } from 'zod';
import { describeRoute, errorBody } from '../openapi/describe';

/** A comment line this often keeps proxies and the browser from dropping a quiet stream. */
export const EVENT_STREAM_HEARTBEAT_MS = 15_000;
/** How long the browser waits before its own reconnect (EventSource's `retry:`). */
const RECONNECT_HINT_MS = 3000;

/** Seconds a browser refused for too many streams is told to wait (Retry-After). */
const STREAM_LIMIT_RETRY_AFTER_S = 30;

export const TOO_MANY_STREAMS_CODE = 'TOO_MANY_EVENT_STREAMS';
export function tooManyStreamsMessage(limit: number): string {
  return `Too many live update streams are open for this account (at most ${limit}). Close a Render Studio tab or window, or try again later.`;
}

const EVENT_ID_RE = /^\d{1,18}$/;

const LAST_EVENT_ID_MSG = 'Last-Event-ID must be the id of an earlier event';
const eventId = z.string({ error: LAST_EVENT_ID_MSG }).regex(EVENT_ID_RE, LAST_EVENT_ID_MSG);
const eventsQuery = z.object({
  lastEventId: eventId.optional(),
  [WORKSPACE_PARAM]: z
    .string()
    .optional()
    .meta({ description: "The workspace whose events to stream (any member may); the user's personal workspace when absent (or the X-Workspace-Id header)" }),
});
const eventsHeaders = z.object({ 'last-event-id': eventId.optional() });
/** One event of the stream: its kind (`ready`, `credits`, `job`, `content`, `approvals` ...), JSON data and, for replayable events, its id. */
const streamEvent = z.object({ event: z.string(), data: z.string().meta({ description: 'JSON: `{ kind, id, ... }`' }), id: z.string().optional() });

/** Last-Event-ID (the browser's own reconnect) or ?lastEventId= (the app's reconnect after a failure). */
function lastEventId(ctx: Context): string | null {
  const header = ctx.get('last-event-id');
  const raw = header !== '' ? parse(eventsHeaders, { 'last-event-id': header })['last-event-id'] : parse(eventsQuery, ctx.query).lastEventId;
  return raw ?? null;
}

function message(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * GET /api/events: the signed-in user's Server-Sent Events stream of one workspace (`?workspaceId=`, default the
 * personal one), opened after a 'read' grant (a non-member gets 404). A few lines over Node's response rather
 * than a library: Koa is told not to respond (`ctx.respond = false`) and the handler writes the stream itself,
 * so a browser that goes away just ends it (no pipeline error to log). Only that workspace's events are subscribed
 * to: the events published for the account it is (services/platform/events.ts), so every member's stream gets them.
 *
 * Limits (docs/configuration.md "Live updates"): an account has at most `config.eventStreamsPerAccount` streams open
 * over every API process (the next is refused with 429); a stream whose reader stops reading is dropped once more
 * than `config.eventStreamMaxQueuedBytes` wait for it (it replays from its Last-Event-ID when it comes back); and a
 * stream lasts only as long as its session (services/accounts/streamSession.ts): it ends with a `session-ended`
 * message when the session is signed out, expires, is revoked or its account deleted, and with a `workspace-ended`
 * message when the user stops being a member of the workspace (removed, left, or the workspace deleted).
 */
export function eventsRouter(deps: Pick<AppDeps, 'knex' | 'logger' | 'config'> & { events: EventHub; eventStreamHeartbeatMs?: number }): Router {
  const router = new Router();
  const heartbeatMs = deps.eventStreamHeartbeatMs ?? EVENT_STREAM_HEARTBEAT_MS;
  const { eventStreamsPerAccount: streamLimit, eventStreamMaxQueuedBytes: maxQueuedBytes } = deps.config;

  describeRoute(router, {
    method: 'get',
    path: '/api/events',
    tag: 'Live updates',
    summary: "The Server-Sent Events stream of a workspace the user is a member of (job, content, approval, credit and member changes)",
    description:
      'An endless `text/event-stream`: `retry:`, then the events after `Last-Event-ID` (or `lastEventId`), a `ready` event, then live events and a comment line every 15 s. ' +
      'It ends with a `session-ended` event when its session ends (sign-out, expiry, revocation, password change, account deletion), ' +
      'and with a `workspace-ended` event when the user is no longer a member of the workspace; ' +
      'a reader that falls more than EVENT_STREAM_MAX_QUEUED_BYTES behind is dropped and resumes with its Last-Event-ID.',
    access: 'session',
    workspace: 'read',
    // the stream lives as long as its session (streamSession.ts): an access token opens none
    sessionOnly: true,
    query: eventsQuery,
    headers: eventsHeaders,
    responses: {
      200: { description: 'The stream; each event as Schemathesis and browsers parse it', contentType: 'text/event-stream', schema: streamEvent },
      404: { description: 'Not a member of the workspace named by `workspaceId` (or no such workspace)', schema: errorBody },
      429: {
        description: 'The account already has EVENT_STREAMS_PER_ACCOUNT streams open (over every API process)',
        schema: errorBody,
        headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: z.string() } },
      },
    },
  });
  router.get('/api/events', async (ctx) => {
    const user = currentUser(ctx);
    const sessionId = currentSessionId(ctx);
    const after = lastEventId(ctx);
    const { workspaceId } = await workspaceGrant(ctx, deps, 'read');
    const { req, res } = ctx;

    let started = false;
    let open = true;
    let replaying = true;
    let authChanged = false;
    const held: Array<{ event: DeliveredEvent; bytes: number }> = [];
    let heldBytes = 0;
    const sent = new Set<string>();
    let heartbeat: ReturnType<typeof setInterval> | null = null;
    let watch: StreamSessionWatch | null = null;
    let unsubscribe: () => void = () => undefined;
    let untrack: () => void = () => undefined;

    const finish = (): void => {
      if (!open) return;
      open = false;
      if (heartbeat) clearInterval(heartbeat);
      watch?.stop();
      untrack();
      unsubscribe();
      if (started && !res.writableEnded) res.end();
    };
    /** The reader stopped reading: what waits for it is thrown away with the connection, and it replays on return. */
    const dropSlowReader = (): void => {
      if (!open) return;
      countSseStreamStopped('slow_reader');
      ctx.state.log?.info({ userId: user.id, queuedBytes: res.writableLength + heldBytes, maxQueuedBytes }, 'event stream dropped: its reader fell behind');
      finish();
      res.destroy();
    };
    /** Writes `chunk`; false when the socket asks to wait for 'drain' (or the stream is over). */
    const write = (chunk: string): boolean => {
      if (!open || res.writableEnded || res.destroyed) return false;
      const flowing = res.write(chunk);
      if (res.writableLength + heldBytes > maxQueuedBytes) {
        dropSlowReader();
        return false;
      }
      return flowing;
    };
    const send = (event: DeliveredEvent): boolean => (sent.has(event.id) ? true : write(message(event.kind, event, event.id)));
    const hold = (event: DeliveredEvent): void => {
      const bytes = Buffer.byteLength(JSON.stringify(event));
      held.push({ event, bytes });
      heldBytes += bytes;
      if (res.writableLength + heldBytes > maxQueuedBytes) dropSlowReader();
    };
    const drained = (): Promise<void> =>
      new Promise((resolve) => {
        if (!open || res.destroyed || res.writableEnded) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    const sessionEnded = async (): Promise<void> => {
      if (!open) return;
      // the session, or only the membership? A member removed from a workspace stays signed in
      const sessionLeft = await readStreamSession(deps.knex, user.id, sessionId).catch(() => null);
      if (!open) return;
      countSseStreamStopped('session_ended');
      if (sessionLeft) {
        ctx.state.log?.info({ userId: user.id, workspaceId }, 'event stream ended: no longer a member of its workspace');
        write(message(STREAM_WORKSPACE_ENDED_EVENT, { kind: STREAM_WORKSPACE_ENDED_EVENT, workspaceId }));
      } else {
        ctx.state.log?.info({ userId: user.id }, 'event stream ended: its session ended');
        write(message(STREAM_SESSION_ENDED_EVENT, { kind: STREAM_SESSION_ENDED_EVENT }));
      }
      finish();
    };

    // a reader that leaves while the stream is being set up (a browser tab closed at once) ends it as well: the slot
    // and the subscription taken meanwhile are given back, not held until the process ends
    res.on('close', finish);
    res.on('error', finish);
    // or left before this handler ran (during the session and membership checks): no 'close' comes any more
    if (req.socket.destroyed) finish();

    try {
      const subscribed = await deps.events.subscribe(
        user.id,
        {
          onEvent: (event) => (replaying ? hold(event) : send(event)),
          onClose: () => finish(),
          onAuthChange: () => (watch ? watch.recheck() : (authChanged = true)),
        },
        { maxStreamsPerUser: streamLimit, accountId: workspaceId },
      );
      if (open) unsubscribe = subscribed;
      else subscribed();
    } catch (err) {
      open = false;
      if (err instanceof EventStreamLimitReached) {
        countSseStreamStopped('limit');
        ctx.state.log?.info({ userId: user.id, limit: streamLimit }, 'event stream refused: too many open for the account');
        ctx.set('Retry-After', String(STREAM_LIMIT_RETRY_AFTER_S));
        throw new RequestError(429, tooManyStreamsMessage(streamLimit), TOO_MANY_STREAMS_CODE);
      }
      ctx.state.log?.warn({ err }, 'event stream unavailable');
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { success: false, error: 'Live updates are unavailable right now' };
      return;
    }

    // read now that the process LISTENs: a sign-out committed between the request's session check and the LISTEN
    // sent its note before anyone here heard it, so the session is read once more (and its expiry with it)
    let expiresAt: Date | null;
    try {
      expiresAt = await readStreamSession(deps.knex, user.id, sessionId, workspaceId);
    } catch (err) {
      finish();
      throw err;
    }
    if (!expiresAt) {
      finish();
      // removed from the workspace meanwhile: 404 as for any non-member; otherwise the session itself ended
      if (await readStreamSession(deps.knex, user.id, sessionId)) await workspaceGrant(ctx, deps, 'read');
      throw new RequestError(401, AUTH_MSG.required);
    }
    if (!open) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { success: false, error: 'Live updates are unavailable right now' };
      return;
    }

    started = true;
    untrack = trackSseClient();
    watch = watchStreamSession({
      knex: deps.knex,
      userId: user.id,
      sessionId,
      workspaceId,
      expiresAt,
      onEnded: () => void sessionEnded(),
      onFailed: (err) => {
        ctx.state.log?.warn({ err }, 'could not re-read an event stream\'s session; the stream ends and its reconnect is checked');
        finish();
      },
    });
    if (authChanged) watch.recheck();

    ctx.status = 200;
    ctx.respond = false;
    // no compression (it would buffer), no socket timeout, nothing cached, nothing buffered by a proxy
    (ctx as { compress?: boolean }).compress = false;
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    write(`retry: ${RECONNECT_HINT_MS}\n\n`);
    if (after !== null) {
      try {
        // paced by the socket: a long replay waits for the reader instead of piling up in memory
        for (const event of await replayEvents(deps.knex, workspaceId, after)) {
          if (!open) return;
          if (!send(event)) await drained();
          sent.add(event.id);
        }
      } catch (err) {
        ctx.state.log?.warn({ err }, 'event replay failed');
      }
    }
    if (!open) return;
    replaying = false;
    for (const { event } of held.splice(0)) send(event);
    heldBytes = 0;
    sent.clear();
    write(message(STREAM_READY_EVENT, { resumed: after !== null }));
    heartbeat = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
  });

  return router;
}
