/**
 * Draft jobs end to end on real PostgreSQL, storage and the Temporal dev server, with the local provider doing real
 * sharp work: every mode makes a new version on top of the history, nine edits keep eight (older files removed),
 * undo, redo and restore, the dispatch's refusals and per-image results, usage records, realtime events, and the
 * vision prompt.
 */
import sharp from 'sharp';
import { draftJobWorkflowId } from '../../domain/enhanceRenders';
import { loadConfig } from '../../config/env';
import { DraftUploads } from '../../services/generation/draftUploads';
import { createStorage } from '../../storage';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import type { TestUser } from '../support/accounts';
import { startHarness, type Harness } from '../imageEdit/harness';
import { addImage, createDraft, dispatch, download, getDraft, renderPng, solidJpeg, unlockedUser, uploadFile, waitForJobs, type DraftImageBody } from './support';

let h: Harness;
let user: TestUser;

beforeAll(async () => {
  h = await startHarness('draft-jobs');
  user = await unlockedUser(h.baseUrl);
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function meanRgb(bytes: Buffer): Promise<number[]> {
  const stats = await sharp(bytes).removeAlpha().stats();
  return stats.channels.slice(0, 3).map((c) => c.mean);
}

async function runAndWait(draftId: string, body: Record<string, unknown>): Promise<DraftImageBody[]> {
  const res = await dispatch(h.baseUrl, user, { draftId, ...body });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, error: null });
  return waitForJobs(h.baseUrl, user, draftId);
}

async function reference(draftId: string, colour: { r: number; g: number; b: number }): Promise<string> {
  const up = await uploadFile(h.baseUrl, user, draftId, await solidJpeg(colour), { name: 'look.jpg', type: 'image/jpeg', purpose: 'reference' });
  expect(up.status).toBe(200);
  return up.body.url;
}

describe('draft jobs', () => {
  it('answers the spec shape and runs one workflow per image, recording usage and a realtime event', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const a = await addImage(h.baseUrl, user, draftId, await renderPng(320, 240), 'a.png');
    const b = await addImage(h.baseUrl, user, draftId, await renderPng(240, 320), 'b.png');
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [a, b], prompt: 'make it a snowy evening', modelId: 'flux-kontext-max', mode: 'edit_render', references: [] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      dispatched: 2,
      error: null,
      results: [
        { imageId: a, ok: true, error: null, data: { jobId: expect.any(String), workflowId: expect.stringMatching(/^draft-job-/), status: 'pending' } },
        { imageId: b, ok: true, error: null, data: { jobId: expect.any(String), workflowId: expect.stringMatching(/^draft-job-/), status: 'pending' } },
      ],
    });
    const jobIds = res.body.results.map((r: { data: { jobId: string } }) => r.data.jobId);
    for (const [i, jobId] of jobIds.entries()) expect(res.body.results[i].data.workflowId).toBe(draftJobWorkflowId(jobId));
    const images = await waitForJobs(h.baseUrl, user, draftId);
    for (const image of images) {
      expect(image.metadata.history).toHaveLength(2);
      expect(image.metadata.history[0]).toMatchObject({ source: 'edit_render', model_id: 'flux-kontext-max' });
      expect(image.metadata.previous_url).toBe(image.metadata.history[1].signed_url);
      expect(image.last_job).toMatchObject({ status: 'completed', error: null });
    }
    const rows = await h.knex('draft_jobs').whereIn('id', jobIds).select('status', 'credits_charged', 'usage', 'provider_model', 'completed_at');
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'completed', credits_charged: 0, provider_model: 'local/sharp-draft:edit_render', completed_at: expect.any(Date) });
      expect(row.usage).toMatchObject({ mode: 'edit_render', modelId: 'flux-kontext-max', credits: 0, note: 'free during the Beta' });
    }
    // free during the Beta: the balance is untouched
    expect(await h.knex('profiles').where({ id: user.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
    const events = await h.knex('user_events').where({ workspace_id: user.id }).select('payload');
    const finished = events.map((e) => e.payload).filter((p) => p.kind === 'job' && p.job === 'draft' && p.status === 'completed');
    expect(finished.map((p) => p.imageId).sort()).toEqual([a, b].sort());
    expect(finished.every((p) => p.draftId === draftId)).toBe(true);
    // the Temporal run carries the search attributes like other jobs
    const description = await h.client.workflow.getHandle(res.body.results[0].data.workflowId).describe();
    expect(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
      expect.arrayContaining([
        ['RsJobKind', 'draft-job'],
        ['RsUserId', user.id],
      ]),
    );
  });

  it('keeps the version chain: a draft image lists its versions with their predecessors and runs, and a render moved to a project links back to it', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId, await renderPng(240, 180), 'chain.png');
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], prompt: 'soft morning light', modelId: 'flux-kontext-max', mode: 'edit_render', references: [] });
    expect(res.status).toBe(200);
    const workflowId = res.body.results[0].data.workflowId as string;
    await waitForJobs(h.baseUrl, user, draftId);

    const chain = await request<{ item: { kind: string }; versions: Array<{ index: number; source: string; predecessor: number | null; workflow_id: string | null; url: string }> }>(h.baseUrl, `/api/content/${imageId}/lineage`, { token: user.token });
    expect(chain.status).toBe(200);
    expect(chain.body.item).toMatchObject({ kind: 'draft_image', id: imageId, exists: true, name: 'chain.png' });
    expect(chain.body.versions.map(({ index, source, predecessor, workflow_id }) => ({ index, source, predecessor, workflow_id }))).toEqual([
      { index: 0, source: 'edit_render', predecessor: 1, workflow_id: workflowId },
      { index: 1, source: 'upload', predecessor: null, workflow_id: null },
    ]);
    expect((await download(h.baseUrl, chain.body.versions[0].url)).length).toBeGreaterThan(0);

    const commit = await request<{ projectId: string }>(h.baseUrl, '/api/enhance-set/drafts/commit', { token: user.token, json: { draftId, newProjectName: 'Chain kept' } });
    expect(commit.status).toBe(200);
    const [render] = await h.knex('renders').where({ project_id: commit.body.projectId }).pluck('id');
    const up = await request<{ ancestors: Array<Record<string, unknown>> }>(h.baseUrl, `/api/content/${render}/lineage`, { token: user.token });
    expect(up.status).toBe(200);
    expect(up.body.ancestors).toEqual([expect.objectContaining({ kind: 'draft_image', id: imageId, exists: true, name: 'chain.png', depth: 1, workflow_id: null })]);
    const down = await request<{ descendants: Array<Record<string, unknown>> }>(h.baseUrl, `/api/content/${imageId}/lineage`, { token: user.token });
    expect(down.body.descendants).toEqual([expect.objectContaining({ kind: 'render', id: render, exists: true, workflow_id: workflowId })]);

    // another user sees neither; deleting the draft keeps the render's chain, with the draft image shown as deleted
    const stranger = await unlockedUser(h.baseUrl);
    expect((await request(h.baseUrl, `/api/content/${imageId}/lineage`, { token: stranger.token })).status).toBe(404);
    expect((await request(h.baseUrl, '/api/enhance-set/drafts/delete', { token: user.token, json: { draftId } })).status).toBe(200);
    const after = await request<{ ancestors: Array<Record<string, unknown>> }>(h.baseUrl, `/api/content/${render}/lineage`, { token: user.token });
    expect(after.body.ancestors).toEqual([expect.objectContaining({ kind: 'draft_image', id: imageId, exists: false })]);
  });

  it('makes a new version in every mode, each on top of the history', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const target = await addImage(h.baseUrl, user, draftId, await renderPng(200, 150), 'target.png');
    const pinned = await addImage(h.baseUrl, user, draftId, await solidJpeg({ r: 230, g: 90, b: 30 }, 160, 120), 'pinned.jpg');
    const blue = await reference(draftId, { r: 20, g: 60, b: 220 });
    const green = await reference(draftId, { r: 30, g: 200, b: 40 });
    const before = await meanRgb(await download(h.baseUrl, (await getDraft(h.baseUrl, user, draftId)).body.images[0].resolved_url));

    const runs: Array<{ body: Record<string, unknown>; source: string; check: (image: DraftImageBody, bytes: Buffer, previous: DraftImageBody) => Promise<void> }> = [
      {
        body: { imageIds: [target], prompt: 'warm golden evening', modelId: 'nano-banana-edit', mode: 'edit_render', references: [{ id: 'r1', type: 'reference', url: blue, name: 'look.jpg', useForLook: true }] },
        source: 'edit_render',
        check: async (_image, bytes) => expect(await sharp(bytes).metadata()).toMatchObject({ width: 200, height: 150 }),
      },
      {
        body: { imageIds: [target], prompt: '', modelId: 'style-transfer', mode: 'style_transfer', references: [blue, green] },
        source: 'style_transfer',
        check: async (_image, bytes) => {
          const [r, g, b] = await meanRgb(bytes);
          // the mean moved to the references' (blue-green), away from the red-leaning original
          expect(b).toBeGreaterThan(r);
          expect(g).toBeGreaterThan(r);
        },
      },
      {
        body: { imageIds: [target], prompt: null, modelId: 'nano-banana-edit', mode: 'style_sync', references: [], syncImageId: pinned },
        source: 'style_sync',
        check: async (_image, bytes) => {
          const [r, , b] = await meanRgb(bytes);
          expect(r).toBeGreaterThan(b); // the pinned image is orange
        },
      },
      {
        body: { imageIds: [target], modelId: 'esrgan', mode: 'basic_upscale' },
        source: 'basic_upscale',
        check: async (image, bytes, previous) => {
          const meta = await sharp(bytes).metadata();
          expect([meta.width, meta.height]).toEqual([previous.metadata.width * 2, previous.metadata.height * 2]);
          expect([image.metadata.width, image.metadata.height]).toEqual([meta.width, meta.height]);
        },
      },
      {
        body: { imageIds: [target], modelId: 'creative-upscale', mode: 'finish_upscale', prompt: 'ignored: upscales take no prompt' },
        source: 'finish_upscale',
        check: async (_image, bytes, previous) => expect((await sharp(bytes).metadata()).width).toBe(previous.metadata.width * 2),
      },
      {
        body: { imageIds: [target], modelId: 'render-enhance', mode: 'render_enhance' },
        source: 'render_enhance',
        check: async (_image, bytes, previous) => {
          const old = await download(h.baseUrl, previous.resolved_url);
          expect(Buffer.compare(old, bytes)).not.toBe(0);
        },
      },
    ];

    let previous = (await getDraft(h.baseUrl, user, draftId)).body.images.find((i) => i.id === target) as DraftImageBody;
    for (const [n, run] of runs.entries()) {
      const images = await runAndWait(draftId, run.body);
      const image = images.find((i) => i.id === target) as DraftImageBody;
      expect({ source: image.metadata.history[0].source, versions: image.metadata.history.length, job: image.last_job?.status, error: image.last_job?.error }).toEqual({
        source: run.source,
        versions: n + 2,
        job: 'completed',
        error: null,
      });
      expect(image.metadata.history[1].url).toBe(previous.metadata.history[0].url);
      expect(image.last_job?.status).toBe('completed');
      const bytes = await download(h.baseUrl, image.resolved_url);
      await run.check(image, bytes, previous);
      previous = image;
    }
    expect(before).toHaveLength(3);
    // the pinned image was the reference, never a target
    const pinnedImage = (await getDraft(h.baseUrl, user, draftId)).body.images.find((i) => i.id === pinned) as DraftImageBody;
    expect(pinnedImage.metadata.history).toHaveLength(1);
    const prompts = await h.knex('draft_jobs').where({ draft_image_id: target }).orderBy('created_at').pluck('prompt');
    expect(prompts[3]).toBeNull(); // basic upscale
    expect(prompts[4]).toBeNull(); // creative upscale ignores the words
    expect(prompts[5]).toMatch(/^Turn this architectural render into a photorealistic photograph/);
  }, 180_000);

  it('keeps eight versions after nine edits and removes the files of older ones; undo, redo and restore move versions without losing any', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId, await renderPng(160, 120));
    const first = (await getDraft(h.baseUrl, user, draftId)).body.images[0];
    const words = ['night', 'dusk', 'snow', 'warm', 'bright', 'fog', 'night', 'dusk', 'snow'];
    let images: DraftImageBody[] = [];
    for (const word of words) images = await runAndWait(draftId, { imageIds: [imageId], prompt: `make it ${word}`, modelId: 'flux-kontext-max', mode: 'edit_render' });
    const image = images[0];
    expect(image.metadata.history).toHaveLength(8);
    // 10 versions were made (upload + 9): the upload and the first edit fell off, their files are gone
    const jobs = await h.knex('draft_jobs').where({ draft_image_id: imageId }).orderBy('created_at').pluck('id');
    expect(jobs).toHaveLength(9);
    expect(image.metadata.history.map((v) => v.job_id)).toEqual(jobs.slice(1).reverse());
    expect(await h.storage.objects.stat('drafts', first.metadata.storage.path)).toBeNull();
    const firstEdit = await h.knex('draft_jobs').where({ id: jobs[0] }).first('result_url');
    expect(await h.storage.objects.stat('drafts', firstEdit.result_url.replace('/api/files/drafts/', ''))).toBeNull();
    for (const version of image.metadata.history) expect(await h.storage.objects.stat('drafts', version.storage.path)).not.toBeNull();

    // undo: the previous version becomes current; redo swaps back
    const undo = await request(h.baseUrl, '/api/enhance-set/drafts/restore-version', { token: user.token, json: { draftId, imageId, versionUrl: image.metadata.previous_url } });
    expect(undo.status).toBe(200);
    expect(undo.body.image.metadata.history.map((v: { job_id: string }) => v.job_id)).toEqual([jobs[7], jobs[8], ...jobs.slice(1, 7).reverse()]);
    expect(undo.body.image.resolved_url).toBe(image.metadata.history[1].signed_url);
    const redo = await request(h.baseUrl, '/api/enhance-set/drafts/restore-version', { token: user.token, json: { draftId, imageId, versionUrl: undo.body.image.metadata.previous_url } });
    expect(redo.body.image.metadata.history.map((v: { job_id: string }) => v.job_id)).toEqual(jobs.slice(1).reverse());
    // restore the oldest kept ("Back 7") by its stable URL
    const oldest = image.metadata.history[7];
    const restored = await request(h.baseUrl, '/api/enhance-set/drafts/restore-version', { token: user.token, json: { draftId, imageId, versionUrl: oldest.url } });
    expect(restored.body.image.metadata.history[0].job_id).toBe(oldest.job_id);
    expect(restored.body.image.metadata.history).toHaveLength(8);
    // an edit now starts from the restored version and pushes the rest down
    const after = await runAndWait(draftId, { imageIds: [imageId], prompt: 'brighter', modelId: 'flux-kontext-max', mode: 'edit_render' });
    expect(after[0].metadata.history[1].job_id).toBe(oldest.job_id);
    expect(after[0].metadata.history).toHaveLength(8);
  }, 240_000);

  it('refuses bad dispatches with the spec texts and answers per-image failures in results', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId);
    const pinned = await addImage(h.baseUrl, user, draftId);
    const ref = await reference(draftId, { r: 10, g: 10, b: 200 });
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ imageIds: [], modelId: 'esrgan', mode: 'basic_upscale' }, 400, 'Select at least one image to transform'],
      [{ imageIds: ['local-1700000000000'], modelId: 'esrgan', mode: 'basic_upscale' }, 400, 'Please wait a moment for images to finish saving, then try again.'],
      [{ imageIds: [imageId], modelId: 'flux-kontext-max', mode: 'edit_render', prompt: '  ' }, 400, 'Please describe the edit you want'],
      [{ imageIds: [imageId], modelId: 'flux-kontext-max', mode: 'edit_render', prompt: 'x', references: [ref] }, 400, 'Attachments are available only for Nano Banana and Style Transfer'],
      [{ imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale', references: [ref] }, 400, 'Attachments are available only for Nano Banana and Style Transfer'],
      [{ imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'x', references: [ref, ref, ref, ref] }, 400, 'Max 3 attachments for this model'],
      [{ imageIds: [imageId], modelId: 'style-transfer', mode: 'style_transfer', references: [ref, ref, ref, ref, ref] }, 400, 'At most 4 references are sent per job'],
      [{ imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'style_sync', syncImageId: pinned, references: [ref] }, 400, 'Attachments are disabled while Sync Images is active'],
      [{ imageIds: [imageId, pinned], modelId: 'nano-banana-edit', mode: 'style_sync', syncImageId: pinned }, 400, 'The pinned style image cannot be a target'],
      [{ imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'style_sync' }, 400, 'Pin one image as the style reference first'],
      [{ imageIds: [imageId], modelId: 'flux-kontext-max', mode: 'style_sync' }, 400, 'FLUX Kontext Max does not run style_sync'],
      [{ imageIds: [imageId], modelId: 'esrgan', mode: 'finish_upscale' }, 400, 'Basic Upscale does not run finish_upscale'],
      [{ imageIds: [imageId], modelId: 'dall-e', mode: 'edit_render' }, 400, 'Unknown model "dall-e"'],
      [{ imageIds: [imageId], modelId: 'style-transfer', mode: 'style_transfer' }, 400, 'Attach at least one reference image for Style Transfer'],
      [{ imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'x', references: ['/api/files/drafts/elsewhere/x.png'] }, 400, 'A reference image was not found. Attach it again.'],
    ];
    for (const [body, status, error] of cases) {
      const res = await dispatch(h.baseUrl, user, { draftId, ...body });
      expect({ body, status: res.status, error: res.body.error, success: res.body.success }).toEqual({ body, status, error, success: false });
    }
    expect(await h.knex('draft_jobs').where({ draft_id: draftId })).toEqual([]);

    // per image: an unknown id fails alone, the good one starts
    const unknown = '00000000-0000-4000-8000-000000000000';
    const mixed = await dispatch(h.baseUrl, user, { draftId, imageIds: [unknown, imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(mixed.status).toBe(200);
    expect(mixed.body).toMatchObject({
      success: false,
      dispatched: 1,
      error: 'Image not found in this draft',
      results: [
        { imageId: unknown, ok: false, error: 'Image not found in this draft', data: { details: 'Image not found in this draft' } },
        { imageId, ok: true, error: null },
      ],
    });
    await waitForJobs(h.baseUrl, user, draftId);
    // a second dispatch while a job is unfinished on the image is refused for that image alone
    await h.knex('draft_jobs').insert({ draft_id: draftId, draft_image_id: imageId, workspace_id: user.id, model_id: 'esrgan', mode: 'basic_upscale', status: 'processing', workflow_id: `draft-job-held-${imageId}` });
    const again = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId, pinned], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(again.body).toMatchObject({
      success: false,
      dispatched: 1,
      error: 'This image is still processing',
      results: [
        { imageId, ok: false, error: 'This image is still processing' },
        { imageId: pinned, ok: true },
      ],
    });
    await h.knex('draft_jobs').where({ workflow_id: `draft-job-held-${imageId}` }).update({ status: 'failed' });
    await waitForJobs(h.baseUrl, user, draftId);
  });

  it('keeps a reference upload once a dispatch starts a job with it; a dispatch that starts none leaves it waiting, and the sweep removes what waits', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId);
    const used = await reference(draftId, { r: 200, g: 20, b: 20 });
    const unused = await reference(draftId, { r: 20, g: 200, b: 20 });
    const storage = createStorage(loadConfig());
    const rowOf = async (url: string) => h.knex('draft_uploads').where({ path: storage.urls.parse(url)?.path ?? '' }).first('registered_at');
    const waiting = async () => (await h.knex('draft_uploads').where({ draft_id: draftId, purpose: 'reference' }).whereNull('registered_at')).length;
    expect(await waiting()).toBe(2);

    // no job starts (the image is not in the draft): the reference still waits
    const unknown = '00000000-0000-4000-8000-000000000000';
    const none = await dispatch(h.baseUrl, user, { draftId, imageIds: [unknown], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'red roof', references: [used] });
    expect(none.body).toMatchObject({ success: false, dispatched: 0 });
    expect(await waiting()).toBe(2);

    await runAndWait(draftId, { imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'red roof', references: [used] });
    expect(await rowOf(used)).toEqual({ registered_at: expect.any(Date) });
    expect(await rowOf(unused)).toEqual({ registered_at: null });

    // past DRAFT_UPLOAD_MAX_AGE_MINUTES the unused one goes (row and file); the used one stays with the draft
    await h.knex('draft_uploads').where({ draft_id: draftId }).update({ created_at: h.knex.raw("now() - interval '2 hours'") });
    await new DraftUploads({ knex: h.knex, storage, limits: { maxAgeMinutes: 30, waitingPerAccount: 20 } }).sweepUnregistered();
    const left = (await storage.objects.list('drafts', `${user.id}/${draftId}/references`)).map((o) => o.path);
    expect(left).toEqual([(await h.knex('draft_uploads').where({ draft_id: draftId, purpose: 'reference' }).first('path')).path]);
    expect(await rowOf(unused)).toBeUndefined();
    const late = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'blue roof', references: [unused] });
    expect([late.status, late.body.error]).toEqual([400, 'A reference image was not found. Attach it again.']);
    await runAndWait(draftId, { imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'green roof', references: [used] });
  });

  it('fails a job the model refuses: the image keeps its version, the job records why', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    // a JPEG cut in half: its header reads (the upload takes it) but its pixels do not decode, so the model refuses it
    const whole = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).jpeg().toBuffer();
    const broken = whole.subarray(0, Math.floor(whole.length / 2));
    const imageId = await addImage(h.baseUrl, user, draftId, broken, 'cut.jpg');
    const images = await runAndWait(draftId, { imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(images[0].metadata.history).toHaveLength(1);
    expect(images[0].last_job).toMatchObject({ status: 'failed', error: expect.stringMatching(/^The edit failed\. Please try again\. \(The image could not be read/) });
    const events = await h.knex('user_events').where({ workspace_id: user.id }).select('payload');
    expect(events.some((e) => e.payload.job === 'draft' && e.payload.status === 'failed' && e.payload.imageId === imageId)).toBe(true);
  });

  it('upscales a copy of an image over 4096 px (the result within 8192 px) and keeps the upload as it was', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    // 4200 px wide: twice that would pass the 8192 px limit, so the model gets a 4096 px copy
    const upload = await sharp({ create: { width: 4200, height: 40, channels: 3, background: '#808080' } }).png().toBuffer();
    const imageId = await addImage(h.baseUrl, user, draftId, upload);
    const images = await runAndWait(draftId, { imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(images[0].last_job).toMatchObject({ status: 'completed' });
    expect([images[0].metadata.width, images[0].metadata.height]).toEqual([8192, 78]);
    const [result, original] = images[0].metadata.history;
    expect(result.source).toBe('basic_upscale');
    expect((await download(h.baseUrl, original.signed_url)).equals(upload)).toBe(true);
  });
});

describe('vision prompt', () => {
  it('enhances a prompt from the user\'s own images (attach and style_sync) and refuses other files', async () => {
    const draftId = await createDraft(h.baseUrl, user);
    await addImage(h.baseUrl, user, draftId);
    const image = (await getDraft(h.baseUrl, user, draftId)).body.images[0];
    const ref = await reference(draftId, { r: 240, g: 150, b: 40 });
    const attach = await request(h.baseUrl, '/api/ai-enhance-prompt/vision', { token: user.token, json: { mode: 'attach', prompt: 'add people on the terrace', imageUrls: [image.resolved_url], referenceUrls: [ref] } });
    expect(attach.status).toBe(200);
    expect(attach.body).toMatchObject({ success: true, method: 'rule-based' });
    expect(attach.body.enhancedPrompt).toMatch(/^Add people on the terrace\. Use reference 1 for the look: .*warm golden tones/);
    const sync = await request(h.baseUrl, '/api/ai-enhance-prompt/vision', { token: user.token, json: { mode: 'style_sync', prompt: '', imageUrls: [image.source_url], referenceUrls: [ref] } });
    expect(sync.body.enhancedPrompt).toMatch(/^Match the reference image's look: /);
    const foreign = await request(h.baseUrl, '/api/ai-enhance-prompt/vision', { token: user.token, json: { mode: 'attach', prompt: 'x', imageUrls: ['https://example.com/a.png'], referenceUrls: [] } });
    expect(foreign.status).toBe(400);
    const badMode = await request(h.baseUrl, '/api/ai-enhance-prompt/vision', { token: user.token, json: { mode: 'paint', prompt: 'x' } });
    expect(badMode.status).toBe(400);
  });
});
