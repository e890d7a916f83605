/**
 * Enhance Renders with AI_PROVIDER=fal end to end: the draft job workflow runs the option's model on a local server
 * speaking fal.ai's queue protocol (the fake's edit inverts the image, so the new version is its negative), and the
 * vision prompt goes to any-llm/vision; a model that fails leaves the image as it was.
 */
import sharp from 'sharp';
import { loadConfig } from '../../config/env';
import { createProviders } from '../../providers';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import type { TestUser } from '../support/accounts';
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, download, getDraft, solidJpeg, unlockedUser, uploadFile, waitForJobs } from './support';

const KEY = 'hosted-draft-key';
let fal: FakeFal;
let h: Harness;
let user: TestUser;

beforeAll(async () => {
  fal = await startFakeFal({
    apiKey: KEY,
    models: {
      'fal-ai/nano-banana/edit': { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
      'fal-ai/esrgan': { kind: 'upscale', behaviour: 'fail-runtime', queuedPolls: 0, runningPolls: 0 },
      'fal-ai/any-llm/vision': { kind: 'vision-llm', behaviour: 'succeed', queuedPolls: 0, runningPolls: 0 },
    },
  });
  const hosted = { providerKind: 'fal' as const, falBaseUrl: fal.baseUrl, falApiKey: KEY };
  h = await startHarness('draft-hosted', { config: hosted, providers: createProviders({ ...loadConfig(), ...hosted }, { imagePollIntervalMs: 5 }) });
  user = await unlockedUser(h.baseUrl);
});

afterAll(async () => {
  await h?.close();
  await fal?.close();
  await closeTestKnex();
});

describe('draft jobs on the hosted provider', () => {
  it('runs Nano Banana Edit with the reference on the queue and stores its answer as the new version', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const source = await solidJpeg({ r: 200, g: 40, b: 40 }, 96, 64);
    const imageId = await addImage(h.baseUrl, user, draftId, source, 'red.jpg');
    const ref = await uploadFile(h.baseUrl, user, draftId, await solidJpeg({ r: 0, g: 0, b: 255 }, 16, 16), { purpose: 'reference', name: 'blue.jpg', type: 'image/jpeg' });
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], prompt: 'golden hour', modelId: 'nano-banana-edit', mode: 'edit_render', references: [ref.body.url] });
    expect(res.body).toMatchObject({ success: true, dispatched: 1 });
    const [image] = await waitForJobs(h.baseUrl, user, draftId);
    expect(image.last_job).toMatchObject({ status: 'completed' });
    expect(image.metadata.history).toHaveLength(2);
    const job = fal.jobs.find((j) => j.model === 'fal-ai/nano-banana/edit');
    expect(job?.input).toMatchObject({ prompt: 'golden hour', num_images: 1 });
    expect((job?.input.image_urls as string[]).length).toBe(2);
    const stats = await sharp(await download(h.baseUrl, image.resolved_url)).stats();
    // the fake inverts: red (200, 40, 40) comes back cyan-ish
    expect(stats.channels[0].mean).toBeLessThan(90);
    expect(stats.channels[1].mean).toBeGreaterThan(180);
    expect((await h.knex('draft_jobs').where({ draft_image_id: imageId }).first('provider_model')).provider_model).toBe('fal-ai/nano-banana/edit');
  });

  it('fails the job when the hosted model fails, keeping the image as it was', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId, await solidJpeg({ r: 90, g: 90, b: 90 }, 48, 32));
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(res.body.dispatched).toBe(1);
    const [image] = await waitForJobs(h.baseUrl, user, draftId, 120_000);
    expect(image.last_job).toMatchObject({ status: 'failed', error: 'The edit failed. Please try again.' });
    expect(image.metadata.history).toHaveLength(1);
  }, 150_000);

  it('asks any-llm/vision for the enhanced prompt', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    await addImage(h.baseUrl, user, draftId, await solidJpeg({ r: 1, g: 2, b: 3 }, 40, 30));
    const image = (await getDraft(h.baseUrl, user, draftId)).body.images[0];
    const res = await request(h.baseUrl, '/api/ai-enhance-prompt/vision', { token: user.token, json: { mode: 'attach', prompt: 'add a jetty', imageUrls: [image.resolved_url], referenceUrls: [] } });
    expect(res.status).toBe(200);
    expect(res.body.enhancedPrompt).toMatch(/^\[google\/gemini-flash-1\.5 saw 40x30\] .*add a jetty/);
  });
});
