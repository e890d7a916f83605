/**
 * The webhook outbox (DESIGN.md "Integrations"): a change that is an event for the workspace's webhook endpoints
 * records it here, inside the transaction that makes the change, so the event exists exactly when the change does.
 * One statement writes the event and a delivery per enabled endpoint of the workspace that subscribes to its type;
 * with no such endpoint it writes nothing (the usual case costs one indexed read). The insert's trigger sends
 * NOTIFY rs_webhook_outbox on commit and the relay hands the deliveries to the endpoint's delivery workflow.
 */
import type { Knex } from 'knex';
import { WEBHOOK_PAYLOAD_VERSION, type AnyWebhookEventType, type WebhookEventDataByType, type WebhookPayload } from '../../domain/webhooks';
import { currentTraceparent } from '../../config/tracing';

export const WEBHOOK_OUTBOX_CHANNEL = 'rs_webhook_outbox';

export interface OutboxEvent<T extends AnyWebhookEventType> {
  workspaceId: string;
  type: T;
  /** what delivery keeps in order: the job, approval, render ... the event is about */
  resourceId: string;
  data: WebhookEventDataByType[T];
  /** when the change happened; now by default */
  at?: Date;
}

export interface RecordedEvent {
  eventId: string;
  deliveries: number;
}

/** The payload as it is sent: `{ type, version, timestamp, data }`. */
export function webhookPayload<T extends AnyWebhookEventType>(event: OutboxEvent<T>): WebhookPayload<T> {
  return { type: event.type, version: WEBHOOK_PAYLOAD_VERSION, timestamp: (event.at ?? new Date()).toISOString(), data: event.data };
}

/**
 * Records `event` for every enabled endpoint of its workspace subscribed to its type, in `trx` (pass the
 * transaction of the change; a plain connection only for changes that are a single statement already committed,
 * which loses the event if the process dies in between). Returns null when no endpoint wants it.
 */
export async function recordWebhookEvent<T extends AnyWebhookEventType>(trx: Knex | Knex.Transaction, event: OutboxEvent<T>): Promise<RecordedEvent | null> {
  const payload = webhookPayload(event);
  const result = await trx.raw<{ rows: Array<{ event_id: string; deliveries: string }> }>(
    `with subscribed as (
       select id from webhook_endpoints where workspace_id = ? and status = 'enabled' and ? = any(event_types)
     ), event as (
       insert into webhook_events (workspace_id, type, resource_id, payload, created_at, traceparent)
       select ?, ?, ?, ?::jsonb, ?, ? where exists (select 1 from subscribed)
       returning id
     ), added as (
       insert into webhook_deliveries (endpoint_id, event_id) select subscribed.id, event.id from subscribed, event returning event_id
     )
     select event_id, count(*) as deliveries from added group by event_id`,
    // with tracing on, the change's span: the deliveries continue its trace (null, and no look, when off)
    [event.workspaceId, event.type, event.workspaceId, event.type, event.resourceId, JSON.stringify(payload), payload.timestamp, currentTraceparent()],
  );
  const row = result.rows[0];
  return row ? { eventId: row.event_id, deliveries: Number(row.deliveries) } : null;
}

/**
 * Records a test event for one endpoint only ("Send test event"), whatever it subscribes to, and returns the new
 * delivery's id.
 */
export async function recordTestEvent(knex: Knex | Knex.Transaction, endpoint: { id: string; workspaceId: string }): Promise<{ eventId: string; deliveryId: string }> {
  const payload = webhookPayload({
    workspaceId: endpoint.workspaceId,
    type: 'webhook.test',
    resourceId: endpoint.id,
    data: { workspaceId: endpoint.workspaceId, endpointId: endpoint.id, message: 'This is a test event from Render Studio.' },
  });
  const [event] = await knex('webhook_events')
    .insert({ workspace_id: endpoint.workspaceId, type: payload.type, resource_id: endpoint.id, payload: JSON.stringify(payload), created_at: payload.timestamp, traceparent: currentTraceparent() })
    .returning<Array<{ id: string }>>('id');
  const [delivery] = await knex('webhook_deliveries').insert({ endpoint_id: endpoint.id, event_id: event.id }).returning<Array<{ id: string }>>('id');
  return { eventId: event.id, deliveryId: delivery.id };
}
