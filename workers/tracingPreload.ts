/**
 * Imported first by workers/main.ts: starts tracing (services/platform/tracing.ts) when OTEL_* turns it on, before
 * the modules its instrumentations patch (http, pg, the AWS SDK) are loaded. With tracing off it loads nothing more.
 */
import { startProcessTracing } from '../services/platform/tracing';

startProcessTracing('worker');
