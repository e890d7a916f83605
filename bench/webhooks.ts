/**
 * Webhook delivery throughput and latency (issue 29, item 6): BENCH_WEBHOOK_EVENTS (10,000) events recorded through
 * recordWebhookEvent, each in a transaction of its own as a service records one with its change, by
 * BENCH_WEBHOOK_WRITERS (8) concurrent writers, for one endpoint pointing at a fast receiver in this process
 * (answers 200 at once after verifying the signature with the `standardwebhooks` library). Delivered by the real
 * worker entry (workers/main.ts: relay, per-endpoint workflow, send activity) on a Temporal dev server of its own.
 * Events come in groups of 3 per resource (a job's started/completed ...), so per-resource order is kept as it is
 * in use.
 *
 * Measures events per second (first commit to last 2xx) and the p50/p99 time from each event's commit to the
 * receiver's 2xx, and checks that every event arrived, once, in order per resource. The baseline, measured in the
 * same run against the same receiver: the same number of signed POSTs sent directly from this process with the
 * same sender (services/integrations/webhookSender.ts) and the same parallelism, no database, no Temporal. The
 * ratios (product over baseline) are what compares across machines.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_PARALLELISM } from '../domain/webhookDelivery';
import { recordWebhookEvent } from '../services/integrations/webhookOutbox';
import { sendWebhookRequest } from '../services/integrations/webhookSender';
import { newWebhookSecret, signWebhook } from '../services/integrations/webhookSigning';
import { withBenchDatabase, withWorkflowStack } from './support/benchEnv';
import { figure, ratio, recordResults } from './support/results';
import { percentile } from './support/stats';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const WRITERS = Number(process.env.BENCH_WEBHOOK_WRITERS ?? 8);
const PER_RESOURCE = 3;
const DELIVERY_TIMEOUT_MS = Number(process.env.BENCH_WEBHOOK_TIMEOUT_MS ?? 20 * 60_000);

interface Receiver {
  url: string;
  /** arrival time (ms, this process's clock) of the first 2xx per webhook-id */
  acked: Map<string, number>;
  duplicates: number;
  unverified: number;
  /** per resource: the indices in the order they arrived */
  order: Map<string, number[]>;
  close: () => Promise<void>;
}

async function startReceiver(secret: string): Promise<Receiver> {
  const verifier = new Webhook(secret);
  const r: Omit<Receiver, 'url' | 'close'> = { acked: new Map(), duplicates: 0, unverified: 0, order: new Map() };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: { data?: { jobId?: string; href?: string } };
      try {
        payload = verifier.verify(body, req.headers as Record<string, string>) as typeof payload;
      } catch {
        r.unverified += 1;
        res.writeHead(401).end();
        return;
      }
      const id = String(req.headers['webhook-id']);
      if (r.acked.has(id)) r.duplicates += 1;
      else r.acked.set(id, performance.timeOrigin + performance.now());
      const resource = payload.data?.jobId;
      if (resource) {
        const list = r.order.get(resource) ?? [];
        list.push(Number(String(payload.data?.href).split('/').pop()));
        r.order.set(resource, list);
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    ...r,
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  } as Receiver;
}

const now = () => performance.timeOrigin + performance.now();

function payloadFor(workspaceId: string, i: number) {
  const jobId = `bench-job-${Math.floor(i / PER_RESOURCE)}`;
  return {
    workspaceId,
    type: 'job.completed' as const,
    resourceId: jobId,
    data: {
      workspaceId,
      projectId: null,
      jobId,
      kind: 'image' as const,
      status: 'completed' as const,
      startedBy: null,
      approvalId: null,
      draftId: null,
      draftImageId: null,
      error: null,
      href: `/api/jobs/${jobId}/${i % PER_RESOURCE}`,
    },
  };
}

/** The baseline: the same signed POSTs from this process, WEBHOOK_PARALLELISM at a time. */
async function directPosts(receiver: Receiver, secret: string, workspaceId: string): Promise<{ perSecond: number; p50: number; p99: number }> {
  const url = new URL(receiver.url);
  const latencies: number[] = [];
  let next = 0;
  const started = now();
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= EVENTS) return;
      const body = JSON.stringify({ type: 'job.completed', version: 1, timestamp: new Date().toISOString(), data: payloadFor(workspaceId, i).data });
      const t0 = now();
      const headers = signWebhook({ secrets: [secret], messageId: `direct-${i}`, at: new Date(), body });
      const answer = await sendWebhookRequest({
        url,
        address: '127.0.0.1',
        family: 4,
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        timeoutMs: 15_000,
        keepBodyBytes: 4096,
      });
      if (answer.status !== 200) throw new Error(`direct POST answered ${answer.status ?? answer.error}`);
      latencies.push(now() - t0);
    }
  };
  await Promise.all(Array.from({ length: WEBHOOK_PARALLELISM }, lane));
  const seconds = (now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: EVENTS / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function main(): Promise<void> {
  if (!Number.isInteger(EVENTS) || EVENTS < PER_RESOURCE) throw new Error('BENCH_WEBHOOK_EVENTS must be an integer of at least 3');
  await withBenchDatabase({ max: WRITERS + 2 }, async (db) => {
    const user = await db.signUpUser('Webhook Bench');
    const workspaceId = user.userId;
    const secret = newWebhookSecret();
    const receiver = await startReceiver(secret);
    try {
      const baseline = await directPosts(receiver, secret, workspaceId);
      receiver.acked.clear();
      receiver.order.clear();
      receiver.duplicates = 0;
      process.stdout.write(`baseline: ${EVENTS} signed POSTs sent directly, ${WEBHOOK_PARALLELISM} at a time: ${baseline.perSecond.toFixed(0)}/s, p50 ${baseline.p50.toFixed(1)} ms, p99 ${baseline.p99.toFixed(1)} ms\n`);

      const [endpoint] = await db
        .knex('webhook_endpoints')
        .insert({ workspace_id: workspaceId, url: receiver.url, event_types: ['job.completed'], secret, created_by: user.userId })
        .returning<Array<{ id: string }>>('id');

      await withWorkflowStack(db.url, { LOG_LEVEL: 'warn' }, async () => {
        const committedAt = new Map<string, number>();
        // a writer records one resource's events one after another (as its changes happen), writers run side by side
        let nextResource = 0;
        const resources = Math.ceil(EVENTS / PER_RESOURCE);
        const started = now();
        const writer = async () => {
          for (;;) {
            const resource = nextResource++;
            if (resource >= resources) return;
            for (let i = resource * PER_RESOURCE; i < Math.min(EVENTS, (resource + 1) * PER_RESOURCE); i++) {
              const recorded = await db.knex.transaction((trx) => recordWebhookEvent(trx, payloadFor(workspaceId, i)));
              if (!recorded) throw new Error('the event was recorded for no endpoint');
              committedAt.set(recorded.eventId, now());
            }
          }
        };
        await Promise.all(Array.from({ length: WRITERS }, writer));
        const recordedS = (now() - started) / 1000;
        process.stdout.write(`recorded ${EVENTS} events in ${recordedS.toFixed(1)} s (${(EVENTS / recordedS).toFixed(0)}/s, ${WRITERS} writers)\n`);

        const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
        while (receiver.acked.size < EVENTS) {
          if (Date.now() > deadline) throw new Error(`only ${receiver.acked.size} of ${EVENTS} events delivered within ${DELIVERY_TIMEOUT_MS / 1000} s`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const lastAck = Math.max(...receiver.acked.values());
        const seconds = (lastAck - started) / 1000;
        const latencies = [...receiver.acked.entries()].map(([id, at]) => at - (committedAt.get(id) ?? at)).sort((a, b) => a - b);
        const perSecond = EVENTS / seconds;
        const p50 = percentile(latencies, 50);
        const p99 = percentile(latencies, 99);
        let outOfOrder = 0;
        for (const list of receiver.order.values()) for (let k = 1; k < list.length; k++) if (list[k] < list[k - 1]) outOfOrder += 1;
        const states = await db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id }).groupBy('status').select('status').count('* as n');
        process.stdout.write(
          [
            `delivered ${receiver.acked.size} events: ${perSecond.toFixed(0)}/s from the first commit to the last 2xx (${seconds.toFixed(1)} s)`,
            `commit -> 2xx: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`,
            `duplicates ${receiver.duplicates}, out of order ${outOfOrder}, unverified ${receiver.unverified}, deliveries ${JSON.stringify(states)}`,
            `against the baseline: ${(perSecond / baseline.perSecond).toFixed(3)}x the events per second`,
          ].join('\n') + '\n',
        );
        if (outOfOrder || receiver.unverified) throw new Error('events out of order or unverified');
        recordResults('webhooks', [
          ratio('delivered_share', receiver.acked.size / EVENTS, 'higher', 'events delivered (2xx) over events recorded', 1),
          ratio('eps_vs_direct', perSecond / baseline.perSecond, 'higher', 'delivered events per second over signed POSTs sent directly (same receiver, same parallelism)'),
          ratio('p99_vs_direct', p99 / baseline.p99, 'lower', 'p99 commit-to-2xx over the p99 of a direct signed POST'),
          figure('events_per_s', perSecond, 'events/s', 'higher', 'events delivered per second, first commit to last 2xx'),
          figure('p50_commit_to_2xx', p50, 'ms', 'lower', "median time from an event's commit to the receiver's 2xx"),
          figure('p99_commit_to_2xx', p99, 'ms', 'lower', "p99 time from an event's commit to the receiver's 2xx"),
          figure('direct_per_s', baseline.perSecond, 'req/s', 'higher', 'baseline: signed POSTs sent directly per second'),
          figure('duplicates', receiver.duplicates, 'events', 'lower', 'events received again after a 2xx'),
        ]);
      });
    } finally {
      await receiver.close();
    }
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
