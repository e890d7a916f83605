/**
 * The soak's event streams (SSE, /api/events through haproxy): one per seeded user, kept open for the whole run as a
 * browser tab keeps it, reconnecting as the front end does (frontend/src/api/events.ts: 1 s, 2 s, 5 s, 10 s, 30 s
 * with jitter, resuming after the last event id). They count what is delivered and note every job's terminal
 * states, so a job announced as ending twice, differently, is caught. A probe user measures delivery lag: it uploads
 * a small render every few seconds and times the answer against the 'content added' event on its own stream
 * (which may come through the other API process: LISTEN/NOTIFY carries it across).
 */
const RECONNECT_BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'expired']);

export interface StreamEvent {
  kind: string;
  id?: string;
  [key: string]: unknown;
}

interface Stream {
  stop(): void;
}

/** Reads one SSE stream until stopped; `onEvent` per message with its event name and parsed data. */
function openStream(baseUrl: string, token: string, onEvent: (name: string, data: StreamEvent, at: number) => void, onConnect: (ok: boolean) => void): Stream {
  let stopped = false;
  let controller: AbortController | null = null;
  let lastEventId: string | null = null;
  let attempt = 0;
  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      let opened = false;
      try {
        const url = `${baseUrl}/api/events${lastEventId ? `?lastEventId=${encodeURIComponent(lastEventId)}` : ''}`;
        const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal });
        if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
        opened = true;
        attempt = 0;
        onConnect(true);
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let name = 'message';
            let data = '';
            for (const line of message.split('\n')) {
              if (line.startsWith('event:')) name = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
              else if (line.startsWith('id:')) lastEventId = line.slice(3).trim();
            }
            if (!data) continue;
            try {
              onEvent(name, JSON.parse(data) as StreamEvent, Date.now());
            } catch {
              // not JSON (a comment or heartbeat)
            }
          }
        }
      } catch {
        // dropped or refused: reconnect below
      }
      if (stopped) return;
      if (!opened) onConnect(false);
      const base = RECONNECT_BACKOFF_MS[Math.min(attempt, RECONNECT_BACKOFF_MS.length - 1)];
      attempt += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.round(base * (0.8 + Math.random() * 0.4))));
    }
  };
  void run();
  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}

export interface EventWatchReport {
  streams: number;
  delivered: number;
  byKind: Record<string, number>;
  reconnects: number;
  refusedConnects: number;
  /** `<job kind>:<id>` of jobs announced with more than one terminal status */
  severalTerminalStates: string[];
  /** delivery lag of the probe's events, ms (from the upload's answer to the event; 0 when the event came first) */
  lag: { samples: number; p50: number; p95: number; p99: number; max: number; missed: number };
}

export interface EventWatchers {
  /** starts the lag probe: one small upload every `everyMs` into `projectId` as the probe user */
  startProbe(input: { token: string; projectId: string; image: Buffer; everyMs?: number }): void;
  stop(): Promise<EventWatchReport>;
}

export function watchEvents(baseUrl: string, tokens: readonly string[], probeToken: string): EventWatchers {
  const byKind: Record<string, number> = {};
  const terminal = new Map<string, Set<string>>();
  let delivered = 0;
  let reconnects = 0;
  let refused = 0;
  const count = (name: string, event: StreamEvent) => {
    delivered += 1;
    byKind[name] = (byKind[name] ?? 0) + 1;
    if (event.kind === 'job' && typeof event.status === 'string' && TERMINAL.has(event.status)) {
      const key = `${String(event.job)}:${String(event.jobId)}`;
      const seen = terminal.get(key) ?? new Set<string>();
      seen.add(event.status);
      terminal.set(key, seen);
    }
  };
  const connected = (ok: boolean) => {
    if (ok) reconnects += 1;
    else refused += 1;
  };
  const streams = tokens.map((token) => openStream(baseUrl, token, count, connected));

  // the probe: upload, note when the answer came, match the event by the item id
  const waiting = new Map<string, { answeredAt: number | null; eventAt: number | null }>();
  const lags: number[] = [];
  let missed = 0;
  const probeStream = openStream(
    baseUrl,
    probeToken,
    (name, event, at) => {
      if (event.kind !== 'content' || event.change !== 'added' || typeof event.itemId !== 'string') return;
      const entry = waiting.get(event.itemId) ?? { answeredAt: null, eventAt: null };
      entry.eventAt = at;
      waiting.set(event.itemId, entry);
    },
    () => undefined,
  );
  let probeTimer: NodeJS.Timeout | null = null;
  let probing = Promise.resolve();
  let probeSeq = 0;

  return {
    startProbe({ token, projectId, image, everyMs = 5000 }) {
      const once = async () => {
        const form = new FormData();
        form.append('projectId', projectId);
        // distinct bytes each time: the same bytes again are answered as a duplicate, without an event
        const bytes = Buffer.concat([image, Buffer.from(`probe-${Date.now()}-${probeSeq++}`)]);
        form.append('file', new Blob([bytes], { type: 'image/jpeg' }), `probe-${probeSeq}.jpg`);
        try {
          const res = await fetch(`${baseUrl}/api/upload/renders`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form, signal: AbortSignal.timeout(30_000) });
          const body = (await res.json()) as { render?: { data?: { id?: string } } };
          const id = body.render?.data?.id;
          if (!res.ok || !id) return;
          const entry = waiting.get(id) ?? { answeredAt: null, eventAt: null };
          entry.answeredAt = Date.now();
          waiting.set(id, entry);
        } catch {
          // the probe's own failures are the k6 users' business to report; a lost probe is just not counted
        }
      };
      probeTimer = setInterval(() => {
        probing = probing.then(once);
      }, everyMs);
    },
    async stop() {
      if (probeTimer) clearInterval(probeTimer);
      await probing;
      // the last events a moment to arrive
      await new Promise((resolve) => setTimeout(resolve, 2000));
      for (const s of streams) s.stop();
      probeStream.stop();
      for (const entry of waiting.values()) {
        if (entry.answeredAt === null) continue;
        if (entry.eventAt === null) missed += 1;
        else lags.push(Math.max(0, entry.eventAt - entry.answeredAt));
      }
      const sorted = lags.sort((a, b) => a - b);
      const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0);
      return {
        streams: streams.length,
        delivered,
        byKind,
        // every stream opens once at the start: only the ones after that are reconnects
        reconnects: Math.max(0, reconnects - streams.length),
        refusedConnects: refused,
        severalTerminalStates: [...terminal.entries()].filter(([, states]) => states.size > 1).map(([key, states]) => `${key} (${[...states].join(', ')})`),
        lag: { samples: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted.length ? sorted[sorted.length - 1] : 0, missed },
      };
    },
  };
}
