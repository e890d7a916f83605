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
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, getDraft, unlockedUser, waitForJobs } from './support';

let h: Harness;
let user: TestUser;
const started: string[] = [];
let release: () => void = () => undefined;

beforeAll(async () => {
  const real = createProviders(loadConfig());
  const held: Providers = {
    ...real,
    draftModels: {
      run: async (request) => {
        started.push(request.mode);
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return real.draftModels.run(request);
      },
    },
  };
  h = await startHarness('draft-remove', { providers: held });
  user = await unlockedUser(h.baseUrl);
});

afterAll(async () => {
  release();
  await h?.close();
  await closeTestKnex();
});

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function cancelled(workflowId: string): Promise<boolean> {
  const outcome = await h.client.workflow.getHandle(workflowId).result().then(
    () => 'completed',
    (err: unknown) => (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure ? 'cancelled' : String(err)),
  );
  return outcome === 'cancelled';
}

describe('removing what a job runs on', () => {
  it('cancels the job of a removed image, writes nothing, and leaves the other images alone', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const keep = await addImage(h.baseUrl, user, draftId);
    const drop = await addImage(h.baseUrl, user, draftId);
    started.length = 0;
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [drop], prompt: 'snow', modelId: 'flux-kontext-max', mode: 'edit_render' });
    const { workflowId, jobId } = res.body.results[0].data;
    await waitUntil(() => started.length === 1);
    const image = (await getDraft(h.baseUrl, user, draftId)).body.images.find((i) => i.id === drop);
    expect(image?.job).toMatchObject({ id: jobId });
    const removed = await request(h.baseUrl, '/api/enhance-set/drafts/remove-image', { token: user.token, json: { draftId, imageId: drop, sourceUrl: image?.source_url } });
    expect(removed.status).toBe(200);
    expect(await cancelled(workflowId)).toBe(true);
    release();
    // the run finishes in the background now: give it time to write, if it (wrongly) would
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const ext of ['jpg', 'png', 'webp']) expect(await h.storage.objects.stat('drafts', `${user.id}/${draftId}/${drop}/v-${jobId}.${ext}`)).toBeNull();
    const left = await waitForJobs(h.baseUrl, user, draftId);
    expect(left.map((i) => i.id)).toEqual([keep]);
  }, 90_000);

  it('cancels the running jobs of a deleted draft and leaves none of its files', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId);
    started.length = 0;
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    const { workflowId, jobId } = res.body.results[0].data;
    await waitUntil(() => started.length === 1);
    expect((await request(h.baseUrl, '/api/enhance-set/drafts/delete', { token: user.token, json: { draftId } })).status).toBe(200);
    expect(await cancelled(workflowId)).toBe(true);
    release();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await h.knex('draft_jobs').where({ id: jobId })).toEqual([]);
    for (const ext of ['jpg', 'png', 'webp']) expect(await h.storage.objects.stat('drafts', `${user.id}/${draftId}/${imageId}/v-${jobId}.${ext}`)).toBeNull();
  }, 90_000);
});
