/**
 * Whether this process traces (OpenTelemetry), read from the standard OTEL_* variables only: off unless an OTLP
 * endpoint or a traces exporter is named. Nothing here loads the SDK; services/platform/tracing.ts does, and only
 * when this says on, so a process with tracing off pays one look at its environment.
 */
export type TracesExporterKind = 'otlp' | 'console';

export interface TracingSettings {
  exporter: TracesExporterKind;
  /** OTEL_SERVICE_NAME, else the process's own default (`render-studio-api`, `render-studio-worker`) */
  serviceName: string;
}

/** The tracing settings, or null when tracing is off. */
export function tracingSettings(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): TracingSettings | null {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return null;
  const named = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (named === 'none') return null;
  let exporter: TracesExporterKind | null = null;
  if (named === 'console') exporter = 'console';
  else if (named === 'otlp' || (!named && endpoint)) exporter = 'otlp';
  else if (named) throw new Error(`OTEL_TRACES_EXPORTER=${named} is not supported here: use otlp, console or none`);
  if (!exporter) return null;
  return { exporter, serviceName: env.OTEL_SERVICE_NAME || defaultServiceName };
}

/**
 * Set once tracing has started in this process (services/platform/tracing.ts): the lower layers (storage, the logger)
 * add their spans and trace ids only then, and otherwise take no step at all.
 */
let active = false;

export function markTracingActive(on: boolean): void {
  active = on;
}

export function tracingActive(): boolean {
  return active;
}

type OtelApi = typeof import('@opentelemetry/api');
let otel: OtelApi | null = null;

/** The span running now (a request's, an activity's) while tracing runs; otherwise nothing is loaded or looked at. */
function activeSpanContext(): import('@opentelemetry/api').SpanContext | null {
  if (!active) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  otel ??= require('@opentelemetry/api') as OtelApi;
  const context = otel.trace.getSpan(otel.context.active())?.spanContext();
  return context && otel.isSpanContextValid(context) ? context : null;
}

/** The id of the trace running now (written on a job's row at its start), or null: tracing off, or no span. */
export function currentTraceId(): string | null {
  return activeSpanContext()?.traceId ?? null;
}

/**
 * The span running now as a W3C `traceparent` (version 00), or null: stored with work that goes on later in another
 * process (a webhook event's deliveries), so that work continues this trace.
 */
export function currentTraceparent(): string | null {
  const context = activeSpanContext();
  if (!context) return null;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A stored `traceparent`'s parts, or null for anything else. */
export function parseTraceparent(value: string | null | undefined): { traceId: string; spanId: string; traceFlags: number } | null {
  const match = TRACEPARENT.exec(value ?? '');
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return null;
  return { traceId: match[1], spanId: match[2], traceFlags: parseInt(match[3], 16) };
}
