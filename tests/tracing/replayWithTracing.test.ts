/**
 * Turning tracing on must not break runs recorded before it was on: the histories kept in git (recorded without
 * the OpenTelemetry interceptors) replay against the worker's bundle, which has workflows/tracingInterceptors.ts,
 * with tracing running; and the gate leaves them alone, so their replays make no workflow spans.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, temporalWorkerTracing, type Tracing } from '../../services/platform/tracing';
import { jobMetricsSinks } from '../../workers/metrics';
import { workerBundle } from '../support/workflowBundles';

const FIXTURES = [
  path.join(__dirname, '..', 'imageEdit', 'fixtures', 'imageEdit-three-media-steps.history.json'),
  path.join(__dirname, '..', 'imageEdit', 'fixtures', 'imageEdit-approval-child.history.json'),
  path.join(__dirname, '..', 'imageEdit', 'fixtures', 'imageEdit-before-status-row.history.json'),
  path.join(__dirname, '..', 'temporal', 'fixtures', 'tryItOnboarding.history.json'),
];

const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(() => {
  tracing = startTracing({ serviceName: 'render-studio-replay', spanExporter: exporter })!;
});

afterAll(async () => {
  await tracing?.shutdown();
});

describe('histories recorded without tracing', () => {
  it('replay with the tracing interceptors in the bundle and tracing on', async () => {
    const codePath = await workerBundle();
    const traced = temporalWorkerTracing();
    expect(traced.sinks).toBeDefined();
    const histories = FIXTURES.map((file, i) => ({ workflowId: `untraced-${i}`, history: historyFromJSON(JSON.parse(fs.readFileSync(file, 'utf8'))) }));

    const results: ReplayResult[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath }, interceptors: traced.interceptors, sinks: { ...jobMetricsSinks(), ...traced.sinks } }, histories)) {
      results.push(result);
    }

    expect(results.map((r) => ({ workflowId: r.workflowId, error: r.error ? String(r.error) : null }))).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: null })));
    await tracing.flush();
    expect(exporter.getFinishedSpans().filter((s) => /^(RunWorkflow|StartActivity|StartChildWorkflowExecution):/.test(s.name)).map((s) => s.name)).toEqual([]);
  });
});
