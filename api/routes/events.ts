import Router from '@koa/router';
import type { Context } from 'koa';
import { STREAM_READY_EVENT, type DeliveredEvent } from '../../domain/events';
import { replayEvents, type EventHub } from '../../services/platform/events';
import type { AppDeps } from '../deps';
import { currentUser } from '../middleware/auth';
import { parse } from '../validation';
import { trackSseClient } from '../../services/platform/metrics';
import { z } from 'zod';
import { describeRoute } from '../openapi/describe';

/** A comment line this often keeps proxies and the browser from dropping a quiet stream. */
export const EVENT_STREAM_HEARTBEAT_MS = 15_000;
/** How long the browser waits before its own reconnect (EventSource's `retry:`). */
const RECONNECT_HINT_MS = 3000;

const EVENT_ID_RE = /^\d{1,18}$/;

const LAST_EVENT_ID_MSG = 'Last-Event-ID must be the id of an earlier event';
const eventId = z.string({ error: LAST_EVENT_ID_MSG }).regex(EVENT_ID_RE, LAST_EVENT_ID_MSG);
const eventsQuery = z.object({ lastEventId: eventId.optional() });
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
 * GET /api/events: the signed-in user's Server-Sent Events stream. A few lines over Node's response rather
 * than a library: Koa is told not to respond (`ctx.respond = false`) and the handler writes the stream itself,
 * so a browser that goes away just ends it (no pipeline error to log). Only this user's events are subscribed to.
 */
export function eventsRouter(deps: Pick<AppDeps, 'knex' | 'logger'> & { events: EventHub; eventStreamHeartbeatMs?: number }): Router {
  const router = new Router();
  const heartbeatMs = deps.eventStreamHeartbeatMs ?? EVENT_STREAM_HEARTBEAT_MS;

  describeRoute(router, {
    method: 'get',
    path: '/api/events',
    tag: 'Live updates',
    summary: "The user's Server-Sent Events stream (job, content and approval changes)",
    description:
      'An endless `text/event-stream`: `retry:`, then the events after `Last-Event-ID` (or `lastEventId`), a `ready` event, then live events and a comment line every 15 s.',
    access: 'session',
    query: eventsQuery,
    headers: eventsHeaders,
    responses: { 200: { description: 'The stream; each event as Schemathesis and browsers parse it', contentType: 'text/event-stream', schema: streamEvent } },
  });
  router.get('/api/events', async (ctx) => {
    const user = currentUser(ctx);
    const after = lastEventId(ctx);
    const { req, res } = ctx;

    let open = true;
    let replaying = true;
    const held: DeliveredEvent[] = [];
    const sent = new Set<string>();
    const write = (chunk: string) => {
      if (open && !res.writableEnded && !res.destroyed) res.write(chunk);
    };
    const send = (event: DeliveredEvent) => {
      if (sent.has(event.id)) return;
      write(message(event.kind, event, event.id));
    };

    let unsubscribe: () => void = () => undefined;
    let untrack: () => void = () => undefined;
    try {
      unsubscribe = await deps.events.subscribe(user.id, {
        onEvent: (event) => (replaying ? held.push(event) : send(event)),
        onClose: () => finish(),
      });
    } catch (err) {
      ctx.state.log?.warn({ err }, 'event stream unavailable');
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { success: false, error: 'Live updates are unavailable right now' };
      return;
    }

    let heartbeat: ReturnType<typeof setInterval> | null = null;
    untrack = trackSseClient();
    function finish(): void {
      if (!open) return;
      open = false;
      if (heartbeat) clearInterval(heartbeat);
      untrack();
      unsubscribe();
      if (!res.writableEnded) res.end();
    }

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
    res.on('close', finish);
    res.on('error', finish);

    write(`retry: ${RECONNECT_HINT_MS}\n\n`);
    if (after !== null) {
      try {
        for (const event of await replayEvents(deps.knex, user.id, after)) {
          send(event);
          sent.add(event.id);
        }
      } catch (err) {
        ctx.state.log?.warn({ err }, 'event replay failed');
      }
    }
    replaying = false;
    for (const event of held.splice(0)) send(event);
    sent.clear();
    write(message(STREAM_READY_EVENT, { resumed: after !== null }));
    heartbeat = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
  });

  return router;
}
