/**
 * The worker's connection to Temporal, made at start. A Temporal that refuses (restarting, not up yet after a host
 * reboot, a network blip) is tried again with a back-off (1 s, doubling, at most 15 s) until TEMPORAL_CONNECT_WAIT_SECONDS
 * have passed, and only then does the start fail. Without the wait a worker restarted during a Temporal outage exits at
 * once, is restarted and exits again, and its supervisor (npm start, start:scaled) sees a crash loop within a minute and
 * stops everything, the APIs included. Once connected, the SDK itself keeps polling through later outages.
 *
 * SIGINT or SIGTERM while waiting ends the wait: the worker stops without having started (`stopped`).
 */
import type { Logger } from '../config/logger';

export interface ConnectOptions<C> {
  address: string;
  /** 0: the first refusal is final */
  waitSeconds: number;
  logger: Pick<Logger, 'warn' | 'info'>;
  connect: () => Promise<C>;
  /** first pause between attempts (ms); doubles up to maxDelayMs */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export type ConnectResult<C> = { connection: C; stopped: false } | { connection: null; stopped: true };

export async function connectWhenReachable<C>(options: ConnectOptions<C>): Promise<ConnectResult<C>> {
  const { address, waitSeconds, logger, connect } = options;
  const started = Date.now();
  const deadline = started + waitSeconds * 1000;
  let delay = options.initialDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 15_000;
  let stopped = false;
  let wake: (() => void) | null = null;
  const onSignal = () => {
    stopped = true;
    wake?.();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const connection = await connect();
        if (attempt > 1) logger.info({ address, attempts: attempt, waitedMs: Date.now() - started }, 'reached Temporal');
        return { connection, stopped: false };
      } catch (err) {
        const left = deadline - Date.now();
        if (left <= 0 || stopped) {
          if (stopped) return { connection: null, stopped: true };
          throw err;
        }
        const pause = Math.min(delay, maxDelay, left);
        logger.warn(
          { err, address, attempt, retryInMs: pause, givesUpInS: Math.ceil(left / 1000) },
          `Temporal at ${address} is not reachable; trying again in ${Math.round(pause / 100) / 10} s (TEMPORAL_CONNECT_WAIT_SECONDS)`,
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pause);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
        if (stopped) return { connection: null, stopped: true };
        delay *= 2;
      }
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
