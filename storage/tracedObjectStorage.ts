import type { Bucket, ObjectStorage } from './objectStorage';

type OtelApi = typeof import('@opentelemetry/api');

const TRACED = new Set(['put', 'remove', 'removePrefix']);

/**
 * `objects` with a span around each write (`storage.put images`, `storage.remove`...), for either backend: on disk
 * no instrumentation sees the write, and on S3 the AWS SDK's own spans (aws-sdk instrumentation) nest under it.
 * createStorage wraps only while tracing runs. Everything else passes to the backend itself (its own `this`, its
 * class for instanceof).
 */
export function tracedObjectStorage<T extends ObjectStorage>(objects: T): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@opentelemetry/api') as OtelApi;
  const tracer = otel.trace.getTracer('render-studio-storage');
  return new Proxy(objects, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property !== 'string' || !TRACED.has(property)) return method.bind(target);
      return (bucket: Bucket, ...rest: unknown[]) =>
        tracer.startActiveSpan(`storage.${property} ${bucket}`, { kind: otel.SpanKind.CLIENT, attributes: { 'storage.bucket': bucket, 'storage.path': typeof rest[0] === 'string' ? rest[0] : '' } }, async (span) => {
          try {
            return await method.call(target, bucket, ...rest);
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: otel.SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        });
    },
  });
}
