/**
 * A workflow interceptor module (registered by the worker, not exported from workflows/index.ts): Temporal's
 * OpenTelemetry workflow interceptors (RunWorkflow, StartActivity, signals and updates as spans, exported through the
 * worker's `exporter` sink; services/platform/tracing.ts), gated on the trace header.
 *
 * The interceptors add awaits of their own around each call, and spans are only wanted for runs a traced client
 * started. So they act only for a run whose start carried the `_tracer-data` header (and for a signal, update or
 * query carrying it); every other run passes straight through, exactly as before the module existed: a history
 * recorded before tracing was turned on replays with it on (tests/tracing/replayWithTracing.test.ts).
 */
import type {
  ActivityInput,
  ContinueAsNewInput,
  DisposeInput,
  GetLogAttributesInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type { Headers } from '@temporalio/common';
import type { OpenTelemetryInboundInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow';

type OtelWorkflowModule = typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');

/**
 * The package's workflow interceptors, loaded by the first traced run that needs them. Imported at the top, the
 * package and OpenTelemetry's trace SDK were evaluated for every workflow run (each run has its own module cache in
 * the SDK's reused context), traced or not: about a tenth of a hosted clip's workflow-thread CPU with tracing off.
 */
function otel(): OtelWorkflowModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@temporalio/interceptors-opentelemetry/lib/workflow') as OtelWorkflowModule;
}

/** The header Temporal's OpenTelemetry interceptors carry the span context in (TRACE_HEADER of the package). */
export const TRACE_HEADER = '_tracer-data';

function carriesTrace(headers: Headers): boolean {
  return Object.prototype.hasOwnProperty.call(headers, TRACE_HEADER);
}

/** One per workflow run: whether its start was traced, and the package's interceptors, made only if it was. */
class RunTracing {
  traced = false;
  private inboundOtel: OpenTelemetryInboundInterceptor | null = null;
  private outboundOtel: OpenTelemetryOutboundInterceptor | null = null;

  inbound(): OpenTelemetryInboundInterceptor {
    return (this.inboundOtel ??= new (otel().OpenTelemetryInboundInterceptor)());
  }

  outbound(): OpenTelemetryOutboundInterceptor {
    return (this.outboundOtel ??= new (otel().OpenTelemetryOutboundInterceptor)());
  }
}

class GatedInbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly run: RunTracing) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    this.run.traced = carriesTrace(input.headers);
    return this.run.traced ? this.run.inbound().execute(input, next) : next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    return carriesTrace(input.headers) ? this.run.inbound().handleSignal(input, next) : next(input);
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    return carriesTrace(input.headers) ? this.run.inbound().handleUpdate(input, next) : next(input);
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    if (carriesTrace(input.headers)) this.run.inbound().validateUpdate(input, next);
    else next(input);
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    return carriesTrace(input.headers) ? this.run.inbound().handleQuery(input, next) : next(input);
  }
}

class GatedOutbound implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly run: RunTracing) {}

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return this.run.traced ? this.run.outbound().scheduleActivity(input, next) : next(input);
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    return this.run.traced ? this.run.outbound().scheduleLocalActivity(input, next) : next(input);
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    return this.run.traced ? this.run.outbound().startChildWorkflowExecution(input, next) : next(input);
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return this.run.traced ? this.run.outbound().continueAsNew(input, next) : next(input);
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    return this.run.traced ? this.run.outbound().signalWorkflow(input, next) : next(input);
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>): Record<string, unknown> {
    return this.run.traced ? this.run.outbound().getLogAttributes(input, next) : next(input);
  }
}

class GatedInternals implements WorkflowInternalsInterceptor {
  constructor(private readonly run: RunTracing) {}

  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): Promise<void> | void {
    return this.run.traced ? new (otel().OpenTelemetryInternalsInterceptor)().dispose(input, next) : next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const run = new RunTracing();
  return { inbound: [new GatedInbound(run)], outbound: [new GatedOutbound(run)], internals: [new GatedInternals(run)] };
};
