/**
 * The application's Prometheus metrics (docs/operations.md "Metrics"): one prom-client registry per process, shared by the API
 * (served at GET /metrics) and the worker (served on WORKER_METRICS_PORT). Each process reports what happens in it:
 * HTTP requests, SSE clients and uploads in the API; jobs in the worker; credit movements wherever the ledger is
 * written (both). Prometheus sums the processes.
 *
 * Label values are always from small fixed sets (route patterns, job kinds, credit types), never ids or raw paths.
 */
import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CREDIT_COST } from '../../domain/constants';

export const metricsRegistry = new Registry();

let defaultMetricsStarted = false;

/**
 * Process metrics (CPU, memory, handles, GC) and the event-loop lag (`nodejs_eventloop_lag_*`), once per process.
 * Called by the entries that serve metrics, not on import, so a test importing a service starts no timers.
 */
export function collectProcessMetrics(): void {
  if (defaultMetricsStarted) return;
  defaultMetricsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP (API)

export const httpRequestsTotal = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, matched route pattern ("unmatched" when no route matched) and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request reaching the app to its response being set, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

/** Open Server-Sent Events streams of this API process. */
export const sseClients = new Gauge({
  name: 'sse_clients',
  help: 'Server-Sent Events clients connected to this API process.',
  registers: [metricsRegistry],
});

/**
 * Counts one SSE client until the returned function is called (when the stream closes). Calling it twice, say from
 * both the close and the error handler, counts the client out once.
 */
export function trackSseClient(): () => void {
  sseClients.inc();
  let connected = true;
  return () => {
    if (!connected) return;
    connected = false;
    sseClients.dec();
  };
}

/** Why the API refused or ended an event stream itself (docs/configuration.md "Live updates"). */
export type SseStreamStopReason = 'limit' | 'slow_reader' | 'session_ended';

export const sseStreamsStoppedTotal = new Counter({
  name: 'sse_streams_stopped_total',
  help:
    'Event streams the API refused or ended itself, by reason: limit (the account already had EVENT_STREAMS_PER_ACCOUNT open; answered 429), ' +
    'slow_reader (more than EVENT_STREAM_MAX_QUEUED_BYTES waited for a reader; dropped), session_ended (its session was signed out, expired or deleted).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});
for (const reason of ['limit', 'slow_reader', 'session_ended'] satisfies SseStreamStopReason[]) sseStreamsStoppedTotal.inc({ reason }, 0);

export function countSseStreamStopped(reason: SseStreamStopReason): void {
  sseStreamsStoppedTotal.inc({ reason });
}

export const uploadBytesTotal = new Counter({
  name: 'upload_bytes_total',
  help: 'Bytes of uploaded files stored, by kind of upload.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

/** The per-account upload limits (services/content/uploadLimits.ts), each with its own series from the start at 0. */
export const UPLOAD_LIMITS = ['tus_unfinished_uploads', 'tus_unfinished_bytes', 'draft_images', 'draft_references', 'draft_waiting_uploads'] as const;
export type UploadLimit = (typeof UPLOAD_LIMITS)[number];

export const uploadLimitRefusalsTotal = new Counter({
  name: 'upload_limit_refusals_total',
  help: 'Uploads refused because an account reached a limit, by limit (unfinished tus uploads or their bytes, a draft\'s images or waiting references, an account\'s waiting draft uploads).',
  labelNames: ['limit'] as const,
  registers: [metricsRegistry],
});
for (const limit of UPLOAD_LIMITS) uploadLimitRefusalsTotal.inc({ limit }, 0);

export const uploadsSweptTotal = new Counter({
  name: 'uploads_swept_total',
  help: 'Abandoned uploads removed by the sweeps, by kind (tus: unfinished resumable uploads past TUS_EXPIRATION_HOURS; draft: draft uploads never registered).',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});
for (const kind of ['tus', 'draft']) uploadsSweptTotal.inc({ kind }, 0);

// ---------------------------------------------------------------------------------------------------------------
// Jobs (worker): recorded by the workflow interceptor's sinks (workers/jobMetrics.ts)

export const jobsStartedTotal = new Counter({
  name: 'jobs_started_total',
  help: 'Jobs (workflow executions of a job kind) started.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const jobsCompletedTotal = new Counter({
  name: 'jobs_completed_total',
  help: 'Jobs that completed successfully.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const jobsFailedTotal = new Counter({
  name: 'jobs_failed_total',
  help: 'Jobs that failed (refusals, provider errors, timeouts).',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const jobsCancelledTotal = new Counter({
  name: 'jobs_cancelled_total',
  help: 'Jobs cancelled by a user or an operator.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const jobsInFlight = new Gauge({
  name: 'jobs_in_flight',
  help: 'Jobs started and not yet finished, as seen by this worker process (sum over workers).',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const jobDuration = new Histogram({
  name: 'job_duration_seconds',
  help: 'Wall-clock time from a job workflow starting to it finishing, by kind and outcome.',
  labelNames: ['kind', 'outcome'] as const,
  // image edits take seconds, clips minutes, exports anything up to an hour
  buckets: [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600],
  registers: [metricsRegistry],
});

// ---------------------------------------------------------------------------------------------------------------
// Credits (wherever services/billing/credits.ts runs): counted once a change has committed, never for an idempotent replay

export const creditsReservedTotal = new Counter({
  name: 'credits_reserved_total',
  help: 'Credits put on hold by new reservations.',
  labelNames: ['content_type'] as const,
  registers: [metricsRegistry],
});

export const creditsConsumedTotal = new Counter({
  name: 'credits_consumed_total',
  help: 'Reserved credits charged (an approved item).',
  labelNames: ['content_type'] as const,
  registers: [metricsRegistry],
});

export const creditsReleasedTotal = new Counter({
  name: 'credits_released_total',
  help: 'Reserved credits given back (failed, rejected, expired or cancelled items).',
  labelNames: ['content_type'] as const,
  registers: [metricsRegistry],
});

export const creditsAddedTotal = new Counter({
  name: 'credits_added_total',
  help: 'Credits added to balances, by ledger type (signup_bonus, purchase, add, positive admin_adjust).',
  labelNames: ['type'] as const,
  registers: [metricsRegistry],
});

export const creditsDeductedTotal = new Counter({
  name: 'credits_deducted_total',
  help: 'Credits taken from balances outside reservations, by ledger type (deduct, negative admin_adjust).',
  labelNames: ['type'] as const,
  registers: [metricsRegistry],
});

export type CreditMovement = 'reserved' | 'consumed' | 'released';

const CREDIT_MOVEMENT_COUNTERS: Record<CreditMovement, Counter<'content_type'>> = {
  reserved: creditsReservedTotal,
  consumed: creditsConsumedTotal,
  released: creditsReleasedTotal,
};

// every content type's series exists from the start at 0, so rates and ratios have both sides before the first move
for (const contentType of Object.keys(CREDIT_COST)) {
  for (const counter of Object.values(CREDIT_MOVEMENT_COUNTERS)) counter.inc({ content_type: contentType }, 0);
}

/** A reservation's credits moved (held, charged or given back). */
export function countCreditMovement(movement: CreditMovement, contentType: string, amount: number): void {
  CREDIT_MOVEMENT_COUNTERS[movement].inc({ content_type: contentType }, amount);
}

/** A signed balance change outside reservations (add, purchase, deduct, admin adjust). */
export function countBalanceChange(type: string, amount: number): void {
  if (amount > 0) creditsAddedTotal.inc({ type }, amount);
  else if (amount < 0) creditsDeductedTotal.inc({ type }, -amount);
}

/**
 * Runs `record` once the outermost transaction `db` belongs to has committed; never when it rolls back. With a
 * plain Knex (no transaction) it runs at once. The credit functions call it inside their own transaction, which is
 * a savepoint when the caller passed one, so a caller's later rollback leaves the counters untouched. (Knex resolves
 * the same promise for an explicit `trx.rollback()` without an error; nothing in the app rolls back that way.)
 */
export function afterCommit(db: Knex | Knex.Transaction, record: () => void): void {
  if (!db.isTransaction) {
    record();
    return;
  }
  let outermost = db as Knex.Transaction;
  while (outermost.parentTransaction) outermost = outermost.parentTransaction;
  outermost.executionPromise.then(record, () => undefined);
}
