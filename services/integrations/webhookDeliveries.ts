/**
 * Webhook deliveries in the database (DESIGN.md "Integrations"): the delivery workflow's reads and writes (which
 * deliveries are due, one attempt's record with the delivery's new state in one transaction, disabling an endpoint
 * that keeps failing), the delivery log the API shows, "Send again", "Send test event", and pruning old log rows.
 *
 * The database is the truth: a delivery that is not `pending` is never sent again, whatever a re-run workflow or a
 * retried activity asks, so a receiver that answered 2xx gets an event twice only if the process died between its
 * answer and the commit of our record (the `webhook-id` lets it tell).
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import type { AttemptView, DeliveryView, WebhookAnswerVerdict } from '../../domain/webhookDelivery';
import type { AnyWebhookEventType } from '../../domain/webhooks';
import { publishEvent } from '../platform/events';
import { requireEndpoint } from './webhookEndpoints';
import { recordTestEvent } from './webhookOutbox';

type Db = Knex | Knex.Transaction;

/** How far down an endpoint's pending deliveries (in seq order) one claim looks for the next of each resource. */
const CLAIM_WINDOW = 1000;

export type { AttemptView, DeliveryView };

export const WEBHOOK_DELIVERY_CODES = {
  deliveryNotFound: 'WEBHOOK_DELIVERY_NOT_FOUND',
  endpointDisabled: 'WEBHOOK_ENDPOINT_DISABLED',
  badCursor: 'WEBHOOK_DELIVERY_CURSOR_INVALID',
} as const;

export class WebhookDeliveryNotFoundError extends DomainError {
  constructor() {
    super(404, WEBHOOK_DELIVERY_CODES.deliveryNotFound, 'That delivery does not exist for this endpoint (or was pruned after 30 days).');
  }
}

export class WebhookEndpointDisabledError extends DomainError {
  constructor() {
    super(409, WEBHOOK_DELIVERY_CODES.endpointDisabled, 'The endpoint is turned off. Turn it on first, then send again.');
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

// ---------------------------------------------------------------------------------------------------------------
// The delivery workflow's side

export interface DueDeliveries {
  /** deliveries to send now, oldest first, each the oldest pending one of its resource */
  due: string[];
  /** when the next one that is not yet due will be (ms from now), or null when none waits */
  nextDueInMs: number | null;
  /** false when the endpoint is turned off or gone: nothing is sent until it is turned on again */
  endpointEnabled: boolean;
}

/**
 * Up to `limit` deliveries of the endpoint to send now: of each resource only its oldest pending delivery (a later
 * event of a job waits until the earlier one succeeded or failed for good), those in `exclude` (in flight) left out,
 * and their resources with them. Looks at the oldest CLAIM_WINDOW pending deliveries: the oldest pending delivery
 * of a resource found there is its oldest of all, and the oldest of all is always among them, so nothing starves.
 */
export async function dueDeliveries(db: Db, input: { endpointId: string; limit: number; exclude: readonly string[] }): Promise<DueDeliveries> {
  const endpoint = await db('webhook_endpoints').where({ id: input.endpointId }).first<{ status: string } | undefined>('status');
  if (!endpoint || endpoint.status !== 'enabled') return { due: [], nextDueInMs: null, endpointEnabled: false };
  const { rows } = await db.raw<{ rows: Array<{ id: string; due: boolean; wait_ms: string | null }> }>(
    `with pending as (
       select d.id, d.seq, d.next_attempt_at, d.event_id from webhook_deliveries d
        where d.endpoint_id = ? and d.status = 'pending' order by d.seq limit ${CLAIM_WINDOW}
     ), heads as (
       select distinct on (e.resource_id) p.id, p.seq, p.next_attempt_at
         from pending p join webhook_events e on e.id = p.event_id
        order by e.resource_id, p.seq
     ), free as (
       select id, seq, next_attempt_at, (next_attempt_at is null or next_attempt_at <= now()) as due from heads where id <> all(?::uuid[])
     ), now_due as (
       select id, true as due, null::bigint as wait_ms from free where due order by seq limit ?
     )
     select id, due, wait_ms from now_due
     union all
     select null, false, greatest(0, ceil(extract(epoch from (min(next_attempt_at) - now())) * 1000))::bigint from free where not due
     having count(*) > 0`,
    [input.endpointId, input.exclude as string[], input.limit],
  );
  const due = rows.filter((r) => r.due).map((r) => r.id);
  const wait = rows.find((r) => !r.due);
  return { due, nextDueInMs: wait?.wait_ms == null ? null : Number(wait.wait_ms), endpointEnabled: true };
}

export interface DeliveryToSend {
  id: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  /** the JSON body, the same on every attempt and on "Send again" */
  body: string;
  /** the span that recorded the event (W3C traceparent, tracing on), which its sends continue; else null */
  traceparent: string | null;
  endpoint: {
    id: string;
    workspaceId: string;
    url: string;
    status: string;
    secret: string;
    previousSecret: string | null;
    previousSecretExpiresAt: Date | null;
  };
}

export async function deliveryToSend(db: Db, deliveryId: string): Promise<DeliveryToSend | null> {
  const row = await db('webhook_deliveries as d')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .join('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .where('d.id', deliveryId)
    .first<
      | {
          id: string;
          status: DeliveryToSend['status'];
          attempts: number;
          event_id: string;
          type: string;
          event_created_at: Date;
          payload: unknown;
          traceparent: string | null;
          endpoint_id: string;
          workspace_id: string;
          url: string;
          endpoint_status: string;
          secret: string;
          previous_secret: string | null;
          previous_secret_expires_at: Date | null;
        }
      | undefined
    >(
      'd.id',
      'd.status',
      'd.attempts',
      'e.id as event_id',
      'e.type',
      'e.created_at as event_created_at',
      'e.payload',
      'e.traceparent',
      'p.id as endpoint_id',
      'p.workspace_id',
      'p.url',
      'p.status as endpoint_status',
      'p.secret',
      'p.previous_secret',
      'p.previous_secret_expires_at',
    );
  if (!row) return null;
  return {
    id: row.id,
    status: row.status,
    attempts: row.attempts,
    eventId: row.event_id,
    eventType: row.type,
    eventCreatedAt: new Date(row.event_created_at),
    body: typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload),
    traceparent: row.traceparent,
    endpoint: {
      id: row.endpoint_id,
      workspaceId: row.workspace_id,
      url: row.url,
      status: row.endpoint_status,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret_expires_at ? new Date(row.previous_secret_expires_at) : null,
    },
  };
}

/**
 * Takes the delivery's send lease (migration 20261128000600) for `leaseMs` of database time: only while the delivery
 * is pending and nobody else holds an unexpired lease. True when this caller may send.
 */
export async function takeDeliveryLease(db: Db, input: { deliveryId: string; token: string; leaseMs: number }): Promise<boolean> {
  const taken = await db('webhook_deliveries')
    .where({ id: input.deliveryId, status: 'pending' })
    .andWhere((q) => q.whereNull('lease_expires_at').orWhere('lease_expires_at', '<=', db.fn.now()))
    .update({ lease_token: input.token, lease_expires_at: db.raw(`now() + ? * interval '1 millisecond'`, [input.leaseMs]) });
  return taken === 1;
}

/** Extends a lease this caller still holds (with each heartbeat); false when it lapsed and someone else took it. */
export async function renewDeliveryLease(db: Db, input: { deliveryId: string; token: string; leaseMs: number }): Promise<boolean> {
  const renewed = await db('webhook_deliveries')
    .where({ id: input.deliveryId, lease_token: input.token })
    .update({ lease_expires_at: db.raw(`now() + ? * interval '1 millisecond'`, [input.leaseMs]) });
  return renewed === 1;
}

/** Gives a lease back without recording an attempt (the send was stopped before an answer). */
export async function releaseDeliveryLease(db: Db, input: { deliveryId: string; token: string }): Promise<void> {
  await db('webhook_deliveries').where({ id: input.deliveryId, lease_token: input.token }).update({ lease_token: null, lease_expires_at: null });
}

/** How long until another sender's lease on a pending delivery lapses (ms); null when it is not pending or not leased. */
export async function deliveryLeaseRemainingMs(db: Db, deliveryId: string): Promise<number | null> {
  const row = await db('webhook_deliveries')
    .where({ id: deliveryId, status: 'pending' })
    .whereNotNull('lease_expires_at')
    .first<{ remaining_ms: string | null } | undefined>(db.raw('greatest(0, ceil(extract(epoch from (lease_expires_at - now())) * 1000))::bigint as remaining_ms'));
  return row?.remaining_ms == null ? null : Number(row.remaining_ms);
}

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  workspaceId: string;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  requestBody: string;
  responseBody: string | null;
  verdict: WebhookAnswerVerdict;
  /** for 'retry': when to try again; null: give up (the delivery's 3 days are over) */
  nextAttemptAt: Date | null;
  /** the endpoint's failure streak that disables it */
  disableAfterMs: number;
  disableMinFailures: number;
  /** the sender's lease (takeDeliveryLease), cleared with the record */
  leaseToken: string;
}

export interface AttemptOutcome {
  /** the delivery's state after this attempt */
  status: 'pending' | 'succeeded' | 'failed';
  /** set when this attempt disabled the endpoint (410, or the failure streak) */
  endpointDisabled: string | null;
}

export const WEBHOOK_DISABLED_GONE = 'The endpoint answered 410 Gone, which asks for no more deliveries. Turn it on again to resume.';
export const webhookDisabledFailing = (days: number, failures: number) =>
  `Every delivery attempt failed for ${days} days (${failures} attempts in a row). Fix the receiver, then turn the endpoint on again.`;

/**
 * Records one attempt and what it means, in one transaction: the attempt row, the delivery's state (only while it is
 * still pending: a delivery already settled stays as it is), the endpoint's failure streak, and disabling the
 * endpoint on 410 or after the streak; the workspace's streams hear of it.
 */
export async function recordAttempt(knex: Knex, a: AttemptRecord): Promise<AttemptOutcome> {
  return knex.transaction(async (trx) => {
    await trx('webhook_delivery_attempts').insert({
      delivery_id: a.deliveryId,
      status_code: a.statusCode,
      error: a.error,
      latency_ms: a.latencyMs,
      request_body: a.requestBody,
      response_body: a.responseBody,
    });
    const status: AttemptOutcome['status'] = a.verdict === 'succeeded' ? 'succeeded' : a.verdict === 'retry' && a.nextAttemptAt ? 'pending' : 'failed';
    const lastError = a.error ?? (a.verdict === 'succeeded' ? null : a.verdict === 'retry' && !a.nextAttemptAt ? `Gave up: HTTP ${a.statusCode}, still failing after the retry window` : `HTTP ${a.statusCode}`);
    const updated = await trx('webhook_deliveries')
      .where({ id: a.deliveryId, status: 'pending' })
      .update({
        status,
        attempts: trx.raw('attempts + 1'),
        last_status_code: a.statusCode,
        last_error: a.verdict === 'succeeded' ? null : lastError,
        last_latency_ms: a.latencyMs,
        next_attempt_at: status === 'pending' ? a.nextAttemptAt : null,
        delivered_at: status === 'succeeded' ? trx.fn.now() : null,
        updated_at: trx.fn.now(),
        // the lease ends with the record (one someone took after this one lapsed is theirs to end)
        lease_token: trx.raw('case when lease_token = ? then null else lease_token end', [a.leaseToken]),
        lease_expires_at: trx.raw('case when lease_token = ? then null else lease_expires_at end', [a.leaseToken]),
      });
    let endpointDisabled: string | null = null;
    if (a.verdict === 'succeeded') {
      // only when a streak ends: parallel successes do not queue on the endpoint's row lock
      await trx('webhook_endpoints')
        .where({ id: a.endpointId })
        .andWhere((q) => q.where('consecutive_failures', '<>', 0).orWhereNotNull('failing_since'))
        .update({ consecutive_failures: 0, failing_since: null });
    } else {
      // a streak starts at the first failure after a 2xx, or after an admin turned the endpoint on again (count reset)
      const [streak] = await trx('webhook_endpoints')
        .where({ id: a.endpointId })
        .update({
          consecutive_failures: trx.raw('consecutive_failures + 1'),
          failing_since: trx.raw('case when consecutive_failures = 0 or failing_since is null then now() else failing_since end'),
        })
        .returning<Array<{ consecutive_failures: number; failing_since: Date; status: string; failing_ms: string }>>([
          'consecutive_failures',
          'failing_since',
          'status',
          trx.raw('floor(extract(epoch from (now() - failing_since)) * 1000)::bigint as failing_ms') as unknown as string,
        ]);
      if (streak && streak.status === 'enabled') {
        if (a.verdict === 'gone') endpointDisabled = WEBHOOK_DISABLED_GONE;
        else if (streak.consecutive_failures >= a.disableMinFailures && Number(streak.failing_ms) >= a.disableAfterMs) {
          endpointDisabled = webhookDisabledFailing(Math.max(1, Math.round(a.disableAfterMs / 86_400_000)), streak.consecutive_failures);
        }
      }
      if (endpointDisabled) {
        await trx('webhook_endpoints')
          .where({ id: a.endpointId, status: 'enabled' })
          .update({ status: 'disabled', disabled_reason: endpointDisabled, disabled_at: trx.fn.now(), updated_at: trx.fn.now() });
        await publishEvent(trx, a.workspaceId, { kind: 'webhook', change: 'disabled', workspaceId: a.workspaceId, endpointId: a.endpointId });
      }
    }
    if (updated) await publishEvent(trx, a.workspaceId, { kind: 'webhook', change: 'deliveries', workspaceId: a.workspaceId, endpointId: a.endpointId });
    return { status: updated ? status : 'failed', endpointDisabled };
  });
}

/** Settles a delivery without sending it (its retry window ended while it waited), with the reason in the log. */
export async function giveUpDelivery(knex: Knex, input: { deliveryId: string; workspaceId: string; endpointId: string; reason: string }): Promise<void> {
  await knex.transaction(async (trx) => {
    const updated = await trx('webhook_deliveries')
      .where({ id: input.deliveryId, status: 'pending' })
      .update({ status: 'failed', last_error: input.reason, next_attempt_at: null, updated_at: trx.fn.now() });
    if (updated) await publishEvent(trx, input.workspaceId, { kind: 'webhook', change: 'deliveries', workspaceId: input.workspaceId, endpointId: input.endpointId });
  });
}

/**
 * The enabled endpoints with a delivery that should have been sent by now (due for `graceMs` or more, or never
 * tried and older than that): the relay's sweep wakes their workflows in case a NOTIFY was missed or a workflow
 * ended. A delivery in flight or waiting behind an earlier one of its resource may be among them: waking a workflow
 * that is busy costs one claim.
 */
export async function endpointsWithOverdueDeliveries(db: Db, graceMs: number, limit = 1000): Promise<string[]> {
  const { rows } = await db.raw<{ rows: Array<{ endpoint_id: string }> }>(
    `select p.id as endpoint_id from webhook_endpoints p
      where p.status = 'enabled' and exists (
        select 1 from webhook_deliveries d
         where d.endpoint_id = p.id and d.status = 'pending'
           and coalesce(d.next_attempt_at, d.created_at) <= now() - (? * interval '1 millisecond'))
      limit ?`,
    [graceMs, limit],
  );
  return rows.map((r) => r.endpoint_id);
}

// ---------------------------------------------------------------------------------------------------------------
// The delivery log (API)

interface DeliveryRow {
  id: string;
  seq: string;
  event_id: string;
  type: AnyWebhookEventType;
  resource_id: string;
  status: DeliveryView['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  payload: unknown;
  response_body: string | null;
  request_body: string | null;
  redelivery_of: string | null;
  redelivery_of_created_at: Date | null;
}

function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    resourceId: row.resource_id,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastLatencyMs: row.last_latency_ms,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    createdAt: iso(row.created_at) as string,
    deliveredAt: iso(row.delivered_at),
    requestBody: row.request_body ?? (row.payload === null || row.payload === undefined ? null : JSON.stringify(row.payload).slice(0, 4096)),
    responseBody: row.response_body,
    redeliveryOf: row.redelivery_of ? { id: row.redelivery_of, createdAt: iso(row.redelivery_of_created_at) as string } : null,
  };
}

function deliveryQuery(db: Db, endpointId: string) {
  return db('webhook_deliveries as d')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .leftJoin('webhook_deliveries as original', 'original.id', 'd.redelivery_of')
    .joinRaw(
      `left join lateral (select a.request_body, a.response_body from webhook_delivery_attempts a where a.delivery_id = d.id order by a.id desc limit 1) last on true`,
    )
    .where('d.endpoint_id', endpointId)
    .select(
      'd.id',
      'd.seq',
      'd.event_id',
      'e.type',
      'e.resource_id',
      'd.status',
      'd.attempts',
      'd.last_status_code',
      'd.last_error',
      'd.last_latency_ms',
      'd.next_attempt_at',
      'd.created_at',
      'd.delivered_at',
      'e.payload',
      'last.request_body',
      'last.response_body',
      'd.redelivery_of',
      'original.created_at as redelivery_of_created_at',
    );
}

export const DELIVERY_PAGE_DEFAULT = 25;
export const DELIVERY_PAGE_MAX = 100;

/** The endpoint's deliveries, newest first, a page at a time (`cursor`: the previous page's nextCursor). */
export async function listDeliveries(
  db: Db,
  input: { workspaceId: string; endpointId: string; cursor?: string | null; limit?: number },
): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
  const endpoint = await requireEndpoint(db, input.workspaceId, input.endpointId);
  const limit = input.limit ?? DELIVERY_PAGE_DEFAULT;
  const query = deliveryQuery(db, endpoint.id)
    .orderBy('d.seq', 'desc')
    .limit(limit + 1);
  if (input.cursor) query.where('d.seq', '<', input.cursor);
  const rows = (await query) as DeliveryRow[];
  const page = rows.slice(0, limit);
  return { deliveries: page.map(deliveryView), nextCursor: rows.length > limit ? String(page[page.length - 1].seq) : null };
}

async function requireDelivery(db: Db, endpointId: string, deliveryId: string): Promise<DeliveryRow> {
  if (!UUID.test(deliveryId)) throw new WebhookDeliveryNotFoundError();
  const row = (await deliveryQuery(db, endpointId).where('d.id', deliveryId.toLowerCase()).first()) as DeliveryRow | undefined;
  if (!row) throw new WebhookDeliveryNotFoundError();
  return row;
}

/** One delivery with every attempt, oldest first. */
export async function getDelivery(db: Db, input: { workspaceId: string; endpointId: string; deliveryId: string }): Promise<{ delivery: DeliveryView; attempts: AttemptView[] }> {
  const endpoint = await requireEndpoint(db, input.workspaceId, input.endpointId);
  const row = await requireDelivery(db, endpoint.id, input.deliveryId);
  const attempts = (await db('webhook_delivery_attempts').where({ delivery_id: row.id }).orderBy('id')) as Array<{
    attempted_at: Date;
    status_code: number | null;
    error: string | null;
    latency_ms: number | null;
    request_body: string | null;
    response_body: string | null;
  }>;
  return {
    delivery: deliveryView(row),
    attempts: attempts.map((a) => ({
      attemptedAt: iso(a.attempted_at) as string,
      statusCode: a.status_code,
      error: a.error,
      latencyMs: a.latency_ms,
      requestBody: a.request_body,
      responseBody: a.response_body,
    })),
  };
}

/**
 * "Send again": a new delivery of the same event to the same endpoint (same `webhook-id`, so the receiver can tell),
 * whatever became of the first, marked as a re-send of it (`redelivery_of`) in the log. The insert's NOTIFY wakes
 * the relay.
 */
export async function redeliver(knex: Knex, input: { workspaceId: string; endpointId: string; deliveryId: string }): Promise<DeliveryView> {
  return knex.transaction(async (trx) => {
    const endpoint = await requireEndpoint(trx, input.workspaceId, input.endpointId);
    if (endpoint.status !== 'enabled') throw new WebhookEndpointDisabledError();
    const original = await requireDelivery(trx, endpoint.id, input.deliveryId);
    const [added] = await trx('webhook_deliveries')
      .insert({ endpoint_id: endpoint.id, event_id: original.event_id, redelivery_of: original.id })
      .returning<Array<{ id: string }>>('id');
    return deliveryView(await requireDelivery(trx, endpoint.id, added.id));
  });
}

/** "Send test event": a `webhook.test` event for this endpoint only. */
export async function sendTestEvent(knex: Knex, input: { workspaceId: string; endpointId: string }): Promise<DeliveryView> {
  return knex.transaction(async (trx) => {
    const endpoint = await requireEndpoint(trx, input.workspaceId, input.endpointId);
    if (endpoint.status !== 'enabled') throw new WebhookEndpointDisabledError();
    const { deliveryId } = await recordTestEvent(trx, { id: endpoint.id, workspaceId: endpoint.workspace_id });
    return deliveryView(await requireDelivery(trx, endpoint.id, deliveryId));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Pruning

const PRUNE_BATCH = 5000;

/**
 * Removes delivery log rows older than `retentionDays`: attempts, settled deliveries (not one a kept re-send names),
 * and events none of whose deliveries is still pending (their deliveries and attempts go with them). In batches, so no statement holds many
 * locks for long. Returns the events removed.
 */
export async function pruneWebhookLog(knex: Knex, retentionDays: number): Promise<{ events: number; deliveries: number; attempts: number }> {
  const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
  let attempts = 0;
  let deliveries = 0;
  let events = 0;
  for (;;) {
    const n = await knex.raw<{ rowCount: number }>(
      `delete from webhook_delivery_attempts where id in (select id from webhook_delivery_attempts where attempted_at < ? limit ${PRUNE_BATCH})`,
      [cutoff],
    );
    attempts += n.rowCount;
    if (n.rowCount < PRUNE_BATCH) break;
  }
  for (;;) {
    const n = await knex.raw<{ rowCount: number }>(
      // a delivery that was sent again stays while its re-send does: the log keeps saying what the re-send re-sent
      `delete from webhook_deliveries where id in (
         select d.id from webhook_deliveries d where d.created_at < ? and d.status <> 'pending'
            and not exists (select 1 from webhook_deliveries r where r.redelivery_of = d.id)
          limit ${PRUNE_BATCH})`,
      [cutoff],
    );
    deliveries += n.rowCount;
    if (n.rowCount < PRUNE_BATCH) break;
  }
  for (;;) {
    const n = await knex.raw<{ rowCount: number }>(
      `delete from webhook_events where id in (
         select e.id from webhook_events e where e.created_at < ?
            and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
          limit ${PRUNE_BATCH})`,
      [cutoff],
    );
    events += n.rowCount;
    if (n.rowCount < PRUNE_BATCH) break;
  }
  return { events, deliveries, attempts };
}
