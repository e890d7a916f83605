import { randomUUID } from 'node:crypto';
import { MSG } from '../../domain/messages';
import { DomainError } from '../../domain/errors';
import { reserveCredits } from '../../services/billing/credits';
import { VideoGenerationService } from '../../services/generation/videoGeneration';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { closeTestKnex, testKnex } from '../support/db';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { clipUser, creditState, expectLedgerOk, startClipApp, startClipWorker, type ClipTestApp, type ClipUser } from './fixtures';

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected the start to be refused');
}

describe("'Failed to start video generation' when no clip can be started", () => {
  let app: ClipTestApp;
  let user: ClipUser;

  beforeAll(async () => {
    app = await startClipApp();
    user = await clipUser(app.baseUrl);
  });

  afterAll(async () => {
    await app?.close();
    await closeTestKnex();
  });

  const request = (u: ClipUser) => ({
    projectId: u.projectId,
    renderId: u.renderId,
    effect: 'Zoom In' as const,
    platform: 'YouTube' as const,
    aspectRatio: '16:9' as const,
    durationSeconds: 5,
    prompt: null,
    isTemporaryImage: false,
    startedBy: 'start' as const,
  });

  it('answers 503 with the spec text when Temporal cannot be reached, and writes nothing', async () => {
    const service = new VideoGenerationService({
      knex: testKnex(),
      client: () => Promise.reject(new Error('connect ECONNREFUSED')),
      queues: { generation: 'unused', media: 'unused', approvals: 'unused' },
    });
    const err = await refusal(service.start(user.id, request(user)));
    expect({ status: err.status, message: err.message }).toEqual({ status: 503, message: MSG.failedToStartVideo });
    expect(await testKnex()('video_generation_jobs').where({ workspace_id: user.id })).toEqual([]);
    expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
  });

  it('answers 503 when no worker admits the job in time, and cancels the workflow so it never runs later', async () => {
    const { client, close } = await testClient();
    try {
      const queue = uniqueTaskQueue('clips-no-worker');
      const service = new VideoGenerationService({
        knex: testKnex(),
        client: async () => client,
        queues: { generation: queue, media: queue, approvals: queue },
        admissionTimeoutMs: 1500,
      });
      const err = await refusal(service.start(user.id, request(user)));
      expect({ status: err.status, message: err.message }).toEqual({ status: 503, message: MSG.failedToStartVideo });
      const runs: string[] = [];
      for (let i = 0; i < 50 && runs.length === 0; i += 1) {
        for await (const run of client.workflow.list({ query: `TaskQueue = '${queue}'` })) runs.push(run.workflowId);
        if (runs.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatch(/^clip-/);
      const handle = client.workflow.getHandle(runs[0]);
      const history = await handle.fetchHistory();
      expect((history.events ?? []).some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(true);

      // a worker that turns up later finds the cancel first: the job is never admitted, nothing is reserved
      const worker = await startClipWorker(queue);
      try {
        await expect(handle.result()).rejects.toThrow();
      } finally {
        await worker.stop();
      }
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      expect(runs[0]).toBe(clipWorkflowId(runs[0].slice('clip-'.length)));
      expect(await testKnex()('video_generation_jobs').where({ workspace_id: user.id })).toEqual([]);
      expect(await testKnex()('credit_reservations').where({ workspace_id: user.id })).toEqual([]);
      expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
    } finally {
      await close();
    }
  });

  it('a cancel of a job whose workflow no longer exists closes the row and gives its reserved credits back, instead of failing', async () => {
    const owner = await clipUser(app.baseUrl);
    const { client, close } = await testClient();
    try {
      const jobId = randomUUID();
      const workflowId = clipWorkflowId(jobId);
      // what a run terminated by hand (or past the namespace's retention) leaves: a processing row and its reservation
      await reserveCredits(testKnex(), { workspaceId: owner.id, contentType: 'clip', amount: 4, idempotencyKey: workflowId });
      await testKnex()('video_generation_jobs').insert({
        id: jobId,
        workspace_id: owner.id,
        created_by: owner.id,
        project_id: owner.projectId,
        render_id: owner.renderId,
        status: 'processing',
        progress: 40,
        workflow_id: workflowId,
        options: JSON.stringify(request(owner)),
      });
      expect(await creditState(testKnex(), owner.id)).toEqual({ credits: 5, reserved: 4, available: 1 });

      const service = new VideoGenerationService({ knex: testKnex(), client: async () => client, queues: { generation: 'unused', media: 'unused', approvals: 'unused' } });
      const job = await service.cancel(owner.id, jobId, owner.id);
      expect(job.status).toBe('cancelled');
      expect(await creditState(testKnex(), owner.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
      const reservation = await testKnex()('credit_reservations').where({ idempotency_key: workflowId }).first('status', 'metadata');
      expect(reservation.status).toBe('released');
      expect(reservation.metadata.releasedBy).toBe(owner.id);
      await expectLedgerOk(testKnex(), owner.id);
      // a second cancel finds a finished job
      expect((await refusal(service.cancel(owner.id, jobId, owner.id))).status).toBe(409);
    } finally {
      await close();
    }
  });
});
