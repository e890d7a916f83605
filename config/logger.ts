import pino from 'pino';
import { logLevelFrom } from './env';
import { tracingActive } from './tracing';

type OtelApi = typeof import('@opentelemetry/api');
let otel: OtelApi | null = null;
const NO_FIELDS = {};

/**
 * The trace of the current request or activity on every line while tracing runs (services/platform/tracing.ts), so
 * a line leads to its trace and a trace to its lines; with tracing off, one check and nothing is loaded.
 */
function traceFields(): Record<string, string> {
  if (!tracingActive()) return NO_FIELDS;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  otel ??= require('@opentelemetry/api') as OtelApi;
  const context = otel.trace.getSpan(otel.context.active())?.spanContext();
  if (!context || !otel.isSpanContextValid(context)) return NO_FIELDS;
  return { trace_id: context.traceId, span_id: context.spanId };
}

export const logger = pino({ level: logLevelFrom(), base: { service: process.env.SERVICE_NAME ?? 'render-studio' }, mixin: traceFields });
export type Logger = typeof logger;
