/**
 * How webhook deliveries are retried, given up and how an endpoint that keeps failing is disabled (DESIGN.md
 * "Integrations (tokens and webhooks)"). Pure: the delivery activities (activities/webhookDelivery.ts) apply it, the
 * docs page quotes these constants, and the delivery workflow (workflows/webhookDelivery.ts) imports its ids from here.
 *
 * The schedule is exponential backoff with full jitter, as Stripe's and AWS's guidance do it: after the n-th failed
 * attempt of a delivery the next one waits a random time between 0 and min(WEBHOOK_RETRY_MAX_MS,
 * WEBHOOK_RETRY_BASE_MS x 2^(n-1)), so receivers that fail together do not come back in step. A delivery still
 * failing WEBHOOK_RETRY_WINDOW_MS after its event was recorded is given up (one last attempt at the window's end).
 */

import type { AnyWebhookEventType } from './webhooks';

/** The first retry comes within this time; each later ceiling doubles. */
export const WEBHOOK_RETRY_BASE_MS = 30_000;
/** The longest wait between two attempts of one delivery (so a recovered receiver is reached within 6 hours). */
export const WEBHOOK_RETRY_MAX_MS = 6 * 60 * 60 * 1000;
/** How long a delivery is retried: 3 days from its event. */
export const WEBHOOK_RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
/** One attempt's limit: connect, send and the receiver's answer (a slower receiver is a timeout, retried). */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** The request and response bodies kept in the delivery log are cut to this many bytes. */
export const WEBHOOK_LOG_BODY_BYTES = 4096;
/**
 * An endpoint is disabled when every attempt to it has failed for this long (no 2xx since the first failure of the
 * streak) and the streak has at least WEBHOOK_DISABLE_MIN_FAILURES failed attempts; the workspace's admins are told.
 * An answer of 410 Gone disables it at once.
 */
export const WEBHOOK_DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000;
export const WEBHOOK_DISABLE_MIN_FAILURES = 10;
/** Deliveries of one endpoint in flight at once (each for a different resource: one resource's events go in order). */
export const WEBHOOK_PARALLELISM = 10;
/** Delivery log rows (events, deliveries, attempts) older than this are pruned by the daily schedule. */
export const WEBHOOK_LOG_RETENTION_DAYS = 30;

/** The wait before the next attempt after `failedAttempts` failed ones (>= 1), with full jitter; `random` in [0, 1). */
export function webhookRetryDelayMs(failedAttempts: number, random: number, policy: { baseMs: number; maxMs: number } = { baseMs: WEBHOOK_RETRY_BASE_MS, maxMs: WEBHOOK_RETRY_MAX_MS }): number {
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 40);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.floor(random * ceiling);
}

/** What an answer (or its absence) means for the delivery. */
export type WebhookAnswerVerdict = 'succeeded' | 'retry' | 'failed' | 'gone';

/**
 * 2xx delivered; 410 Gone disables the endpoint; 408, 429 and 5xx are retried like timeouts and connection errors
 * (`status` null); any other 4xx fails that delivery (the receiver refused this request; sending it again would not
 * help); anything else (1xx, 3xx: redirects are not followed) is retried, since a fixed configuration then succeeds.
 */
export function webhookAnswerVerdict(status: number | null): WebhookAnswerVerdict {
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'succeeded';
  if (status === 410) return 'gone';
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  if (status >= 400) return 'failed';
  return 'retry';
}

/** The delivery workflow of an endpoint: one per endpoint, started or woken by the relay with signalWithStart. */
export function webhookEndpointWorkflowId(endpointId: string): string {
  return `webhook-endpoint-${endpointId}`;
}

export const WEBHOOK_WAKE_SIGNAL = 'webhookDeliveriesAdded';

export interface WebhookEndpointWorkflowInput {
  endpointId: string;
  /** deliveries in flight at once (WEBHOOK_PARALLELISM) */
  parallelism: number;
  /** how long the workflow waits idle for a signal before it ends (the relay starts it again) */
  idleMs: number;
}

export interface WebhookEndpointWorkflowResult {
  sent: number;
  /** 'idle': nothing left to send; 'disabled': the endpoint is disabled or gone */
  ended: 'idle' | 'disabled';
}

/** The Temporal schedule that prunes old delivery log rows once a day. */
export const WEBHOOK_PRUNE_SCHEDULE_ID = 'webhook-log-prune';
export const WEBHOOK_PRUNE_EVERY = '1 day';

/** One event sent to one endpoint, as the delivery log shows it (GET .../deliveries): its state, attempts, last answer and next retry. */
export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: AnyWebhookEventType;
  resourceId: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  /** the body sent (cut to the log's size) */
  requestBody: string | null;
  /** the last answer's body (cut to the log's size) */
  responseBody: string | null;
  /**
   * Made by "Send again": the delivery this one sends again (its id, and when that one was made), so the log tells a
   * re-send from the original; null for the delivery the event itself made.
   */
  redeliveryOf: { id: string; createdAt: string } | null;
}

export interface AttemptView {
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
  requestBody: string | null;
  responseBody: string | null;
}
