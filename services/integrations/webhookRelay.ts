/**
 * The webhook relay (DESIGN.md "Integrations"), run by every worker process: it hands the outbox's new deliveries to
 * their endpoint's delivery workflow (workflows/webhookDelivery.ts). It LISTENs on rs_webhook_outbox, whose NOTIFY
 * names the endpoint (sent on commit by the insert's trigger), and signals `webhook-endpoint-<endpointId>` with
 * signalWithStart: the run under way wakes and claims, or a new run starts. A burst of events for one endpoint costs
 * one signal in flight and at most one more queued after it.
 *
 * NOTIFY is not durable (a relay restarting or a connection lost misses notes), so a sweep every
 * WEBHOOK_SWEEP_INTERVAL_MS (and at every (re)connect) wakes the endpoints whose deliveries are overdue: nothing waits
 * longer than that for a missed note. Several worker processes each run a relay; their signals are harmless repeats.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { TASK_QUEUES } from '../../domain/taskQueues';
import {
  webhookEndpointWorkflowId,
  WEBHOOK_PRUNE_EVERY,
  WEBHOOK_PRUNE_SCHEDULE_ID,
  WEBHOOK_WAKE_SIGNAL,
  type WebhookEndpointWorkflowInput,
} from '../../domain/webhookDelivery';
import { createListenConnection, type ListenConnection } from '../platform/listenConnection';
import { PeriodicSweep } from '../platform/periodicSweep';
import { endpointsWithOverdueDeliveries } from './webhookDeliveries';
import type { WebhookDeliverySettings } from './webhookDeliverySettings';
import { WEBHOOK_OUTBOX_CHANNEL } from './webhookOutbox';

export interface WebhookRelayOptions {
  knex: Knex;
  databaseUrl: string;
  client: Client;
  taskQueue?: string;
  settings: WebhookDeliverySettings;
  logger: Pick<Logger, 'warn' | 'info'>;
  /** signals in flight at once (different endpoints) */
  concurrency?: number;
  /** which endpoints this relay serves (all by default; a test's relay only its own in the shared database) */
  accepts?: (endpointId: string) => boolean;
}

export interface WebhookRelay {
  /** Resolves once the relay LISTENs (tests wait for it before recording events). */
  ready(): Promise<void>;
  /** Wakes (or starts) one endpoint's workflow now. */
  wake(endpointId: string): void;
  /** Resolves when no signal is queued or in flight. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export function startWebhookRelay(options: WebhookRelayOptions): WebhookRelay {
  const { client, settings, logger } = options;
  const taskQueue = options.taskQueue ?? TASK_QUEUES.webhooks;
  const concurrency = options.concurrency ?? 16;
  /** endpoints waiting for a signal, in arrival order */
  const queued = new Set<string>();
  /** endpoints with a signal in flight (a note arriving meanwhile queues one more) */
  const signalling = new Set<string>();
  let idleWaiters: Array<() => void> = [];
  let closed = false;

  const input = (endpointId: string): WebhookEndpointWorkflowInput => ({ endpointId, parallelism: settings.parallelism, idleMs: settings.idleMs });

  const signal = async (endpointId: string): Promise<void> => {
    try {
      await client.workflow.signalWithStart('webhookEndpointWorkflow', {
        workflowId: webhookEndpointWorkflowId(endpointId),
        taskQueue,
        args: [input(endpointId)],
        signal: WEBHOOK_WAKE_SIGNAL,
        signalArgs: [],
      });
    } catch (err) {
      // the sweep tries again; a run that is closing refuses a signal only for a moment
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) logger.warn({ err, endpointId }, 'could not signal the webhook delivery workflow');
    }
  };

  const pump = (): void => {
    for (const endpointId of [...queued]) {
      if (closed || signalling.size >= concurrency) break;
      if (signalling.has(endpointId)) continue;
      queued.delete(endpointId);
      signalling.add(endpointId);
      void signal(endpointId).finally(() => {
        signalling.delete(endpointId);
        pump();
      });
    }
    if (queued.size === 0 && signalling.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  const wake = (endpointId: string): void => {
    if (closed || (options.accepts && !options.accepts(endpointId))) return;
    queued.add(endpointId);
    pump();
  };

  const sweep = new PeriodicSweep({
    everyMs: settings.sweepEveryMs,
    what: 'webhook endpoints woken by the sweep',
    run: async () => {
      // keeps the LISTEN connection up (reconnects a lost one after its back-off)
      listen.client();
      // overdue by a sweep interval: a delivery just added is the NOTIFY's, not the sweep's
      const endpoints = await endpointsWithOverdueDeliveries(options.knex, Math.min(settings.sweepEveryMs, 60_000));
      for (const id of endpoints) wake(id);
      return 0;
    },
    logger,
  });

  const listen: ListenConnection = createListenConnection({
    databaseUrl: options.databaseUrl,
    channel: WEBHOOK_OUTBOX_CHANNEL,
    name: 'webhook relay',
    readsMeanwhile: 'overdue deliveries',
    logger,
    onNote: (endpointId) => wake(endpointId),
    // notes may have been missed while the connection was down: look for what waits (nothing happens on close)
    onReset: () => {
      if (!closed) void endpointsWithOverdueDeliveries(options.knex, 0).then((ids) => ids.forEach(wake), () => undefined);
    },
  });
  listen.client();
  sweep.start();

  return {
    ready: () => listen.ready(),
    wake,
    idle: () => (queued.size === 0 && signalling.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    async close() {
      closed = true;
      queued.clear();
      await sweep.stop();
      await listen.close();
      while (signalling.size > 0) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/**
 * Creates the daily `webhook-log-prune` schedule unless it exists (every worker calls this at start; the first
 * creates it). Runs never overlap.
 */
export async function ensureWebhookPruneSchedule(client: Client, taskQueue: string = TASK_QUEUES.webhooks): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: WEBHOOK_PRUNE_SCHEDULE_ID,
      spec: { intervals: [{ every: WEBHOOK_PRUNE_EVERY }] },
      action: { type: 'startWorkflow', workflowType: 'webhookLogPruneWorkflow', taskQueue, workflowId: `${WEBHOOK_PRUNE_SCHEDULE_ID}-run`, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
