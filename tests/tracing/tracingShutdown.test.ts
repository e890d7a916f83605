/**
 * Shutting tracing down leaves nothing of it running in the process: NodeSDK.shutdown() ends the providers only, so
 * services/platform/tracing.ts also stops the instrumentations. Without that, a jest worker that ran a tracing test
 * file went on calling that file's OpenTelemetry code from every later file's fetch (undici's diagnostics channels are
 * process-wide).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../services/platform/tracing';

const UNDICI_CHANNELS = ['undici:request:create', 'undici:client:sendHeaders', 'undici:request:headers', 'undici:request:trailers', 'undici:request:error'];

function subscribed(): string[] {
  return UNDICI_CHANNELS.filter((name) => diagnosticsChannel.channel(name).hasSubscribers);
}

test('after shutdown no undici subscription or global tracer of the tracing is left', async () => {
  expect(subscribed()).toEqual([]);
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({ serviceName: 'render-studio-shutdown', spanExporter: exporter })!;
  expect(subscribed()).toEqual(UNDICI_CHANNELS);

  // a fetch while on makes a span
  await fetch('data:text/plain,x').catch(() => undefined);
  trace.getTracer('check').startSpan('on').end();
  await tracing.flush();
  expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(expect.arrayContaining(['on']));

  await tracing.shutdown();
  expect(subscribed()).toEqual([]);
  exporter.reset();
  trace.getTracer('check').startSpan('off').end();
  await tracing.flush();
  expect(exporter.getFinishedSpans()).toEqual([]);
  expect(trace.getTracer('check').startSpan('off').spanContext().traceId).toBe('00000000000000000000000000000000');
});
