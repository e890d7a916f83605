/**
 * The webhook delivery activities (workflows/webhookDelivery.ts): which deliveries of an endpoint are due, sending
 * one (target checked again at send time, signed, POSTed with a time limit, the attempt and the delivery's new
 * state recorded in one transaction), and pruning the delivery log. The database decides: a delivery that is no
 * longer pending is not sent, and one that another execution holds the send lease of waits, so a retried activity
 * or a re-run workflow never sends a delivery again while its first send is alive or after it settled.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { webhookAnswerVerdict, webhookRetryDelayMs, WEBHOOK_LOG_BODY_BYTES } from '../domain/webhookDelivery';
import {
  deliveryLeaseRemainingMs,
  deliveryToSend,
  dueDeliveries,
  giveUpDelivery,
  pruneWebhookLog,
  recordAttempt,
  releaseDeliveryLease,
  renewDeliveryLease,
  takeDeliveryLease,
  type DueDeliveries,
} from '../services/integrations/webhookDeliveries';
import { webhookDeliverySettings, type WebhookDeliverySettings } from '../services/integrations/webhookDeliverySettings';
import { mailWebhookDisabledNotice } from '../services/integrations/webhookDisabledNotice';
import { sendWebhookRequest, truncateUtf8 } from '../services/integrations/webhookSender';
import { signingSecrets, signWebhook } from '../services/integrations/webhookSigning';
import { resolveWebhookTarget, webhookTargetPolicy, WebhookTargetError } from '../services/integrations/webhookTargets';
import { inStoredTrace } from '../services/platform/tracing';

export type WebhookSendResult =
  /** sent and recorded: the delivery's state now */
  | { outcome: 'succeeded' | 'pending' | 'failed'; statusCode: number | null; endpointDisabled: boolean }
  /** not sent: already settled, gone, or the endpoint is off */
  | { outcome: 'skipped'; reason: string };

const USER_AGENT = 'RenderStudio-Webhooks/1.0 (+https://www.standardwebhooks.com)';
const HEARTBEAT_EVERY_MS = 5000;
/** The failure type of an execution that found another one sending its delivery (retried when the lease ends). */
export const WEBHOOK_DELIVERY_LEASED = 'WebhookDeliveryLeased';

/** `settings`: the retry schedule and limits (the worker's from the environment; tests pass short ones). */
export function createWebhookDeliveryActivities(
  deps: Pick<ActivityDeps, 'knex' | 'config' | 'logger'>,
  settings: WebhookDeliverySettings = webhookDeliverySettings(),
) {
  const { knex, config, logger } = deps;
  const policy = webhookTargetPolicy(config);

  return {
    async dueWebhookDeliveries(input: { endpointId: string; limit: number; exclude: string[] }): Promise<DueDeliveries> {
      return dueDeliveries(knex, input);
    },

    async sendWebhookDelivery(deliveryId: string): Promise<WebhookSendResult> {
      const delivery = await deliveryToSend(knex, deliveryId);
      if (!delivery) return { outcome: 'skipped', reason: 'gone' };
      if (delivery.status !== 'pending') return { outcome: 'skipped', reason: delivery.status };
      if (delivery.endpoint.status !== 'enabled') return { outcome: 'skipped', reason: 'endpoint disabled' };
      const { endpoint } = delivery;

      // one sender at a time: a second execution of this delivery (a retry after missed heartbeats while the first
      // still runs, another worker) waits for the lease to end, then finds the delivery settled or sends it itself
      const lease = { deliveryId, token: randomUUID(), leaseMs: settings.leaseMs };
      if (!(await takeDeliveryLease(knex, lease))) {
        const remainingMs = await deliveryLeaseRemainingMs(knex, deliveryId);
        throw ApplicationFailure.create({
          type: WEBHOOK_DELIVERY_LEASED,
          message: 'Another attempt is sending this webhook delivery',
          nextRetryDelay: Math.max(remainingMs ?? 0, 1000),
        });
      }
      let recorded = false;
      // a worker that dies mid-send is noticed by the missed heartbeats, and the send retried once its lease lapses
      const context = Context.current();
      const heartbeat = setInterval(() => {
        context.heartbeat();
        renewDeliveryLease(knex, lease).catch((err: unknown) => logger.warn({ err, deliveryId }, 'could not renew a webhook delivery lease'));
      }, HEARTBEAT_EVERY_MS);
      try {
        const deadline = delivery.eventCreatedAt.getTime() + settings.retryWindowMs;
        // (a minute of slack: the last attempt, scheduled at the window's end, starts a moment after it)
        if (Date.now() > deadline + 60_000) {
          // waited past its window (the endpoint was off, or no worker ran): settled without a late send
          await giveUpDelivery(knex, {
            deliveryId,
            workspaceId: endpoint.workspaceId,
            endpointId: endpoint.id,
            reason: 'Not sent: the event is older than the retry window',
          });
          return { outcome: 'skipped', reason: 'expired' };
        }

        // with tracing on, the send (and its HTTP call) continues the trace of the change that recorded the event
        const spanAttributes = { 'webhook.event_type': delivery.eventType, 'webhook.delivery_id': deliveryId, 'webhook.endpoint_id': endpoint.id, 'webhook.attempt': delivery.attempts + 1 };
        const answer = await inStoredTrace(delivery.traceparent, `webhook.deliver ${delivery.eventType}`, spanAttributes, async (annotate) => {
          let sent: { status: number | null; body: string; error: string | null; latencyMs: number };
          try {
            const target = await resolveWebhookTarget(endpoint.url, policy);
            const headers = signWebhook({ secrets: signingSecrets(endpoint), messageId: delivery.eventId, at: new Date(), body: delivery.body });
            sent = await sendWebhookRequest({
              url: target.url,
              address: target.address,
              family: target.family,
              headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
              body: delivery.body,
              timeoutMs: settings.timeoutMs,
              keepBodyBytes: WEBHOOK_LOG_BODY_BYTES,
              signal: context.cancellationSignal,
            });
          } catch (err) {
            // the URL no longer passes the target rules (or its name does not resolve): retried like a connection error,
            // since DNS or the operator's setting may change; the log says why
            if (!(err instanceof WebhookTargetError)) throw err;
            sent = { status: null, body: '', error: err.message, latencyMs: 0 };
          }
          if (sent.status !== null) annotate({ 'http.response.status_code': sent.status });
          return sent;
        });
        if (answer.status === null && context.cancellationSignal.aborted) {
          // the worker is stopping: record nothing, the next worker sends it again (the receiver may see it twice)
          throw new Error('webhook attempt stopped by worker shutdown');
        }

        const verdict = webhookAnswerVerdict(answer.status);
        let nextAttemptAt: Date | null = null;
        if (verdict === 'retry') {
          const delay = webhookRetryDelayMs(delivery.attempts + 1, Math.random(), { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs });
          const now = Date.now();
          // the last attempt is at the window's end; past it, the delivery is given up
          if (now < deadline) nextAttemptAt = new Date(Math.min(now + delay, deadline));
        }
        // still heartbeating: a slow commit here must not look like a dead worker, whose send would be retried
        const outcome = await recordAttempt(knex, {
          deliveryId,
          endpointId: endpoint.id,
          workspaceId: endpoint.workspaceId,
          statusCode: answer.status,
          error: answer.error,
          latencyMs: answer.latencyMs,
          requestBody: truncateUtf8(delivery.body, WEBHOOK_LOG_BODY_BYTES),
          responseBody: answer.status === null ? null : answer.body,
          verdict,
          nextAttemptAt,
          disableAfterMs: settings.disableAfterMs,
          disableMinFailures: settings.disableMinFailures,
          leaseToken: lease.token,
        });
        recorded = true;
        if (outcome.endpointDisabled) {
          logger.warn({ endpointId: endpoint.id, workspaceId: endpoint.workspaceId, reason: outcome.endpointDisabled }, 'webhook endpoint disabled');
          await mailWebhookDisabledNotice(
            knex,
            config,
            { workspaceId: endpoint.workspaceId, endpointId: endpoint.id, url: endpoint.url, reason: outcome.endpointDisabled },
            logger,
          ).catch((err: unknown) => logger.warn({ err }, 'could not e-mail the webhook endpoint notice'));
        }
        return { outcome: outcome.status, statusCode: answer.status, endpointDisabled: outcome.endpointDisabled !== null };
      } finally {
        clearInterval(heartbeat);
        // stopped before the record: the next execution need not wait for the lease to lapse
        if (!recorded) await releaseDeliveryLease(knex, lease).catch((err: unknown) => logger.warn({ err, deliveryId }, 'could not release a webhook delivery lease'));
      }
    },

    async pruneWebhookDeliveryLog(): Promise<{ events: number; deliveries: number; attempts: number }> {
      const removed = await pruneWebhookLog(knex, settings.retentionDays);
      if (removed.events || removed.deliveries || removed.attempts) logger.info(removed, 'pruned the webhook delivery log');
      return removed;
    },
  };
}
