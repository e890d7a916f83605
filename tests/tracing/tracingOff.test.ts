/**
 * Tracing off (no OTEL_* variable set, as in every other test): the API and the workers load no OpenTelemetry SDK
 * and make no spans; the app answers and the storage writes as before, without the tracing wrappers.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { currentTraceId, currentTraceparent, tracingActive, tracingSettings } from '../../config/tracing';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { activeTracing, inStoredTrace, startProcessTracing, temporalClientInterceptors, temporalWorkerTracing } from '../../services/platform/tracing';
import { LocalDiskStorage, S3ObjectStorage, createStorage } from '../../storage';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve } from '../support/http';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The OpenTelemetry modules but the API (which other packages load themselves, a few no-op objects), and the
 * interceptors, a plain Node process (not jest, whose registry is its own) has loaded after
 * importing what the API and worker entries import first: the preloads, the app, the logger (logging a line), the
 * storage and the Temporal client module.
 */
function openTelemetryModulesLoaded(env: NodeJS.ProcessEnv): string[] {
  const script = `
    require('./api/tracingPreload');
    require('./workers/tracingPreload');
    require('./api/app');
    require('./services/platform/temporalClient');
    const { logger } = require('./config/logger');
    logger.info('a line');
    // what job rows and webhook events record: nothing, and nothing loaded for it
    const { currentTraceId, currentTraceparent } = require('./config/tracing');
    if (currentTraceId() !== null || currentTraceparent() !== null) throw new Error('a trace id with tracing off');
    const { createStorage } = require('./storage');
    createStorage({ storageDir: require('node:os').tmpdir(), signingSecret: 'x'.repeat(40), signedUrlTtlSeconds: 60 });
    process.stdout.write('\\nMODULES ' + JSON.stringify(Object.keys(require.cache).filter((f) => /[\\/]@opentelemetry[\\/](?!api[\\/])|interceptors-opentelemetry/.test(f))));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'silent' }, encoding: 'utf8' });
  return JSON.parse(out.slice(out.lastIndexOf('\nMODULES ') + '\nMODULES '.length)) as string[];
}

afterAll(async () => {
  await closeTestKnex();
});

describe('tracing off', () => {
  it('is off without OTEL_* and on with an endpoint or exporter named', () => {
    expect(tracingSettings('render-studio-api', {})).toBeNull();
    expect(tracingSettings('render-studio-api', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBeNull();
    expect(tracingSettings('render-studio-api', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
    expect(tracingSettings('render-studio-api', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({ exporter: 'otlp', serviceName: 'render-studio-api' });
    expect(tracingSettings('render-studio-api', { OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'edge-api' })).toEqual({ exporter: 'console', serviceName: 'edge-api' });
    expect(() => tracingSettings('render-studio-api', { OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER=jaeger/);
  });

  it('loads no SDK, adds no interceptors and wraps nothing, and the app still answers', async () => {
    expect(process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? process.env.OTEL_TRACES_EXPORTER).toBeUndefined();

    expect(startProcessTracing('api')).toBeNull();

    expect(activeTracing()).toBeNull();
    expect(tracingActive()).toBe(false);
    expect(temporalClientInterceptors()).toBeUndefined();
    expect(temporalWorkerTracing()).toEqual({});
    expect(currentTraceId()).toBeNull();
    expect(currentTraceparent()).toBeNull();
    // a webhook send runs as it is, in no span
    expect(await inStoredTrace('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'webhook.deliver x', {}, async () => 'sent')).toBe('sent');
    // the run's backend itself (local disk, or S3 under `npm test -- --storage=s3`), not a traced wrapper around it
    expect(createStorage(loadConfig()).objects.constructor).toBe(loadConfig().storageBackend === 's3' ? S3ObjectStorage : LocalDiskStorage);
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger }));
    try {
      expect((await request(server.baseUrl, '/health/live')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('leaves the OpenTelemetry packages unloaded in a process started without OTEL_*, and loads them with it', () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    expect(openTelemetryModulesLoaded(env)).toEqual([]);
    // the same process with a traces exporter named: the SDK is there (the check above is not blind)
    expect(openTelemetryModulesLoaded({ ...env, OTEL_TRACES_EXPORTER: 'console' }).some((f) => /sdk-node/.test(f))).toBe(true);
  }, 120_000);
});
