import { Client, Connection } from '@temporalio/client';
import type { AppConfig } from '../../config/env';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ensureSearchAttributes } from './searchAttributes';
import { temporalClientInterceptors } from './tracing';

export type TemporalClientConfig = Pick<AppConfig, 'temporalAddress' | 'temporalNamespace'>;

export interface TemporalClientHandle {
  client: Client;
  close: () => Promise<void>;
}

/**
 * A new connection and client for TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE; the caller closes it. A connection that
 * fails to connect is closed here: `Connection.connect` leaves its gRPC channel open and reconnecting when it
 * throws, one more for every request that asks while Temporal is down.
 */
export async function createTemporalClient(config: TemporalClientConfig = loadConfig()): Promise<TemporalClientHandle> {
  const connection = Connection.lazy({ address: config.temporalAddress });
  try {
    await connection.ensureConnected();
  } catch (err) {
    await connection.close();
    throw err;
  }
  const client = new Client({ connection, namespace: config.temporalNamespace, interceptors: temporalClientInterceptors() });
  // every start carries the custom search attributes: a server without them would refuse each one
  await ensureSearchAttributes(connection, config.temporalNamespace).then(
    (added) => added.length > 0 && logger.info({ added, namespace: config.temporalNamespace }, 'registered search attributes'),
    (err: unknown) => logger.warn({ err, namespace: config.temporalNamespace }, 'could not check or register the search attributes; workflow starts may be refused'),
  );
  return { client, close: () => connection.close() };
}

let shared: Promise<TemporalClientHandle> | null = null;

/**
 * The process-wide client, connected on first use so the API starts even while Temporal is still coming up.
 * A failed connection is not cached: the next call tries again.
 */
export function getTemporalClient(config: TemporalClientConfig = loadConfig()): Promise<Client> {
  if (!shared) {
    const pending = createTemporalClient(config);
    shared = pending;
    pending.catch(() => {
      if (shared === pending) shared = null;
    });
  }
  return shared.then((handle) => handle.client);
}

export async function closeTemporalClient(): Promise<void> {
  const pending = shared;
  shared = null;
  if (!pending) return;
  const handle = await pending.catch(() => null);
  if (handle) await handle.close();
}

/** gRPC's UNAVAILABLE: no connection to the frontend (refused, reset, restarting). */
const GRPC_UNAVAILABLE = 14;
const CONNECT_FAILURES = new Set(['Failed to connect before the deadline', 'Failed to connect to Temporal server']);

/**
 * Whether an error (or one of its causes) says Temporal cannot be reached right now: the client's first connect
 * failed, or a call found no connection (UNAVAILABLE). The API answers 503 TEMPORAL_UNAVAILABLE with Retry-After for
 * it (a restart of Temporal, a network blip), not a 500.
 */
export function isTemporalUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    const { code, details, metadata, message } = e as { code?: unknown; details?: unknown; metadata?: unknown; message?: unknown };
    if (code === GRPC_UNAVAILABLE && typeof details === 'string' && metadata && typeof metadata === 'object') return true;
    if (typeof message === 'string' && CONNECT_FAILURES.has(message)) return true;
  }
  return false;
}
