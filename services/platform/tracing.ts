/**
 * OpenTelemetry for the API and the workers, started only when config/tracing.ts says on (the OTEL_* variables): the
 * SDK, its instrumentations and Temporal's interceptors are loaded here with require() inside the functions, so a
 * process with tracing off never loads them. startTracing() runs from the preload module (tracingPreload.ts), which
 * api/server.ts and workers/main.ts import first, so the instrumentations patch http, pg and the AWS SDK before
 * anything else loads them.
 *
 * Spans: Koa requests (api/middleware/tracing.ts names them by route), the Temporal client (StartWorkflow, signals,
 * updates, queries), the workflows (RunWorkflow, StartActivity, run in the sandbox and exported through a sink),
 * the activities (RunActivity), outgoing HTTP (undici: fetch to the providers, Stripe and webhook receivers; http),
 * PostgreSQL (pg, under knex) and the object storage (the AWS SDK, and storage/tracedObjectStorage.ts for either backend).
 */
import type { ClientInterceptors } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { Resource } from '@opentelemetry/resources';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { markTracingActive, parseTraceparent, tracingSettings } from '../../config/tracing';

export interface Tracing {
  serviceName: string;
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Sends what is buffered (the OTLP exporter batches). */
  flush: () => Promise<void>;
  /** Flushes, stops the instrumentations and unregisters the global tracer provider. */
  shutdown: () => Promise<void>;
}

export interface StartTracingOptions {
  /** the service.name when OTEL_SERVICE_NAME is unset */
  serviceName: string;
  /** Tests: export to this (e.g. the SDK's InMemorySpanExporter), span by span, whatever OTEL_* says. */
  spanExporter?: SpanExporter;
  env?: NodeJS.ProcessEnv;
}

let current: Tracing | null = null;

/** The tracing this process started, or null (tracing off). */
export function activeTracing(): Tracing | null {
  return current;
}

/**
 * Starts the SDK when OTEL_* turns tracing on (or a test hands in an exporter); null, having loaded nothing, when off.
 * A second call returns the first one's tracing.
 */
export function startTracing(options: StartTracingOptions): Tracing | null {
  if (current) return current;
  const settings = options.spanExporter ? { exporter: 'given' as const, serviceName: options.serviceName } : tracingSettings(options.serviceName, options.env);
  if (!settings) return null;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { Resource: ResourceClass } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const traceBase = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { AwsInstrumentation } = require('@opentelemetry/instrumentation-aws-sdk') as typeof import('@opentelemetry/instrumentation-aws-sdk');
  let spanProcessor: SpanProcessor;
  if (settings.exporter === 'given') {
    spanProcessor = new traceBase.SimpleSpanProcessor(options.spanExporter!);
  } else if (settings.exporter === 'console') {
    spanProcessor = new traceBase.BatchSpanProcessor(new traceBase.ConsoleSpanExporter());
  } else {
    // the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT itself
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
    spanProcessor = new traceBase.BatchSpanProcessor(new OTLPTraceExporter());
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = new ResourceClass({ 'service.name': settings.serviceName });
  // Koa 3 is beyond @opentelemetry/instrumentation-koa's range (<3): api/middleware/tracing.ts names the request spans
  const instrumentations = [
    new HttpInstrumentation({
      // the event stream and health probes would each be a trace of their own, all the time
      ignoreIncomingRequestHook: (req) => /^\/(health\/|metrics|api\/events)/.test(req.url ?? ''),
    }),
    new UndiciInstrumentation(),
    new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    new AwsInstrumentation({ suppressInternalInstrumentation: true }),
  ];
  const sdk = new NodeSDK({
    resource,
    // the resource is the one above: no detectors reading the host and process after start()
    autoDetectResources: false,
    spanProcessors: [spanProcessor],
    instrumentations,
    // only what the SDK is told here: no metrics or log exporters from the environment
    metricReader: undefined,
    logRecordProcessors: [],
  });
  sdk.start();
  markTracingActive(true);
  const tracing: Tracing = {
    serviceName: settings.serviceName,
    resource,
    spanProcessor,
    flush: () => spanProcessor.forceFlush(),
    shutdown: async () => {
      if (current === tracing) current = null;
      markTracingActive(false);
      await sdk.shutdown();
      stopInstrumentations(instrumentations);
    },
  };
  current = tracing;
  return tracing;
}

/**
 * What NodeSDK.shutdown() leaves in place (it ends the providers only): the instrumentations' patches of core modules,
 * their diagnostics-channel subscriptions (undici's, which are process-wide), and the global tracer provider, context
 * manager and propagator. A process that shuts tracing down and goes on (a test file in a jest worker that runs other
 * files next) would otherwise keep running this tracing's code on every fetch and every http request.
 */
function stopInstrumentations(instrumentations: Array<{ disable(): void }>): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  for (const instrumentation of instrumentations) instrumentation.disable();
  otel.trace.disable();
  otel.context.disable();
  otel.propagation.disable();
}

/** The Temporal client's interceptors: StartWorkflow and the other calls as spans, their context in the headers. */
export function temporalClientInterceptors(): ClientInterceptors | undefined {
  if (!current) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { OpenTelemetryWorkflowClientInterceptor } = require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/**
 * What Worker.create needs to trace: the activity interceptors (RunActivity, trace ids in the activity's log
 * attributes) and the `exporter` sink the workflow interceptors (workflows/tracingInterceptors.ts) send their spans
 * through. Empty when tracing is off.
 */
export function temporalWorkerTracing(): { interceptors?: WorkerInterceptors; sinks?: InjectedSinks<OpenTelemetrySinks> } {
  if (!current) return {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  return {
    interceptors: {
      activity: [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: otel.makeWorkflowExporter(current.spanProcessor, current.resource) },
  };
}

/**
 * The preload's start (api/tracingPreload.ts, workers/tracingPreload.ts): service.name `render-studio-<SERVICE_NAME>`
 * (npm start names its children `api`, `worker`), else `render-studio-<role>`.
 */
export function startProcessTracing(role: 'api' | 'worker'): Tracing | null {
  return startTracing({ serviceName: `render-studio-${process.env.SERVICE_NAME || role}` });
}

type SpanAttributes = Record<string, string | number | boolean>;

/**
 * Runs `work` in a span `name` that continues the trace of a stored `traceparent` (the span that recorded a webhook
 * event: the job's activity, the API request), linked to the span running now (the delivery's activity in the
 * endpoint's workflow), so one job's trace shows its webhooks' sends and their HTTP calls. Without a stored
 * traceparent the span is a child of the current one. With tracing off, `work` runs as it is and nothing is loaded.
 */
export async function inStoredTrace<T>(traceparent: string | null, name: string, attributes: SpanAttributes, work: (annotate: (more: SpanAttributes) => void) => Promise<T>): Promise<T> {
  if (!current) return work(() => undefined);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const stored = parseTraceparent(traceparent);
  const active = otel.context.active();
  const here = otel.trace.getSpan(active)?.spanContext();
  const parent = stored ? otel.trace.setSpanContext(otel.ROOT_CONTEXT, { ...stored, isRemote: true }) : active;
  const links = stored && here && otel.isSpanContextValid(here) ? [{ context: here }] : [];
  const span = otel.trace.getTracer('render-studio').startSpan(name, { kind: otel.SpanKind.INTERNAL, attributes, links }, parent);
  try {
    return await otel.context.with(otel.trace.setSpan(parent, span), () => work((more) => span.setAttributes(more)));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: otel.SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
