/**
 * The trace screenshot of docs/operations.md ("Traces"), taken by `npm run docs:trace-screenshot`
 * (scripts/docs/traceScreenshot.ts runs this file with jest, so PostgreSQL, Temporal and the workflow bundle are the
 * tests'). It starts the trace viewer `npm run traces` starts (Phoenix from PyPI, tools.ensurePhoenix), traces one
 * hosted AI image edit end to end (the API, Temporal's interceptors, the worker's bundle, a fake fal) with the app's
 * own OTLP/HTTP exporter pointed at the viewer, checks that the viewer took every span of the job's trace (its REST
 * API), then opens the trace in Debian's Chromium and saves docs/images/trace-image-edit.png.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExportResult } from '@opentelemetry/core';
import { loadConfig, type AppConfig } from '../../config/env';
import { createProviders } from '../../providers';
import { startTracing, type Tracing } from '../../services/platform/tracing';
import { launchChromium } from '../../tests/support/browser';
import { closeTestKnex } from '../../tests/support/db';
import { startFakeFal, type FakeFal } from '../../tests/support/fakeFal';
import { closedPort } from '../../tests/support/http';
import { startTracedWorkers, type TracedWorkers } from '../../tests/support/tracedWorkers';
import { generateImage, quietRuntime, startHarness, userWithRender, type Harness } from '../../tests/imageEdit/harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../lib/tools') as { ensurePhoenix: () => string };

const IMAGE = path.resolve(__dirname, '..', '..', 'docs', 'images', 'trace-image-edit.png');
const API_KEY = 'fal-trace-key';
const EDIT = 'fal-ai/nano-banana/edit';
const UPSCALE = 'fal-ai/esrgan';

jest.setTimeout(900_000);

/** Every span to the viewer (OTLP/HTTP protobuf, the app's exporter) and to memory, where the script finds the job's trace. */
class BothExporters implements SpanExporter {
  constructor(
    readonly memory: InMemorySpanExporter,
    readonly otlp: OTLPTraceExporter,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.memory.export(spans, () => undefined);
    this.otlp.export(spans, done);
  }
  async shutdown(): Promise<void> {
    await this.otlp.shutdown();
    await this.memory.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.otlp.forceFlush();
  }
}

let viewer: ChildProcess;
let viewerUrl: string;
let workDir: string;
let memory: InMemorySpanExporter;
let tracing: Tracing;
let fake: FakeFal;
let harness: Harness;
let workers: TracedWorkers;

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  const phoenix = tools.ensurePhoenix();
  const port = await closedPort();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-shot-'));
  viewerUrl = `http://127.0.0.1:${port}`;
  viewer = spawn(phoenix, ['serve'], {
    stdio: 'ignore',
    env: { ...process.env, PHOENIX_HOST: '127.0.0.1', PHOENIX_PORT: String(port), PHOENIX_GRPC_PORT: String(await closedPort()), PHOENIX_WORKING_DIR: workDir, PHOENIX_TELEMETRY_ENABLED: 'false', PHOENIX_LOG_MIGRATIONS: 'false' },
  });
  await until('Phoenix to answer', async () => (await fetch(`${viewerUrl}/healthz`)).ok, 300_000);

  memory = new InMemorySpanExporter();
  tracing = startTracing({ serviceName: 'render-studio', spanExporter: new BothExporters(memory, new OTLPTraceExporter({ url: `${viewerUrl}/v1/traces` })) })!;
  fake = await startFakeFal({
    apiKey: API_KEY,
    models: {
      [EDIT]: { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 1, runningPolls: 2 },
      [UPSCALE]: { kind: 'upscale', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
    },
  });
  const hosted: Partial<AppConfig> = { providerKind: 'fal', falBaseUrl: fake.baseUrl, falApiKey: API_KEY, falImageEditModel: EDIT, falUpscaleModel: UPSCALE };
  const config = { ...loadConfig(), ...hosted };
  const providers = createProviders(config, { imagePollIntervalMs: 200, videoPreset: config.videoPreset });
  harness = await startHarness('trace-shot', { workers: false, providers, config: hosted, imageThread: false });
  quietRuntime();
  workers = await startTracedWorkers(Object.values(harness.queues).map((taskQueue) => ({ taskQueue, activities: harness.activities })));
});

afterAll(async () => {
  await workers?.stop();
  await harness?.close();
  await fake?.close();
  await tracing?.shutdown();
  viewer?.kill('SIGTERM');
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  await closeTestKnex();
});

it('saves the trace of one AI image edit as the viewer shows it', async () => {
  const { user, renderId } = await userWithRender(harness.baseUrl);
  const res = await generateImage(harness.baseUrl, user, { baseImage: renderId, prompt: 'bright summer day, people on the terrace' });
  expect(res.status).toBe(200);

  const api = await until('the request span', async () => memory.getFinishedSpans().find((s) => s.name === 'POST /api/ai-image-simple'), 60_000);
  const traceId = api.spanContext().traceId;
  // the last span of the job: its image stored (the workflow's spans come through the worker's sink after their task)
  await until('the stored image', async () => memory.getFinishedSpans().some((s) => s.spanContext().traceId === traceId && s.name === 'storage.put images'), 120_000);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await tracing.flush();
  const ours = memory.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId).length;

  // the viewer took every span of the trace from the app's OTLP/HTTP exporter
  const taken = await until(
    `the viewer to hold the ${ours} spans of trace ${traceId}`,
    async () => {
      const body = (await (await fetch(`${viewerUrl}/v1/projects/default/spans?limit=1000`)).json()) as { data: Array<{ context: { trace_id: string } }> };
      const count = body.data.filter((s) => s.context.trace_id === traceId).length;
      return count >= ours ? count : null;
    },
    120_000,
  );
  expect(taken).toBe(ours);

  const browser = await launchChromium();
  try {
    // tall enough for the whole span tree of the edit
    const page = await browser.newPage({ viewport: { width: 1440, height: 1300 } });
    await page.goto(`${viewerUrl}/redirects/traces/${traceId}`);
    await page.getByText('POST /api/ai-image-simple').first().waitFor({ timeout: 120_000 });
    await page.getByText('RunWorkflow:imageEditWorkflow').first().waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');
    const png = await page.screenshot({ type: 'png' });
    fs.mkdirSync(path.dirname(IMAGE), { recursive: true });
    await sharp(png).png({ compressionLevel: 9, palette: true, quality: 90 }).toFile(IMAGE);
  } finally {
    await browser.close();
  }
  expect(fs.statSync(IMAGE).size).toBeLessThan(400 * 1024);
});
