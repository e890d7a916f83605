/**
 * A workflow interceptor module (registered by the worker, not exported from workflows/index.ts): tells the worker
 * when a workflow starts and how it ends, through the `jobMetrics` sink. Sinks run outside the sandbox and, by
 * default, not during replay, so a job that a second worker replays after a crash is counted once.
 */
import {
  ContinueAsNew,
  isCancellation,
  proxySinks,
  workflowInfo,
  type Next,
  type Sinks,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';

export type JobOutcome = 'completed' | 'failed' | 'cancelled';

export interface JobMetricsSinks extends Sinks {
  jobMetrics: {
    started(): void;
    finished(outcome: JobOutcome): void;
  };
}

const { jobMetrics } = proxySinks<JobMetricsSinks>();

class JobMetricsInbound implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    // a run continued from an earlier one is the same job
    if (!workflowInfo().continuedFromExecutionRunId) jobMetrics.started();
    try {
      const result = await next(input);
      jobMetrics.finished('completed');
      return result;
    } catch (err) {
      if (!(err instanceof ContinueAsNew)) jobMetrics.finished(isCancellation(err) ? 'cancelled' : 'failed');
      throw err;
    }
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new JobMetricsInbound()] });
