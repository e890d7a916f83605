import type { Client, QueryDefinition } from '@temporalio/client';
import type { Logger } from '../../config/logger';
import { TIMED_OUT, withTimeout } from './timeouts';

/**
 * A running workflow's answer to a query, or null when it cannot give one in time: a query needs a worker, and with
 * none polling (or the run closed or gone, or Temporal unreachable) the caller answers from its row rather than hang.
 * The gRPC deadline cuts the call at `timeoutMs`; the timer half a second later covers a connection that never answers.
 */
export async function queryWorkflowOrNull<T>(
  client: Client | (() => Promise<Client | null>),
  workflowId: string,
  query: QueryDefinition<T, []>,
  options: { timeoutMs: number; logger?: Pick<Logger, 'debug'>; what: string },
): Promise<T | null> {
  try {
    const connected = typeof client === 'function' ? await client() : client;
    if (!connected) return null;
    const handle = connected.workflow.getHandle(workflowId);
    const answer = await withTimeout(
      connected.withDeadline(Date.now() + options.timeoutMs, () => handle.query(query)),
      options.timeoutMs + 500,
    );
    return answer === TIMED_OUT ? null : answer;
  } catch (err) {
    options.logger?.debug({ err, workflowId }, `${options.what} state query failed; answering from the row`);
    return null;
  }
}
