/**
 * One user's failing inputs cannot stop another user's Enhance jobs (issue 32, item 3): the local draft models'
 * breaker is per user. The worker's breaker here has a short call limit and opens at the first counted failure, so
 * user A's large image times out and opens A's breaker; user B's job on the same worker right after still completes.
 * With one shared breaker B's job would fail fast ('... is OPEN') for the next minute.
 *
 * A timed-out call is not stopped: sharp goes on with A's large image on the libuv pool after the breaker gave up.
 * B's job waits until that work is done (sharp's own counters), or under a busy CPU B's small image queues behind
 * it past the 400 ms limit and its job fails for a reason the test is not about.
 */
import sharp from 'sharp';
import { loadConfig } from '../../config/env';
import { ENHANCE_MSG } from '../../domain/enhanceRenders';
import { createProviders } from '../../providers';
import { closeTestKnex } from '../support/db';
import { houseStill } from '../support/stills';
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, renderPng, unlockedUser, waitForJobs } from './support';

let h: Harness;

beforeAll(async () => {
  const config = loadConfig();
  h = await startHarness('draft-breakers', { providers: createProviders(config, { breaker: { callTimeoutMs: 400, failureThreshold: 1 } }) });
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

/** Resolves once no sharp work is queued or running in this process (the harness's workers run here). */
async function sharpIdle(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { queue, process } = sharp.counters();
    if (queue === 0 && process === 0) return;
    if (Date.now() > deadline) throw new Error(`sharp still busy after ${timeoutMs} ms: ${queue} queued, ${process} running`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it("fails user A's job on A's own breaker and completes user B's job right after", async () => {
  const a = await unlockedUser(h.baseUrl);
  const b = await unlockedUser(h.baseUrl);
  const draftA = await createDraft(h.baseUrl, a);
  const imageA = await addImage(h.baseUrl, a, draftA, await houseStill(4096, 2731).png().toBuffer(), 'large.png');
  const started = await dispatch(h.baseUrl, a, { draftId: draftA, imageIds: [imageA], modelId: 'render-enhance', mode: 'render_enhance' });
  expect(started.status).toBe(200);
  const [failed] = await waitForJobs(h.baseUrl, a, draftA, 120_000);
  expect(failed.last_job).toMatchObject({ status: 'failed' });
  expect([ENHANCE_MSG.modelTimedOut, ENHANCE_MSG.modelPaused]).toContain(failed.last_job?.error);

  await sharpIdle(60_000);
  const draftB = await createDraft(h.baseUrl, b);
  const imageB = await addImage(h.baseUrl, b, draftB, await renderPng(96, 64), 'small.png');
  const ran = await dispatch(h.baseUrl, b, { draftId: draftB, imageIds: [imageB], modelId: 'render-enhance', mode: 'render_enhance' });
  expect(ran.status).toBe(200);
  const [done] = await waitForJobs(h.baseUrl, b, draftB, 60_000);
  // the status with the job's error beside it, so a failure says why B's job failed
  expect(`${done.last_job?.status} ${done.last_job?.error ?? ''}`.trim()).toBe('completed');
  expect(done.metadata.history).toHaveLength(2);
}, 240_000);
