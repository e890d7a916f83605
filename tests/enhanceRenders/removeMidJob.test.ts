/**
 * A draft (or one of its images) removed while a job runs on it: the job's workflow is cancelled, the run stops
 * before it writes anything, and no file of the draft is left behind; another image's job is not disturbed.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { loadConfig } from '../../config/env';
import { createProviders, type Providers } from '../../providers';
import type { TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startHarness, type Harness, type RunningWorkers } from '../imageEdit/harness';
import { startPromptCancelWorkers } from './promptCancelWorkers';
import { addImage, createDraft, dispatch, getDraft, unlockedUser, waitForJobs } from './support';

let h: Harness;
let workers: RunningWorkers;
let user: TestUser;

/** One model call, held until the test releases it; `finished` once the real model has answered it. */
interface HeldRun {
  mode: string;
  release: () => void;
  finished: Promise<void>;
}
const runs: HeldRun[] = [];
let runStarted: (run: HeldRun) => void = () => undefined;

/** The next model call, once the job's run has made it. */
function nextRun(): Promise<HeldRun> {
  return new Promise((resolve) => {
    runStarted = resolve;
  });
}

beforeAll(async () => {
  const real = createProviders(loadConfig());
  const held: Providers = {
    ...real,
    draftModels: {
      run: async (request) => {
        let release!: () => void;
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let finish!: () => void;
        const finished = new Promise<void>((resolve) => {
          finish = resolve;
        });
        const run: HeldRun = { mode: request.mode, release, finished };
        runs.push(run);
        runStarted(run);
        await released;
        try {
          return await real.draftModels.run(request);
        } finally {
          finish();
        }
      },
    },
  };
  h = await startHarness('draft-remove', { providers: held, workers: false });
  // a cancel reaches the model run at its next heartbeat (tests/enhanceRenders/promptCancelWorkers.ts)
  workers = await startPromptCancelWorkers(h);
  user = await unlockedUser(h.baseUrl);
});

afterAll(async () => {
  for (const run of runs) run.release();
  await Promise.all(runs.map((run) => run.finished.catch(() => undefined)));
  await workers?.stop();
  await h?.close();
  await closeTestKnex();
});

async function cancelled(workflowId: string): Promise<boolean> {
  const outcome = await h.client.workflow.getHandle(workflowId).result().then(
    () => 'completed',
    (err: unknown) => (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure ? 'cancelled' : String(err)),
  );
  return outcome === 'cancelled';
}

/** How each attempt of the job's model run (runDraftModel) ended, from the workflow's history. */
async function modelRunEnds(workflowId: string): Promise<string[]> {
  const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runDraftModel').map((e) => e.eventId?.toString());
  expect(scheduled).toHaveLength(1);
  const ends: string[] = [];
  for (const e of events) {
    const ended = [
      ['completed', e.activityTaskCompletedEventAttributes],
      ['failed', e.activityTaskFailedEventAttributes],
      ['timed out', e.activityTaskTimedOutEventAttributes],
      ['cancelled', e.activityTaskCanceledEventAttributes],
    ] as const;
    for (const [name, attributes] of ended) if (attributes && attributes.scheduledEventId?.toString() === scheduled[0]) ends.push(name);
  }
  return ends;
}

describe('removing what a job runs on', () => {
  it('cancels the job of a removed image, writes nothing, and leaves the other images alone', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const keep = await addImage(h.baseUrl, user, draftId);
    const drop = await addImage(h.baseUrl, user, draftId);
    const running = nextRun();
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [drop], prompt: 'snow', modelId: 'flux-kontext-max', mode: 'edit_render' });
    const { workflowId, jobId } = res.body.results[0].data;
    const run = await running;
    expect(run.mode).toBe('edit_render');
    const image = (await getDraft(h.baseUrl, user, draftId)).body.images.find((i) => i.id === drop);
    expect(image?.job).toMatchObject({ id: jobId });
    const removed = await request(h.baseUrl, '/api/enhance-set/drafts/remove-image', { token: user.token, json: { draftId, imageId: drop, sourceUrl: image?.source_url } });
    expect(removed.status).toBe(200);
    expect(await cancelled(workflowId)).toBe(true);
    // the model run's activity ended as cancelled (the workflow waits for that before it closes), without a result
    expect(await modelRunEnds(workflowId)).toEqual(['cancelled']);
    // the model answers only now, after the cancel: nothing may be written with its answer
    run.release();
    await run.finished;
    for (const ext of ['jpg', 'png', 'webp']) expect(await h.storage.objects.stat('drafts', `${user.id}/${draftId}/${drop}/v-${jobId}.${ext}`)).toBeNull();
    const left = await waitForJobs(h.baseUrl, user, draftId);
    expect(left.map((i) => i.id)).toEqual([keep]);
  }, 90_000);

  it('cancels the running jobs of a deleted draft and leaves none of its files', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId);
    const running = nextRun();
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    const { workflowId, jobId } = res.body.results[0].data;
    const run = await running;
    expect(run.mode).toBe('basic_upscale');
    expect((await request(h.baseUrl, '/api/enhance-set/drafts/delete', { token: user.token, json: { draftId } })).status).toBe(200);
    expect(await cancelled(workflowId)).toBe(true);
    expect(await modelRunEnds(workflowId)).toEqual(['cancelled']);
    run.release();
    await run.finished;
    expect(await h.knex('draft_jobs').where({ id: jobId })).toEqual([]);
    for (const ext of ['jpg', 'png', 'webp']) expect(await h.storage.objects.stat('drafts', `${user.id}/${draftId}/${imageId}/v-${jobId}.${ext}`)).toBeNull();
  }, 90_000);
});
