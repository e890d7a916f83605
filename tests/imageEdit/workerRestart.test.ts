/**
 * A worker killed (SIGKILL) while the image edit activity runs, then another started: the workflow finishes
 * the item on the new worker, the reservation is made once, and approval charges exactly one credit.
 */
import { temporal } from '@temporalio/proto';
import { closeTestKnex } from '../support/db';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { creditState, decide, generateImage, startHarness, userWithRender, type Harness } from './harness';
import { startHeldWorker, stopHeldWorkers, type WorkerProcess } from './support/heldWorker';

let h: Harness;
const started: WorkerProcess[] = [];
const startWorkerProcess = (harness: Harness, delayMs: number) => startHeldWorker(harness, 'imageEdit', delayMs);

beforeAll(async () => {
  h = await startHarness('restart', { workers: false });
});

afterAll(async () => {
  await stopHeldWorkers(started);
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
    // the media activity ran a second time after the first worker died; the reservation before it ran once
    const history = await h.client.workflow.getHandle(imageEditWorkflowId(res.body.metadata.jobId)).fetchHistory();
    const scheduled = new Map<string, string>();
    const attempts: Record<string, number[]> = {};
    const localRuns: Record<string, number> = {};
    for (const event of history.events ?? []) {
      // a local activity's result is a marker, written once per completed run
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName === 'core_local_activity') {
        const data = marker.details?.data?.payloads?.[0]?.data;
        const type = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type : undefined;
        if (type) localRuns[type] = (localRuns[type] ?? 0) + 1;
      }
      if (event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        scheduled.set(String(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
      }
      if (event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
        const name = scheduled.get(String(event.activityTaskStartedEventAttributes?.scheduledEventId)) ?? '';
        (attempts[name] ??= []).push(event.activityTaskStartedEventAttributes?.attempt ?? 0);
      }
    }
    expect(attempts.makeEditedImage).toEqual([2]);
    expect(localRuns.reserveImageEditCredits).toBe(1);
    expect(await h.knex('credit_reservations').where({ workspace_id: user.id }).select('idempotency_key', 'status')).toEqual([
      { idempotency_key: imageEditWorkflowId(res.body.metadata.jobId), status: 'active' },
    ]);
    expect(await h.knex('pending_approvals').where({ workspace_id: user.id })).toHaveLength(1);

    const approved = await decide(h, user, 'approve', res.body.result.savedImage.approvalId);
    expect(approved.status).toBe(200);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 4, reserved: 0 });
    expect(await h.knex('credit_transactions').where({ workspace_id: user.id, transaction_type: 'consume' })).toHaveLength(1);
  }, 150_000);
});
