/**
 * Clip tests run the real thing: the API (served on a port), the clip workflow on the run's Temporal dev
 * server with a real worker on a task queue of the test's own, PostgreSQL, local storage, ffmpeg.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { ClipJobView } from '../../domain/clipGeneration';
import { createProviders, type ProviderOptions, type Providers } from '../../providers';
import { addCredits, checkLedgerInvariant } from '../../services/billing/credits';
import { createStorage } from '../../storage';
import { approveUpdate } from '../../workflows/approval';
import { createTestUser, type TestUser } from '../support/accounts';
import { testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { uniqueTaskQueue } from '../support/temporal';
import { streetStill } from '../support/stills';

export const execFileAsync = promisify(execFile);

export interface ClipTestApp {
  server: TestServer;
  baseUrl: string;
  config: AppConfig;
  /** The one task queue the app starts clips on and routes media work and approvals to. */
  taskQueue: string;
  close: () => Promise<void>;
}

/** Local renders and previews with the fastest x264 preset: still real 5 s H.264 MP4s at the platform's size. */
export function clipTestConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return { ...loadConfig(), videoPreset: 'ultrafast', ...overrides };
}

export async function startClipApp(taskQueue = uniqueTaskQueue('clips')): Promise<ClipTestApp> {
  const config = clipTestConfig();
  const server = await serve(createApp({ config, knex: testKnex(), logger, taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } }));
  return { server, baseUrl: server.baseUrl, config, taskQueue, close: () => server.close() };
}

export interface RunningWorker {
  providers: Providers;
  stop: () => Promise<void>;
}

/** A real worker (the bundle globalSetup built) polling `taskQueue` until stopped. */
export async function startClipWorker(
  taskQueue: string,
  options: { providers?: Providers; providerOptions?: ProviderOptions; config?: AppConfig } = {},
): Promise<RunningWorker> {
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!bundlePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  const config = options.config ?? clipTestConfig();
  const providers = options.providers ?? createProviders(config, { videoPreset: config.videoPreset, ...options.providerOptions });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers }),
  });
  const running = worker.run();
  let stopped = false;
  return {
    providers,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** An architectural-looking still: sky, lawn, two buildings, windows; 960x540 JPEG. */
export async function renderJpeg(width = 960, height = 540): Promise<Buffer> {
  return streetStill(width, height).jpeg({ quality: 90 }).toBuffer();
}

export interface ClipUser extends TestUser {
  projectId: string;
  renderId: string;
  renderUrl: string;
}

/**
 * A signed-up user (5 credits, plus `extraCredits` through the ledger) with a project and one uploaded render; `knex` is
 * the app's database when it is not the run's (a stack started by the test).
 */
export async function clipUser(baseUrl: string, options: { extraCredits?: number; image?: Buffer; fileName?: string; knex?: Knex } = {}): Promise<ClipUser> {
  const user = await createTestUser(baseUrl, { knex: options.knex });
  if (options.extraCredits) {
    await addCredits(options.knex ?? testKnex(), { workspaceId: user.id, amount: options.extraCredits, type: 'purchase', description: 'Test purchase', idempotencyKey: `test-purchase:${randomUUID()}` });
  }
  const project = await request<{ project: { id: string } }>(baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  if (project.status !== 201) throw new Error(`create project answered ${project.status} ${JSON.stringify(project.body)}`);
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(options.image ?? (await renderJpeg()))], { type: 'image/jpeg' }), options.fileName ?? 'harbour-view.jpg');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  if (upload.status !== 200 && upload.status !== 201) throw new Error(`upload answered ${upload.status} ${JSON.stringify(upload.body)}`);
  return { ...user, projectId: project.body.project.id, renderId: upload.body.render.data.id, renderUrl: upload.body.render.data.file_url };
}

export interface StartAnswer {
  success: boolean;
  jobId?: string;
  error?: string;
  code?: string;
  warning?: string;
}

export function startClip(
  baseUrl: string,
  user: ClipUser,
  options: { movement?: string; platform?: string; aspectRatio?: string; duration?: number; imageUrl?: string | null; renderId?: string | null } = {},
) {
  return request<StartAnswer>(baseUrl, '/api/video-generation/start', {
    token: user.token,
    json: {
      options: {
        imageUrl: options.imageUrl === undefined ? user.renderUrl : options.imageUrl,
        movement: options.movement ?? 'Zoom In',
        originalPrompt: 'A calm morning at the harbour',
        duration: options.duration ?? 5,
        aspectRatio: options.aspectRatio,
        platform: options.platform ?? 'YouTube',
      },
      context: { projectId: user.projectId, userId: user.id, renderId: options.renderId === undefined ? user.renderId : options.renderId, isTemporaryImage: false },
    },
  });
}

export async function jobStatus(baseUrl: string, user: TestUser, jobId: string): Promise<ClipJobView> {
  const res = await request<{ success: boolean; job: ClipJobView }>(baseUrl, `/api/video-generation/status/${jobId}`, { token: user.token });
  if (res.status !== 200) throw new Error(`status answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job;
}

/** Polls the status call until the job is final; every answer is kept (for progress checks). */
export async function waitForJob(
  baseUrl: string,
  user: TestUser,
  jobId: string,
  options: { timeoutMs?: number; intervalMs?: number; until?: (job: ClipJobView) => boolean } = {},
): Promise<{ job: ClipJobView; seen: ClipJobView[] }> {
  const until = options.until ?? ((job: ClipJobView) => ['completed', 'failed', 'cancelled'].includes(job.status));
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const seen: ClipJobView[] = [];
  for (;;) {
    const job = await jobStatus(baseUrl, user, jobId);
    seen.push(job);
    if (until(job)) return { job, seen };
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status} (${job.progress}%: ${job.message}) after ${options.timeoutMs ?? 180_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

export async function creditState(knex: Knex, userId: string): Promise<{ credits: number; reserved: number; available: number }> {
  const row = (await knex('profiles').where({ id: userId }).first('credits', 'reserved_credits')) as { credits: number; reserved_credits: number };
  return { credits: row.credits, reserved: row.reserved_credits, available: row.credits - row.reserved_credits };
}

export async function expectLedgerOk(knex: Knex, userId: string): Promise<void> {
  const invariant = await checkLedgerInvariant(knex, userId);
  if (!invariant.ok) throw new Error(`ledger invariant broken for ${userId}: ${JSON.stringify(invariant)}`);
}

export async function approveByWorkflow(client: Client, approvalWorkflowId: string, userId: string): Promise<string | null> {
  const result = await client.workflow.getHandle(approvalWorkflowId).executeUpdate(approveUpdate, { args: [{ userId }] });
  return result.contentId;
}

export async function probe(file: string): Promise<{ codec: string; width: number; height: number; frames: number; fps: string; duration: number; pixFmt: string }> {
  const { stdout } = await execFileAsync('ffprobe', [
    '-v', 'error', '-select_streams', 'v:0', '-count_frames',
    '-show_entries', 'stream=codec_name,width,height,nb_read_frames,r_frame_rate,pix_fmt:format=duration', '-of', 'json', file,
  ]);
  const parsed = JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number; nb_read_frames: string; r_frame_rate: string; pix_fmt: string }>; format: { duration: string } };
  const s = parsed.streams[0];
  return { codec: s.codec_name, width: s.width, height: s.height, frames: Number(s.nb_read_frames), fps: s.r_frame_rate, duration: Number(parsed.format.duration), pixFmt: s.pix_fmt };
}
