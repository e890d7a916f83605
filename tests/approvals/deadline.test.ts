/**
 * The approval window at its default of 7 days, on the time-skipping test server: a generated image left
 * undecided expires, its credit goes back and its files go.
 */
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { approvalWorkflowId } from '../../domain/approvals';
import { imageEditWorkflowId, type ImageEditState, type ImageEditWorkflowInput } from '../../domain/imageEdit';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { approvalStatusQuery, imageEditStateQuery, imageEditWorkflow } from '../../workflows';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { creditState, quietRuntime, startWorkers, uniqueQueues, userWithRender, type RunningWorkers } from '../imageEdit/harness';

const DAY_MS = 86_400_000;

describe('approval deadline (time-skipping test server)', () => {
  const config = loadConfig();
  const knex = testKnex();
  const storage = createStorage(config);
  const queues = uniqueQueues('deadline');
  let env: TestWorkflowEnvironment;
  let workers: RunningWorkers;
  let server: TestServer;

  beforeAll(async () => {
    const path = process.env.TEMPORAL_TEST_SERVER_PATH;
    if (!path) throw new Error('TEMPORAL_TEST_SERVER_PATH is not set: globalSetup installs the test server');
    expect(config.approvalWindow).toBe('7 days');
    quietRuntime();
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    workers = await startWorkers(queues, createActivities({ knex, config, logger, storage, providers: createProviders(config) }), env.nativeConnection);
    server = await serve(createApp({ config, knex, logger }));
  });

  afterAll(async () => {
    await workers?.stop();
    await server?.close();
    await env?.teardown();
    await closeTestKnex();
  });

  /** The parent's state by query, polled: awaiting result() would let the server skip time while the child's timer is set. */
  async function settled(jobId: string): Promise<ImageEditState> {
    const handle = env.client.workflow.getHandle(imageEditWorkflowId(jobId));
    for (let i = 0; i < 300; i += 1) {
      const state = await handle.query(imageEditStateQuery).catch(() => null);
      if (state && (state.status === 'completed' || state.status === 'failed')) return state;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('image edit did not finish');
  }

  it('expires an undecided image after 7 days: the credit is released, the files removed, the item leaves the queue', async () => {
    const { user, projectId, renderId } = await userWithRender(server.baseUrl);
    const render = await knex('renders').where({ id: renderId }).first();
    const jobId = randomUUID();
    const input: ImageEditWorkflowInput = {
      jobId,
      workspaceId: user.id,
      projectId,
      source: {
        kind: 'render',
        id: renderId,
        projectId,
        file: { bucket: 'renders', path: render.storage_path },
        fileUrl: render.file_url,
        fileName: render.file_name,
        fileSize: Number(render.file_size),
      },
      prompt: 'foggy morning',
      imageDescription: null,
      userIntent: null,
      platform: 'web',
      validateRefinement: true,
      format: 'square',
      quality: 'standard',
      upscaleScale: 2,
      queues: { media: queues.media, approvals: queues.approvals },
    };
    const startedAt = await env.currentTimeMs();
    await env.client.workflow.start(imageEditWorkflow, { taskQueue: queues.generation, workflowId: imageEditWorkflowId(jobId), args: [input] });
    const state = await settled(jobId);
    expect(state.status).toBe('completed');
    const approvalId = state.result!.savedImage.approvalId;
    const approval = env.client.workflow.getHandle(approvalWorkflowId(approvalId));
    const row = await knex('pending_approvals').where({ id: approvalId }).first();
    const files = [row.original_path, row.watermarked_path, row.thumbnail_path] as string[];
    expect(await creditState(knex, user.id)).toEqual({ credits: 5, reserved: 1 });

    await env.sleep('6 days');
    expect(await approval.query(approvalStatusQuery)).toBe('pending');
    expect((await request(server.baseUrl, '/api/approvals/list', { token: user.token })).body.data).toHaveLength(1);

    await env.sleep('1 day');
    expect(await approval.result()).toBe('expired');

    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(7 * DAY_MS);
    expect(await knex('pending_approvals').where({ id: approvalId }).first('status')).toEqual({ status: 'expired' });
    expect(await creditState(knex, user.id)).toEqual({ credits: 5, reserved: 0 });
    expect(await knex('credit_reservations').where({ id: row.reservation_id }).first('status')).toEqual({ status: 'released' });
    expect(await knex('credit_transactions').where({ workspace_id: user.id, transaction_type: 'consume' })).toEqual([]);
    for (const path of files) expect(await storage.objects.stat('images', path)).toBeNull();
    expect((await request(server.baseUrl, '/api/approvals/list', { token: user.token })).body.data).toEqual([]);
    expect((await request(server.baseUrl, '/api/approvals/stats', { token: user.token })).body.data).toEqual({ pending_count: 0, limit: 5, total_pending_cost: 0, in_progress_count: 0, in_progress_cost: 0 });
    expect(await knex('images').where({ project_id: projectId })).toEqual([]);
  });
});
