/**
 * One webhook endpoint's deliveries (`webhook-endpoint-<endpointId>`, DESIGN.md "Integrations"). The relay starts
 * it, or wakes it when it runs, with signalWithStart each time deliveries are added. It asks the database which
 * deliveries are due (of each resource only its oldest pending one, so one job's events arrive in order) and keeps
 * up to `parallelism` of them in flight, each on a different resource. A delivery that failed waits on a durable
 * timer until its next attempt (the activity chose the time: backoff with jitter, for up to 3 days), so a worker
 * restart in between loses nothing. Before its history grows large the workflow continues as new, with nothing to
 * carry: the deliveries' state is in the database. With nothing left to send and no signal for `idleMs` it ends;
 * the next delivery starts it again.
 */
import { condition, continueAsNew, defineSignal, proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createWebhookDeliveryActivities } from '../activities/webhookDelivery';
import { WEBHOOK_WAKE_SIGNAL, type WebhookEndpointWorkflowInput, type WebhookEndpointWorkflowResult } from '../domain/webhookDelivery';

type DeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;

export const webhookDeliveriesAddedSignal = defineSignal(WEBHOOK_WAKE_SIGNAL);

const { dueWebhookDeliveries } = proxyLocalActivities<DeliveryActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

// an attempt is bounded by the send's own time limit (15 s by default); a failure here is ours (database down,
// worker gone), not the receiver's, and is retried without counting as an attempt
const { sendWebhookDelivery } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** Continue as new past this many history events (well below Temporal's warning at 10,240). */
const HISTORY_LIMIT = 4000;

export async function webhookEndpointWorkflow(input: WebhookEndpointWorkflowInput): Promise<WebhookEndpointWorkflowResult> {
  let woken = false;
  setHandler(webhookDeliveriesAddedSignal, () => {
    woken = true;
  });
  const inFlight = new Set<string>();
  let sent = 0;
  let winding = false;

  const send = (deliveryId: string) => {
    inFlight.add(deliveryId);
    void sendWebhookDelivery(deliveryId)
      .then((result) => {
        if (result.outcome !== 'skipped') sent += 1;
      })
      // the activity retries until it succeeds; it fails only when the run is cancelled: the delivery stays pending
      .catch(() => undefined)
      .finally(() => {
        inFlight.delete(deliveryId);
        woken = true;
      });
  };

  // when the next delivery that is not yet due will be (workflow time), from the last claim
  let nextDueAt: number | null = null;
  let claimNow = true;
  for (;;) {
    const info = workflowInfo();
    if (!winding && (info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT)) winding = true;
    if (winding) {
      // let the sends in flight finish (their results belong to this run), then start afresh
      await condition(() => inFlight.size === 0);
      await continueAsNew<typeof webhookEndpointWorkflow>(input);
    }
    woken = false;
    const room = input.parallelism - inFlight.size;
    // claims come in batches: when half the slots are free (or all, or a retry is due, or at the start), not after each send
    if (room > 0 && (claimNow || inFlight.size === 0 || room * 2 >= input.parallelism)) {
      claimNow = false;
      const claim = await dueWebhookDeliveries({ endpointId: input.endpointId, limit: room, exclude: [...inFlight] });
      if (!claim.endpointEnabled) {
        await condition(() => inFlight.size === 0);
        return { sent, ended: 'disabled' };
      }
      for (const id of claim.due) send(id);
      nextDueAt = claim.nextDueInMs === null ? null : Date.now() + claim.nextDueInMs;
      if (claim.due.length === 0 && inFlight.size === 0 && nextDueAt === null) {
        // nothing pending: wait for the relay's signal, or end
        if (!(await condition(() => woken, input.idleMs))) return { sent, ended: 'idle' };
        claimNow = true;
        continue;
      }
    }
    // a send finished, a signal came, or the next retry is due
    if (woken) continue;
    if (nextDueAt === null) await condition(() => woken);
    else if (!(await condition(() => woken, Math.max(nextDueAt - Date.now(), 1)))) claimNow = true;
  }
}

const { pruneWebhookDeliveryLog } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

/**
 * Daily, by the Temporal schedule `webhook-log-prune` (runs never overlap): removes delivery log rows older than the
 * retention (30 days by default; WEBHOOK_LOG_RETENTION_DAYS), keeping events that still have a pending delivery.
 */
export async function webhookLogPruneWorkflow(): Promise<{ events: number; deliveries: number; attempts: number }> {
  return pruneWebhookDeliveryLog();
}
