/**
 * The image edit and approval loop end to end for tests: the Koa app (starting workflows on task queues of this
 * test file's own), real workers polling those queues on the run's dev server with the real activities
 * (PostgreSQL, local disk storage, providers), and helpers to make users, projects, renders and pending items.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Knex } from 'knex';
import sharp from 'sharp';
import { createActivities } from '../../activities';
import { ImageThread } from '../../activities/imageThread';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { approvalWorkflowId, type NewPendingApproval } from '../../domain/approvals';
import { createProviders, type Providers } from '../../providers';
import { addCredits, checkAndReserve } from '../../services/billing/credits';
import { createStorage, type Storage } from '../../storage';
import { approvalWorkflow } from '../../workflows';
import { createTestUser, type TestUser } from '../support/accounts';
import { testKnex } from '../support/db';
import { request, serve, type JsonResponse, type TestServer } from '../support/http';
import { testClient } from '../support/temporal';
import { houseStill } from '../support/stills';

export interface TestQueues {
  generation: string;
  media: string;
  approvals: string;
}

export function uniqueQueues(prefix: string): TestQueues {
  const id = randomUUID();
  return { generation: `${prefix}-generation-${id}`, media: `${prefix}-media-${id}`, approvals: `${prefix}-approvals-${id}` };
}

export interface RunningWorkers {
  stop: () => Promise<void>;
}

let runtimeInstalled = false;

/** The SDK logs errors only in these tests (its INFO and WARN lines about worker states and expected refusals drown the output). */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // another helper of this jest worker installed the runtime first: keep its logger
  }
}

/** One real worker per queue (the bundle globalSetup built), all with the same activities, until stop(). */
export async function startWorkers(queues: TestQueues, activities: ReturnType<typeof createActivities>, connection?: NativeConnection): Promise<RunningWorkers> {
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!bundlePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  quietRuntime();
  const own = connection ? null : await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const conn = connection ?? own!;
  const workers = await Promise.all(
    Object.values(queues).map((taskQueue) => Worker.create({ connection: conn, taskQueue, workflowBundle: { codePath: bundlePath }, activities })),
  );
  const running = workers.map((worker) => worker.run());
  return {
    stop: async () => {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.all(running);
      await own?.close();
    },
  };
}

export interface Harness {
  config: AppConfig;
  knex: Knex;
  storage: Storage;
  queues: TestQueues;
  server: TestServer;
  baseUrl: string;
  client: Client;
  activities: ReturnType<typeof createActivities>;
  close: () => Promise<void>;
}

export interface HarnessOptions {
  /** Start workers in this process (default true). */
  workers?: boolean;
  providers?: Providers;
  config?: Partial<AppConfig>;
  /** The image work in the worker's image thread, as workers/main.ts runs it (default true); false: on this thread. */
  imageThread?: boolean;
  /** Data exports (and account deletions) on the harness's generation queue (default: the app's own queue, which no worker here polls). */
  accountData?: boolean;
}

export async function startHarness(prefix: string, options: HarnessOptions = {}): Promise<Harness> {
  const config = { ...loadConfig(), ...options.config };
  const knex = testKnex();
  const storage = createStorage(config);
  const queues = uniqueQueues(prefix);
  const imageThread = options.imageThread === false ? null : new ImageThread({ logger });
  const providers = options.providers ?? createProviders(config, { localImage: imageThread ?? undefined });
  const activities = createActivities({ knex, config, logger, storage, providers, imageWork: imageThread ?? undefined });
  const server = await serve(createApp({ config, knex, logger, taskQueues: options.accountData ? { ...queues, accountData: queues.generation } : queues }));
  const { client, close: closeClient } = await testClient();
  const workers = options.workers === false ? null : await startWorkers(queues, activities);
  return {
    config,
    knex,
    storage,
    queues,
    server,
    baseUrl: server.baseUrl,
    client,
    activities,
    close: async () => {
      await workers?.stop();
      await imageThread?.close();
      await server.close();
      await closeClient();
    },
  };
}

/** A small stand-in for an architectural render: sky, lawn, a building with windows and a door. */
export async function renderBytes(width = 640, height = 480): Promise<Buffer> {
  return houseStill(width, height).png().toBuffer();
}

export interface UserWithRender {
  user: TestUser;
  projectId: string;
  renderId: string;
  renderUrl: string;
}

/** Signs a user up (5 credits), makes a project and uploads one render into it through the API. */
export async function userWithRender(baseUrl: string, size: { width: number; height: number } = { width: 640, height: 480 }): Promise<UserWithRender> {
  const user = await createTestUser(baseUrl);
  const project = await request<{ project: { id: string } }>(baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`);
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderBytes(size.width, size.height))], { type: 'image/png' }), 'harbour-render.png');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${JSON.stringify(upload.body)}`);
  return { user, projectId: project.body.project.id, renderId: upload.body.render.data.id, renderUrl: upload.body.render.data.file_url };
}

export interface GenerateOptions {
  prompt?: string;
  baseImage: string;
  projectId?: string;
  userId?: string;
  parameters?: Record<string, unknown>;
}

export async function generateImage(baseUrl: string, user: TestUser | null, options: GenerateOptions): Promise<JsonResponse> {
  return request(baseUrl, '/api/ai-image-simple', {
    token: user?.token,
    json: {
      workflow: 'ENHANCED_IMAGE_EDITING',
      context: { projectId: options.projectId, userId: options.userId ?? user?.id, userIntent: 'test', platform: 'web' },
      parameters: { prompt: options.prompt ?? 'make it a snowy evening', baseImage: options.baseImage, ...options.parameters },
    },
  });
}

export async function creditState(knex: Knex, userId: string): Promise<{ credits: number; reserved: number }> {
  const row = (await knex('profiles').where({ id: userId }).first('credits', 'reserved_credits')) as { credits: number; reserved_credits: number };
  return { credits: row.credits, reserved: row.reserved_credits };
}

/** A credit package bought (total_credits_purchased > 0): what rejections need. */
export async function buyCredits(knex: Knex, userId: string, amount = 12): Promise<void> {
  await addCredits(knex, { workspaceId: userId, amount, type: 'purchase', description: 'Small Project', idempotencyKey: `purchase:${userId}:${randomUUID()}` });
}

export interface SeededItem {
  approvalId: string;
  workflowId: string;
  reservationId: string;
  files: { original: string; watermarked: string; thumbnail: string };
}

/**
 * A pending image item made the way the image edit workflow ends (start rule and reservation, files in
 * storage, the pending row, the approval workflow on the harness's approvals queue), without the media work.
 */
export async function seedPendingImage(h: Harness, userId: string, projectId: string, options: { windowMs?: number } = {}): Promise<SeededItem> {
  const approvalId = randomUUID();
  const reservation = await checkAndReserve(h.knex, { workspaceId: userId, contentType: 'image', idempotencyKey: `seed:${approvalId}` });
  const folder = `pending/${approvalId}`;
  const original = await sharp(await renderBytes(320, 320)).jpeg().toBuffer();
  const files = { original: `${folder}/original.jpg`, watermarked: `${folder}/preview.jpg`, thumbnail: `${folder}/thumb.webp` };
  await h.storage.objects.put('images', files.original, original);
  await h.storage.objects.put('images', files.watermarked, await sharp(original).negate().jpeg().toBuffer());
  await h.storage.objects.put('images', files.thumbnail, await sharp(original).resize(64).webp().toBuffer());
  const item: NewPendingApproval = {
    approvalId,
    workspaceId: userId,
    projectId,
    fileName: 'seeded - AI edit.jpg',
    aspectRatio: '1:1',
    original: { bucket: 'images', path: files.original },
    watermarked: { bucket: 'images', path: files.watermarked },
    thumbnailPath: files.thumbnail,
    reservationId: reservation.id,
    cost: 1,
    sourceJobId: null,
    metadata: {
      kind: 'image',
      originalPrompt: 'seeded',
      refinedPrompt: 'seeded',
      baseImageUrl: '/api/files/renders/seed.png',
      format: 'square',
      width: 320,
      height: 320,
      fileSize: original.length,
      mime: 'image/jpeg',
      upscaled: false,
    },
  };
  const created = await h.activities.createPendingApproval(item);
  await h.client.workflow.start(approvalWorkflow, {
    taskQueue: h.queues.approvals,
    workflowId: approvalWorkflowId(approvalId),
    // a shorter window than the configured one: the item expires while the test waits
    args: [{ approvalId, workspaceId: userId, windowMs: options.windowMs ?? created.windowMs }],
  });
  return { approvalId, workflowId: created.workflowId, reservationId: reservation.id, files };
}

export async function decide(h: Harness, user: TestUser, decision: 'approve' | 'reject', approvalId: string): Promise<JsonResponse> {
  return request(h.baseUrl, `/api/approvals/${decision}`, { token: user.token, json: { approvalId } });
}
