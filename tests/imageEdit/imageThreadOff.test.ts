/**
 * IMAGE_THREAD=off: the worker does the image work on its own thread (activities/imageWork.ts inProcessImageWork),
 * and an edit still ends in the approval queue with its preview, thumbnail and original (that the thread makes the
 * same bytes is checked task by task in imageThread.test.ts).
 */
import sharp from 'sharp';
import { closeTestKnex } from '../support/db';
import { creditState, generateImage, startHarness, userWithRender, type Harness } from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('image-thread-off', { imageThread: false });
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

describe('an image edit with the image thread off', () => {
  it('reaches the approval queue with its watermarked preview and private original', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl, { width: 640, height: 480 });
    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, prompt: 'a snowy winter evening' });

    expect(res.status).toBe(200);
    const { upscaledImage, savedImage } = res.body.result;
    expect(upscaledImage).toMatchObject({ width: 960, height: 960, scale: 2, model: 'local/lanczos3' });
    expect(savedImage).toMatchObject({ status: 'pending_approval', fullCost: 1, aspectRatio: '1:1' });
    const preview = await fetch(new URL(savedImage.previewUrl, h.baseUrl));
    expect(preview.status).toBe(200);
    expect(await sharp(Buffer.from(await preview.arrayBuffer())).metadata()).toMatchObject({ width: 960, height: 960, format: 'jpeg' });
    const row = await h.knex('pending_approvals').where({ id: savedImage.approvalId }).first('original_path', 'thumbnail_path');
    expect((await h.storage.objects.stat('images', String(row.original_path)))?.size).toBe(upscaledImage.fileSize);
    expect(await h.storage.objects.stat('images', String(row.thumbnail_path))).not.toBeNull();
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
  });
});
