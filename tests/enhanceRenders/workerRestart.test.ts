/**
 * A worker killed (SIGKILL) while a draft job's model run is in flight, then another started: the job completes on
 * the new worker exactly once (one new version on the image, the save step run once, one completed job row).
 */
import { temporal } from '@temporalio/proto';
import { closeTestKnex } from '../support/db';
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, unlockedUser, waitForJobs } from './support';
import { startHeldWorker, stopHeldWorkers, type WorkerProcess } from '../imageEdit/support/heldWorker';

let h: Harness;
const started: WorkerProcess[] = [];
const startWorkerProcess = (harness: Harness, delayMs: number) => startHeldWorker(harness, 'draftModels', delayMs);

beforeAll(async () => {
  h = await startHarness('draft-restart', { workers: false });
});

afterAll(async () => {
  await stopHeldWorkers(started);
  await h?.close();
  await closeTestKnex();
});

describe('a worker killed mid draft job', () => {
  it('completes the job once on a restarted worker', async () => {
    const user = await unlockedUser(h.baseUrl);
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId);
    const first = startWorkerProcess(h, 10 * 60_000);
    started.push(first);
    await first.waitFor('WORKER_READY', 60_000);

    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], prompt: 'dusk glow', modelId: 'nano-banana-edit', mode: 'edit_render' });
    expect(res.body).toMatchObject({ success: true, dispatched: 1 });
    await first.waitFor('DRAFT_RUN_STARTED', 30_000);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startWorkerProcess(h, 0);
    started.push(second);
    const [image] = await waitForJobs(h.baseUrl, user, draftId, 120_000);
    expect({ out: second.output().includes('DRAFT_RUN_STARTED'), job: image.last_job }).toEqual({ out: true, job: expect.objectContaining({ status: 'completed' }) });
    expect(image.metadata.history).toHaveLength(2);
    expect(image.metadata.history[0]).toMatchObject({ job_id: res.body.results[0].data.jobId, source: 'edit_render' });
    expect(await h.knex('draft_jobs').where({ draft_image_id: imageId }).select('status')).toEqual([{ status: 'completed' }]);

    const history = await h.client.workflow.getHandle(res.body.results[0].data.workflowId).fetchHistory();
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
    expect(attempts).toEqual({ markDraftJobProcessing: [1], runDraftModel: [2], saveDraftVersion: [1] });
  }, 180_000);
});
