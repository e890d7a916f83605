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
