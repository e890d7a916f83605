/**
 * The image edit workflow with the hosted provider (fal.ai's queue protocol, served by tests/support/fakeFal.ts):
 * a working model ends in the approval queue; a failing model releases the reservation and leaves nothing behind.
 */
import sharp from 'sharp';
import { createProviders } from '../../providers';
import { loadConfig, type AppConfig } from '../../config/env';
import { IMAGE_EDIT_MESSAGES } from '../../domain/imageEdit';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex } from '../support/db';
import { creditState, generateImage, startHarness, userWithRender, type Harness } from './harness';

const API_KEY = 'fal-test-key';
const WORKING_EDIT = 'fal-ai/nano-banana/edit';
const FAILING_EDIT = 'fal-ai/flux-pro/kontext/max';
const DOWN_EDIT = 'fal-ai/nano-banana-pro/edit';
const UPSCALE = 'fal-ai/esrgan';

let fake: FakeFal;
let working: Harness;
let failing: Harness;
let down: Harness;

function hostedConfig(editModel: string): Partial<AppConfig> {
  return { providerKind: 'fal', falBaseUrl: fake.baseUrl, falApiKey: API_KEY, falImageEditModel: editModel, falUpscaleModel: UPSCALE };
}

beforeAll(async () => {
  fake = await startFakeFal({
    apiKey: API_KEY,
    models: {
      [WORKING_EDIT]: { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 1, runningPolls: 1 },
      [FAILING_EDIT]: { kind: 'image-edit', behaviour: 'fail-runtime', queuedPolls: 0, runningPolls: 1 },
      [DOWN_EDIT]: { kind: 'image-edit', behaviour: 'submit-500' },
      [UPSCALE]: { kind: 'upscale', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 },
    },
  });
  const providersFor = (editModel: string) => createProviders({ ...loadConfig(), ...hostedConfig(editModel) }, { imagePollIntervalMs: 20 });
  working = await startHarness('hosted-ok', { providers: providersFor(WORKING_EDIT), config: hostedConfig(WORKING_EDIT) });
  failing = await startHarness('hosted-failing', { providers: providersFor(FAILING_EDIT), config: hostedConfig(FAILING_EDIT) });
  down = await startHarness('hosted-down', { providers: providersFor(DOWN_EDIT), config: hostedConfig(DOWN_EDIT) });
});

afterAll(async () => {
  await working?.close();
  await failing?.close();
  await down?.close();
  await fake?.close();
  await closeTestKnex();
});

describe('image edit with the hosted provider', () => {
  it("ends in the approval queue with the model's edit, upscaled by the hosted upscaler", async () => {
    const { user, renderId } = await userWithRender(working.baseUrl);

    const res = await generateImage(working.baseUrl, user, { baseImage: renderId, prompt: 'bright summer day' });

    expect(res.status).toBe(200);
    expect(res.body.result.generatedImage).toMatchObject({ model: WORKING_EDIT, description: expect.stringContaining('edited: ') });
    expect(res.body.result.upscaledImage).toMatchObject({ model: UPSCALE, scale: 2, width: res.body.result.generatedImage.width * 2 });
    const submitted = fake.jobs.filter((j) => j.model === WORKING_EDIT);
    expect(submitted).toHaveLength(1);
    // the model got the refined prompt and the render as a data URI
    expect(String(submitted[0].input.prompt)).toContain('Bright summer day.');
    const row = await working.knex('pending_approvals').where({ workspace_id: user.id }).first();
    const stored = await working.storage.objects.localFile('images', row.original_path);
    expect((await sharp(stored.path).metadata()).width).toBe(res.body.result.upscaledImage.width);
    expect(await creditState(working.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
  });

  async function expectNothingLeft(h: Harness, userId: string): Promise<void> {
    expect(await creditState(h.knex, userId)).toEqual({ credits: 5, reserved: 0 });
    expect(await h.knex('credit_reservations').where({ workspace_id: userId }).select('status')).toEqual([{ status: 'released' }]);
    expect(await h.knex('pending_approvals').where({ workspace_id: userId })).toEqual([]);
    const edit = await h.knex('ai_image_edits').where({ workspace_id: userId }).first();
    expect(edit).toMatchObject({ status: 'failed', error: IMAGE_EDIT_MESSAGES.generationFailed });
    const folder = `pending/${edit.edit_data.approvalId}`;
    for (const name of ['generated.jpg', 'generated.png', 'original.jpg', 'original.png', 'preview.jpg', 'thumb.webp']) {
      expect(await h.storage.objects.stat('images', `${folder}/${name}`)).toBeNull();
    }
  }

  it('releases the credit when the model fails the job, without paying for a second job', async () => {
    const { user, renderId } = await userWithRender(failing.baseUrl);

    const res = await generateImage(failing.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(502);
    // the provider's own message (host, request id) is not shown
    expect(res.body).toEqual({ success: false, error: IMAGE_EDIT_MESSAGES.generationFailed, code: 'IMAGE_GENERATION_FAILED' });
    expect(fake.jobs.filter((j) => j.model === FAILING_EDIT)).toHaveLength(1);
    await expectNothingLeft(failing, user.id);
  });

  it('retries while the provider is down, then gives up and releases the credit', async () => {
    const { user, renderId } = await userWithRender(down.baseUrl);

    const res = await generateImage(down.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(502);
    expect(res.body).toEqual({ success: false, error: IMAGE_EDIT_MESSAGES.generationFailed, code: 'IMAGE_GENERATION_FAILED' });
    // the media activity's three attempts, each refused at submit
    expect(fake.log.filter((l) => l.method === 'POST' && l.path === `/${DOWN_EDIT}` && l.status === 500)).toHaveLength(3);
    await expectNothingLeft(down, user.id);
  });
});
