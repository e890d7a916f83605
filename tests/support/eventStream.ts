import http from 'node:http';

export interface StreamMessage {
  event: string;
  id: string | null;
  data: Record<string, unknown>;
}

export interface OpenedEventStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every message so far, in order (comments excluded). */
  messages: StreamMessage[];
  /** Comment lines (`: heartbeat`) so far. */
  comments: string[];
  /** Everything received so far as text (a refusal's JSON body, once `ended`). */
  text: () => string;
  /** The next message matching `match` not yet taken by an earlier `next`; rejects after `timeoutMs`. */
  next: (match?: (m: StreamMessage) => boolean, timeoutMs?: number) => Promise<StreamMessage>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Stops reading (a reader that fell asleep): the bytes wait in the socket buffers and then at the server. */
  pause: () => void;
  /** Reads again. */
  resume: () => void;
  close: () => void;
}

/**
 * A small Server-Sent Events reader over node:http for tests: parses `id:`, `event:`, `data:` and comment lines.
 * For a non-200 answer the body is left in `messages` empty and `status` tells.
 */
export function openEventStream(baseUrl: string, options: { token?: string; lastEventId?: string; path?: string } = {}): Promise<OpenedEventStream> {
  const url = new URL(options.path ?? '/api/events', baseUrl);
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const messages: StreamMessage[] = [];
      const comments: string[] = [];
      const taken = new Set<StreamMessage>();
      const waiters: Array<() => void> = [];
      let buffer = '';
      let received = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endedResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        received += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          let id: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) messages.push({ event, id, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
        }
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', endedResolve);
      res.on('close', endedResolve);
      res.on('error', endedResolve);
      const next = (match: (m: StreamMessage) => boolean = () => true, timeoutMs = 5000) =>
        new Promise<StreamMessage>((resolveNext, rejectNext) => {
          const look = (): boolean => {
            const found = messages.find((m) => !taken.has(m) && match(m));
            if (!found) return false;
            taken.add(found);
            clearTimeout(timer);
            resolveNext(found);
            return true;
          };
          const timer = setTimeout(() => {
            rejectNext(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
          }, timeoutMs);
          const wait = () => {
            if (!look()) waiters.push(wait);
          };
          wait();
        });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        text: () => received,
        next,
        ended,
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
