/**
 * The webhook delivery settings of a worker process, from the environment (declared in config/variables.ts) with the
 * defaults of domain/webhookDelivery.ts. Kept out of the app-wide config because only the worker's delivery code
 * reads them; tests and the benchmark pass their own (short retries) instead.
 */
import {
  WEBHOOK_DISABLE_AFTER_MS,
  WEBHOOK_DISABLE_MIN_FAILURES,
  WEBHOOK_LOG_RETENTION_DAYS,
  WEBHOOK_PARALLELISM,
  WEBHOOK_RETRY_BASE_MS,
  WEBHOOK_RETRY_MAX_MS,
  WEBHOOK_RETRY_WINDOW_MS,
  WEBHOOK_TIMEOUT_MS,
} from '../../domain/webhookDelivery';

export interface WebhookDeliverySettings {
  retryBaseMs: number;
  retryMaxMs: number;
  retryWindowMs: number;
  timeoutMs: number;
  disableAfterMs: number;
  disableMinFailures: number;
  parallelism: number;
  /** the relay's sweep for deliveries whose NOTIFY was missed */
  sweepEveryMs: number;
  /** an endpoint's workflow ends after this long with nothing to send */
  idleMs: number;
  retentionDays: number;
  /** a send's lease on its delivery (renewed with each heartbeat): how long a dead sender keeps others waiting */
  leaseMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERY_SETTINGS: WebhookDeliverySettings = {
  retryBaseMs: WEBHOOK_RETRY_BASE_MS,
  retryMaxMs: WEBHOOK_RETRY_MAX_MS,
  retryWindowMs: WEBHOOK_RETRY_WINDOW_MS,
  timeoutMs: WEBHOOK_TIMEOUT_MS,
  disableAfterMs: WEBHOOK_DISABLE_AFTER_MS,
  disableMinFailures: WEBHOOK_DISABLE_MIN_FAILURES,
  parallelism: WEBHOOK_PARALLELISM,
  sweepEveryMs: 60_000,
  idleMs: 10 * 60 * 1000,
  retentionDays: WEBHOOK_LOG_RETENTION_DAYS,
  leaseMs: 30_000,
};

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got "${raw}")`);
  return value;
}

export function webhookDeliverySettings(env: NodeJS.ProcessEnv = process.env): WebhookDeliverySettings {
  const d = DEFAULT_WEBHOOK_DELIVERY_SETTINGS;
  return {
    retryBaseMs: positive('WEBHOOK_RETRY_BASE_MS', env.WEBHOOK_RETRY_BASE_MS, d.retryBaseMs),
    retryMaxMs: positive('WEBHOOK_RETRY_MAX_MS', env.WEBHOOK_RETRY_MAX_MS, d.retryMaxMs),
    retryWindowMs: positive('WEBHOOK_RETRY_WINDOW_MS', env.WEBHOOK_RETRY_WINDOW_MS, d.retryWindowMs),
    timeoutMs: positive('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, d.timeoutMs),
    disableAfterMs: positive('WEBHOOK_DISABLE_AFTER_MS', env.WEBHOOK_DISABLE_AFTER_MS, d.disableAfterMs),
    disableMinFailures: Math.floor(positive('WEBHOOK_DISABLE_MIN_FAILURES', env.WEBHOOK_DISABLE_MIN_FAILURES, d.disableMinFailures)),
    parallelism: Math.floor(positive('WEBHOOK_PARALLELISM', env.WEBHOOK_PARALLELISM, d.parallelism)),
    sweepEveryMs: positive('WEBHOOK_SWEEP_INTERVAL_MS', env.WEBHOOK_SWEEP_INTERVAL_MS, d.sweepEveryMs),
    idleMs: d.idleMs,
    retentionDays: positive('WEBHOOK_LOG_RETENTION_DAYS', env.WEBHOOK_LOG_RETENTION_DAYS, d.retentionDays),
    leaseMs: d.leaseMs,
  };
}
