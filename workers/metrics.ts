/**
 * The worker's metrics (docs/operations.md "Metrics"), on two ports because they come from two places:
 * - WORKER_METRICS_PORT: this process's prom-client registry (jobs by kind, credit movements, process and
 *   event-loop metrics), served by a small HTTP server;
 * - TEMPORAL_METRICS_PORT: the Temporal SDK's own Prometheus exporter (polls, task latencies, slots, sticky
 *   cache), which lives in the SDK's native core and binds its own socket.
 * Both bind WORKER_METRICS_HOST (127.0.0.1 by default); each is off while its port is unset.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InjectedSinks, RuntimeOptions } from '@temporalio/worker';
import type { AppConfig } from '../config/env';
import {
  collectProcessMetrics,
  jobDuration,
  jobsCancelledTotal,
  jobsCompletedTotal,
  jobsFailedTotal,
  jobsInFlight,
  jobsStartedTotal,
  metricsRegistry,
} from '../services/platform/metrics';
import type { JobMetricsSinks, JobOutcome } from '../workflows/jobMetricsInterceptor';

/** The workflow interceptor module to bundle with the workflows (bundleWorkflowCode's workflowInterceptorModules). */
export const JOB_METRICS_INTERCEPTOR_MODULE = require.resolve('../workflows/jobMetricsInterceptor');

/**
 * Workflow types that are user jobs, with their `kind` label. Other workflows (approval windows that wait for days,
 * onboarding) are not jobs and are not counted.
 */
export const JOB_KIND_BY_WORKFLOW_TYPE: Readonly<Record<string, string>> = {
  clipGenerationWorkflow: 'clip',
  assemblyWorkflow: 'assembly',
  imageEditWorkflow: 'image_edit',
  dataExportWorkflow: 'data_export',
  accountDeletionWorkflow: 'account_deletion',
  draftJobWorkflow: 'draft_job',
};

const FINISHED_COUNTER: Record<JobOutcome, typeof jobsCompletedTotal> = {
  completed: jobsCompletedTotal,
  failed: jobsFailedTotal,
  cancelled: jobsCancelledTotal,
};

/** The implementation of the interceptor's `jobMetrics` sink, for Worker.create({ sinks }). */
export function jobMetricsSinks(): InjectedSinks<JobMetricsSinks> {
  // every kind's series exists at 0 from the start, so a failure ratio has both sides before the first failure
  for (const kind of Object.values(JOB_KIND_BY_WORKFLOW_TYPE)) {
    for (const counter of [jobsStartedTotal, ...Object.values(FINISHED_COUNTER)]) counter.inc({ kind }, 0);
    jobsInFlight.inc({ kind }, 0);
  }
  return {
    jobMetrics: {
      started: {
        fn: (info) => {
          const kind = JOB_KIND_BY_WORKFLOW_TYPE[info.workflowType];
          if (!kind) return;
          jobsStartedTotal.inc({ kind });
          jobsInFlight.inc({ kind });
        },
        callDuringReplay: false,
      },
      finished: {
        fn: (info, outcome) => {
          const kind = JOB_KIND_BY_WORKFLOW_TYPE[info.workflowType];
          if (!kind) return;
          FINISHED_COUNTER[outcome].inc({ kind });
          jobsInFlight.dec({ kind });
          // from the start of the execution chain, so time spent on a worker that died counts too
          jobDuration.observe({ kind, outcome }, Math.max(0, Date.now() - info.startTime.getTime()) / 1000);
        },
        callDuringReplay: false,
      },
    },
  };
}

/** Runtime.install's telemetry options: the SDK's Prometheus exporter when TEMPORAL_METRICS_PORT is set. */
export function temporalTelemetryOptions(config: Pick<AppConfig, 'workerMetricsHost' | 'temporalMetricsPort'>): Pick<RuntimeOptions, 'telemetryOptions'> {
  if (config.temporalMetricsPort === null) return {};
  const host = config.workerMetricsHost.includes(':') ? `[${config.workerMetricsHost}]` : config.workerMetricsHost;
  // Prometheus naming: counters end in _total, durations are histograms in seconds named ..._seconds
  const prometheus = { bindAddress: `${host}:${config.temporalMetricsPort}`, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true };
  return { telemetryOptions: { metrics: { prometheus } } };
}

export interface WorkerMetricsServer {
  url: string;
  close: () => Promise<void>;
}

/** Serves the app metrics at GET /metrics on WORKER_METRICS_HOST:WORKER_METRICS_PORT; null when the port is unset. */
export async function startWorkerMetricsServer(config: Pick<AppConfig, 'workerMetricsHost' | 'workerMetricsPort'>): Promise<WorkerMetricsServer | null> {
  if (config.workerMetricsPort === null) return null;
  collectProcessMetrics();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    metricsRegistry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.workerMetricsPort ?? 0, config.workerMetricsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
