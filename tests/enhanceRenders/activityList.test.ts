/**
 * Draft jobs appear in Activity (GET /api/jobs) with their state (issue 32, item 3): a completed run and a failed one
 * with its reason, named by model and image, placed in their draft, free; another user does not see them.
 */
import sharp from 'sharp';
import type { ActivityJobList } from '../../domain/jobs';
import { ENHANCE_MSG } from '../../domain/enhanceRenders';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { createTestUser } from '../support/accounts';
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, getDraft, renderPng, unlockedUser, waitForJobs } from './support';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('draft-activity');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

it('lists draft jobs with their state, reason and draft; only to their owner', async () => {
  const user = await unlockedUser(h.baseUrl);
  const draftId = await createDraft(h.baseUrl, user, 'Harbour study');
  const good = await addImage(h.baseUrl, user, draftId, await renderPng(120, 80), 'mid-a.png');
  // a stored file that went missing: the job fails with the reason the user sees
  const missing = await addImage(h.baseUrl, user, draftId, await sharp({ create: { width: 400, height: 40, channels: 3, background: '#808080' } }).png().toBuffer(), 'missing.png');
  const stored = (await getDraft(h.baseUrl, user, draftId)).body.images.find((image) => image.id === missing)?.metadata.storage;
  if (!stored) throw new Error('no storage');
  await h.storage.objects.remove('drafts', [stored.path]);
  expect((await dispatch(h.baseUrl, user, { draftId, imageIds: [good], modelId: 'flux-kontext-max', mode: 'edit_render', prompt: 'warm dusk light over the harbour' })).status).toBe(200);
  expect((await dispatch(h.baseUrl, user, { draftId, imageIds: [missing], modelId: 'esrgan', mode: 'basic_upscale' })).status).toBe(200);
  await waitForJobs(h.baseUrl, user, draftId);

  const res = await request<ActivityJobList>(h.baseUrl, '/api/jobs', { token: user.token });
  expect(res.status).toBe(200);
  const drafts = res.body.jobs.filter((job) => job.kind === 'draft');
  expect(drafts).toHaveLength(2);
  const edit = drafts.find((job) => job.item.includes('mid-a.png'));
  expect(edit).toMatchObject({
    state: 'completed',
    item: 'FLUX Kontext Max on mid-a.png: warm dusk light over the harbour',
    projectName: 'Harbour study',
    cost: 0,
    progress: 100,
    error: null,
    canRetry: false,
    canCancel: false,
  });
  expect(edit?.finishedAt).not.toBeNull();
  const upscale = drafts.find((job) => job.item.includes('missing.png'));
  expect(upscale).toMatchObject({ state: 'failed', item: 'Basic Upscale on missing.png', error: ENHANCE_MSG.invalidSourceImage });

  const other = await createTestUser(h.baseUrl);
  const theirs = await request<ActivityJobList>(h.baseUrl, '/api/jobs', { token: other.token });
  expect(theirs.body.jobs.filter((job) => job.kind === 'draft')).toEqual([]);
}, 120_000);
