/**
 * A worker killed (SIGKILL) while the image edit activity runs, then another started: the workflow finishes
 * the item on the new worker, the reservation is made once, and approval charges exactly one credit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { closeTestKnex } from '../support/db';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { creditState, decide, generateImage, startHarness, userWithRender, type Harness } from './harness';

const ROOT = path.resolve(__dirname, '..', '..');
const SCRIPT = path.join(__dirname, 'support', 'workerProcess.ts');

interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  waitFor: (text: string, timeoutMs: number) => Promise<void>;
  exited: Promise<void>;
}

function startWorkerProcess(h: Harness, editDelayMs: number): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, TEST_QUEUES: JSON.stringify(h.queues), EDIT_DELAY_MS: String(editDelayMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitFor = async (text: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!out.includes(text)) {
      if (Date.now() > deadline) throw new Error(`worker did not print ${text} within ${timeoutMs} ms:\n${out}`);
      if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}) before printing ${text}:\n${out}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { child, output: () => out, waitFor, exited };
}

let h: Harness;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness('restart', { workers: false });
});

afterAll(async () => {
  for (const worker of started) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  }
  await h?.close();
  await closeTestKnex();
});

describe('a worker killed mid-workflow', () => {
  it('finishes the item on a restarted worker with one reservation, and approval charges once', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const first = startWorkerProcess(h, 10 * 60_000);
    started.push(first);
    await first.waitFor('WORKER_READY', 60_000);

    const answer = generateImage(h.baseUrl, user, { baseImage: renderId, prompt: 'misty dawn' });
    await first.waitFor('EDIT_STARTED', 30_000);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startWorkerProcess(h, 0);
    started.push(second);
    const res = await answer;

    expect(res.status).toBe(200);
    expect(res.body.result.savedImage).toMatchObject({ status: 'pending_approval', fullCost: 1, fractionalCostCharged: 0 });
    expect(second.output()).toContain('EDIT_STARTED');
    // the generate activity ran a second time after the first worker died; nothing before it ran twice
    const history = await h.client.workflow.getHandle(imageEditWorkflowId(res.body.metadata.jobId)).fetchHistory();
    const scheduled = new Map<string, string>();
    const attempts: Record<string, number[]> = {};
    for (const event of history.events ?? []) {
      if (event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        scheduled.set(String(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
      }
      if (event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
        const name = scheduled.get(String(event.activityTaskStartedEventAttributes?.scheduledEventId)) ?? '';
        (attempts[name] ??= []).push(event.activityTaskStartedEventAttributes?.attempt ?? 0);
      }
    }
    expect(attempts.generateEditedImage).toEqual([2]);
    expect(attempts.reserveImageEditCredits).toEqual([1]);
    expect(await h.knex('credit_reservations').where({ profile_id: user.id }).select('idempotency_key', 'status')).toEqual([
      { idempotency_key: imageEditWorkflowId(res.body.metadata.jobId), status: 'active' },
    ]);
    expect(await h.knex('pending_approvals').where({ user_id: user.id })).toHaveLength(1);

    const approved = await decide(h, user, 'approve', res.body.result.savedImage.approvalId);
    expect(approved.status).toBe(200);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 4, reserved: 0 });
    expect(await h.knex('credit_transactions').where({ profile_id: user.id, transaction_type: 'consume' })).toHaveLength(1);
  }, 150_000);
});
