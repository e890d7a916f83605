import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got: verified or not, and what it answered (null: it never answered). */
export interface ReceivedWebhook {
  id: string;
  type: string;
  data: Record<string, unknown>;
  verified: boolean;
  answered: number | null;
}

/** What to answer a request: a status, or 'hold' (no answer until `release()` or the connection closes). */
export type ReceiverAnswer = number | 'hold';

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** decides each answer; `index` counts requests from 0 */
  answer: (request: ReceivedWebhook, index: number) => ReceiverAnswer;
  /** calls `listener` for every request as it arrives */
  onRequest: ((request: ReceivedWebhook) => void) | null;
  /** verifies from now on with `secret` (the one the API answered when the endpoint was registered) */
  useSecret(secret: string): void;
  /** answers every held request with `status` */
  release(status: number): void;
  /** stops listening and closes its connections once their answers are sent: the receiver is down */
  down(): Promise<void>;
  /** listens again on the same port */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1 that verifies each request as a customer's would, with the `standardwebhooks`
 * library and the endpoint's secret, and answers as `answer` says.
 */
export async function startWebhookReceiver(secret: string, path = '/hooks'): Promise<WebhookReceiver> {
  let verifier = new Webhook(secret);
  const held: Array<{ res: http.ServerResponse; request: ReceivedWebhook }> = [];
  let count = 0;
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    onRequest: null,
    useSecret(next) {
      verifier = new Webhook(next);
    },
    release(status) {
      for (const h of held.splice(0)) {
        h.request.answered = status;
        h.res.writeHead(status).end();
      }
    },
    down: async () => {
      await new Promise<void>((resolve) => {
        // answers under way finish (a 2xx the receiver sent reaches the sender); idle keep-alive connections close
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
    up: () => listen(receiver.port),
    close: async () => {
      receiver.release(503);
      await receiver.down().catch(() => undefined);
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      let payload: { type?: string; data?: Record<string, unknown> } = {};
      try {
        payload = verifier.verify(body, req.headers as Record<string, string>) as typeof payload;
        verified = true;
      } catch {
        try {
          payload = JSON.parse(body) as typeof payload;
        } catch {
          payload = {};
        }
      }
      const request: ReceivedWebhook = { id: String(req.headers['webhook-id'] ?? ''), type: payload.type ?? '', data: payload.data ?? {}, verified, answered: null };
      receiver.received.push(request);
      receiver.onRequest?.(request);
      const answer = verified ? receiver.answer(request, count++) : 401;
      if (answer === 'hold') {
        held.push({ res, request });
        return;
      }
      request.answered = answer;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 200 && answer < 300 ? 'ok' : `answer ${answer}`);
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        receiver.port = (server.address() as AddressInfo).port;
        receiver.url = `http://127.0.0.1:${receiver.port}${path}`;
        resolve();
      });
    });
  await listen(0);
  return receiver;
}
