import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { createTestUser } from '../support/accounts';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { MSG } from '../../domain/messages';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { approvalStatusQuery } from '../../workflows';
import { ImageEditService } from '../../services/generation/imageEdit';
import { ProjectService } from '../../services/content/projects';
import { creditState, generateImage, startHarness, userWithRender, type Harness } from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('image-edit');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function fetchImage(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(new URL(url, h.baseUrl));
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

async function pendingRows(userId: string): Promise<Array<Record<string, unknown>>> {
  return h.knex('pending_approvals').where({ workspace_id: userId }).select('*');
}

describe('POST /api/ai-image-simple', () => {
  it('turns a render into a pending approval: refined prompt, square hd edit upscaled x2, watermarked preview, 1 credit reserved and none charged', async () => {
    const { user, projectId, renderId } = await userWithRender(h.baseUrl, { width: 640, height: 480 });

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId, prompt: 'a snowy winter evening' });

    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.error).toBeNull();
    const { promptRefinement, generatedImage, upscaledImage, savedImage } = res.body.result;
    expect(promptRefinement).toEqual({
      originalPrompt: 'a snowy winter evening',
      refinedPrompt: expect.stringContaining('A snowy winter evening.'),
      refinementMethod: 'rule-based',
    });
    expect(promptRefinement.refinedPrompt).toContain('Fresh snow on roofs');
    // square framing at the source's cover size (480), then x2
    expect(generatedImage).toMatchObject({ width: 480, height: 480, model: 'local/sharp-grade' });
    expect(upscaledImage).toMatchObject({ width: 960, height: 960, scale: 2, model: 'local/lanczos3' });
    expect(savedImage).toMatchObject({ status: 'pending_approval', fractionalCostCharged: 0, fullCost: 1, aspectRatio: '1:1', approvalId: expect.any(String) });
    expect(res.body.metadata).toMatchObject({
      workflow: 'ENHANCED_IMAGE_EDITING',
      status: 'completed',
      projectId,
      baseImage: { type: 'render', id: renderId },
      format: 'square',
      quality: 'hd',
      upscaleScale: 2,
      platform: 'web',
      workflowId: `image-edit-${res.body.metadata.jobId}`,
      approvalWorkflowId: `approval-${savedImage.approvalId}`,
    });

    // the preview is a watermarked JPEG of at most 1024 px; the original is not handed out
    const preview = await fetchImage(savedImage.previewUrl);
    expect(preview.status).toBe(200);
    expect(preview.type).toBe('image/jpeg');
    expect(await sharp(preview.bytes).metadata()).toMatchObject({ width: 960, height: 960, format: 'jpeg' });
    expect(JSON.stringify(res.body)).not.toContain('original.');

    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
    const [row] = await pendingRows(user.id);
    expect(row).toMatchObject({ id: savedImage.approvalId, status: 'pending', content_type: 'image', cost: 1, remaining_cost: 1, project_id: projectId });
    const original = await h.storage.objects.stat('images', String(row.original_path));
    expect(original?.size).toBe(upscaledImage.fileSize);
    // the private original differs from the preview: the watermark is only on the preview
    const originalBytes = await h.storage.objects.localFile('images', String(row.original_path));
    const [a, b] = await Promise.all([
      sharp(originalBytes.path).resize(64, 64).raw().toBuffer(),
      sharp(preview.bytes).resize(64, 64).raw().toBuffer(),
    ]);
    const meanDiff = a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;
    expect(meanDiff).toBeGreaterThan(3);

    const edit = await h.knex('ai_image_edits').where({ workflow_id: res.body.metadata.workflowId }).first();
    expect(edit).toMatchObject({ workspace_id: user.id, project_id: projectId, status: 'completed', edit_prompt: 'a snowy winter evening' });
    expect(edit.edited_image_url).toBe(`/api/files/images/${row.original_path}`);

    // the approval child outlives the finished image edit workflow and waits for a decision
    const approval = h.client.workflow.getHandle(`approval-${savedImage.approvalId}`);
    expect(await approval.query(approvalStatusQuery)).toBe('pending');
    expect((await approval.describe()).status.name).toBe('RUNNING');
    expect((await h.client.workflow.getHandle(imageEditWorkflowId(res.body.metadata.jobId)).describe()).status.name).toBe('COMPLETED');

    const status = await request(h.baseUrl, `/api/ai-image-simple/status/${res.body.metadata.jobId}`, { token: user.token });
    expect(status.body.job).toMatchObject({ status: 'completed', progress: 100, message: 'Your image was sent for approval.', error: null });
    const other = await createTestUser(h.baseUrl);
    expect((await request(h.baseUrl, `/api/ai-image-simple/status/${res.body.metadata.jobId}`, { token: other.token })).status).toBe(404);
  });

  it('accepts the render by its file URL and keeps the source framing for format original', async () => {
    const { user, renderUrl } = await userWithRender(h.baseUrl, { width: 800, height: 450 });

    const res = await generateImage(h.baseUrl, user, { baseImage: renderUrl, prompt: 'warm golden light', parameters: { format: 'original', upscaleScale: 1, quality: 'standard' } });

    expect(res.status).toBe(200);
    expect(res.body.result.generatedImage).toMatchObject({ width: 768, height: 432 });
    expect(res.body.result.upscaledImage).toMatchObject({ width: 768, height: 432, scale: 1 });
    expect(res.body.result.savedImage.aspectRatio).toBe('16:9');
  });

  it("answers 401 with the spec's text without a session, before anything is read", async () => {
    const res = await generateImage(h.baseUrl, null, { baseImage: randomUUID() });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, error: MSG.loginToGenerate });
  });

  it.each([
    ['a blank prompt', { prompt: '   ' }, MSG.promptRequired],
    ['no prompt', { prompt: undefined }, MSG.promptRequired],
    ['an unknown format', { format: 'panorama' }, 'format must be one of square, landscape, portrait, original'],
    ['an upscale factor of 8', { upscaleScale: 8 }, 'upscaleScale must be a whole number from 1 to 4'],
    ['a foreign URL as base image', { baseImage: 'https://example.com/house.png' }, 'baseImage must be a render or AI image of your project (its id or file URL)'],
  ])('refuses %s with 400, reserving nothing', async (_label, override: Record<string, unknown>, message) => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const res = await request(h.baseUrl, '/api/ai-image-simple', {
      token: user.token,
      // JSON leaves out keys whose value is undefined
      json: { workflow: 'ENHANCED_IMAGE_EDITING', context: { userId: user.id }, parameters: { prompt: 'dusk', baseImage: renderId, ...override } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: message });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 0 });
    expect(await pendingRows(user.id)).toEqual([]);
  });

  it("answers 404 for another user's render (by id or by file URL) and 403 for another user's id", async () => {
    const owner = await userWithRender(h.baseUrl);
    const { user, projectId } = await userWithRender(h.baseUrl);

    expect((await generateImage(h.baseUrl, user, { baseImage: owner.renderId })).status).toBe(404);
    expect((await generateImage(h.baseUrl, user, { baseImage: owner.renderUrl })).status).toBe(404);
    expect((await generateImage(h.baseUrl, user, { baseImage: owner.renderId, projectId: owner.projectId })).status).toBe(404);
    expect((await generateImage(h.baseUrl, owner.user, { baseImage: owner.renderId, projectId })).status).toBe(404);
    const asOther = await generateImage(h.baseUrl, user, { baseImage: owner.renderId, userId: owner.user.id });
    expect(asOther.status).toBe(403);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 0 });
    expect(await creditState(h.knex, owner.user.id)).toEqual({ credits: 5, reserved: 0 });
  });

  it("maps no available credits to the spec's text and leaves nothing reserved", async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    await h.knex('profiles').where({ id: user.id }).update({ reserved_credits: 5 });

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: MSG.insufficientCreditsImage, code: 'INSUFFICIENT_CREDITS' });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 5 });
    expect(await h.knex('credit_reservations').where({ workspace_id: user.id })).toEqual([]);
  });

  it('refuses at the pending-approval cap with the spec text', async () => {
    const { user, renderId, projectId } = await userWithRender(h.baseUrl);
    // five free items (assemblies cost 0) fill the cap of 5 without weighing on the credits
    for (let i = 0; i < 5; i += 1) await insertPendingApproval(h.knex, { userId: user.id, projectId, contentType: 'assembly' });

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'You have reached the maximum of 5 pending approvals...', code: 'PENDING_LIMIT_REACHED' });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 0 });
  });

  it('refuses during a rejection cooldown with REJECTION_STREAK_COOLDOWN', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    await h.knex('profiles').where({ id: user.id }).update({ rejection_cooldown_until: new Date(Date.now() + 3_600_000) });

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, error: MSG.rejectionStreakCooldown, code: 'REJECTION_STREAK_COOLDOWN' });
  });

  it('releases the reservation and removes the files when generation fails (the render file is unreadable)', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const render = await h.knex('renders').where({ id: renderId }).first('storage_path');
    await h.storage.objects.remove('renders', [render.storage_path]);

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId });

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'INVALID_BASE_IMAGE' });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 0 });
    const [reservation] = await h.knex('credit_reservations').where({ workspace_id: user.id });
    expect(reservation).toMatchObject({ status: 'released', idempotency_key: expect.stringMatching(/^image-edit-/) });
    expect(await pendingRows(user.id)).toEqual([]);
    const edit = await h.knex('ai_image_edits').where({ workspace_id: user.id }).first();
    expect(edit).toMatchObject({ status: 'failed', error: res.body.error });
    const approvalId = edit.edit_data.approvalId as string;
    expect(await h.storage.objects.stat('images', `pending/${approvalId}/generated.jpg`)).toBeNull();
  });

  it('answers 202 with the job id when the run outlasts the wait, and the status call follows it to the end', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const service = new ImageEditService({
      knex: h.knex,
      storage: h.storage,
      projects: new ProjectService({ storage: h.storage }),
      temporal: async () => h.client,
      queues: h.queues,
      waitMs: 1,
    });
    const request = { projectId: null, userIntent: null, platform: 'web', prompt: 'bright', baseImage: renderId, imageDescription: null, validateRefinement: true, format: 'square', quality: 'hd', upscaleScale: 2 } as const;

    const answer = await service.run(user.id, request);

    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ success: true, error: null, result: null, metadata: { status: 'processing', jobId: expect.any(String) } });
    const jobId = answer.body.metadata.jobId;
    let state = await service.state(user.id, jobId);
    for (let i = 0; i < 100 && state.status !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await service.state(user.id, jobId);
    }
    expect(state).toMatchObject({ status: 'completed', progress: 100, result: { savedImage: { status: 'pending_approval' } } });
    await expect(service.state(randomUUID(), jobId)).rejects.toMatchObject({ status: 404 });
    await expect(service.state(user.id, randomUUID())).rejects.toMatchObject({ status: 404 });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
  });

  it("answers the status from the job's row, never asking the run: the same answer while Temporal cannot be reached", async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const deps = { knex: h.knex, storage: h.storage, projects: new ProjectService({ storage: h.storage }), queues: h.queues, waitMs: 1 };
    const service = new ImageEditService({ ...deps, temporal: async () => h.client });
    // the status call of an API whose Temporal client cannot connect (a query would need it, and a worker)
    const offline = new ImageEditService({
      ...deps,
      temporal: async () => {
        throw new Error('Temporal is not reachable');
      },
    });
    const request = { projectId: null, userIntent: null, platform: 'web', prompt: 'bright', baseImage: renderId, imageDescription: null, validateRefinement: true, format: 'square', quality: 'hd', upscaleScale: 2 } as const;

    const answer = await service.run(user.id, request);
    expect(answer.status).toBe(202);
    const jobId = answer.body.metadata.jobId;
    // written when the run started, so it answers at once
    const first = await offline.state(user.id, jobId);
    expect(first).toMatchObject({ jobId, workflowId: imageEditWorkflowId(jobId), error: null, errorCode: null, result: null });
    expect(['pending', 'processing']).toContain(first.status);
    const seen = new Set<string>([`${first.status} ${first.progress} ${first.message}`]);
    let state = first;
    for (let i = 0; i < 200 && state.status !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      state = await offline.state(user.id, jobId);
      seen.add(`${state.status} ${state.progress} ${state.message}`);
    }
    // the run's own answer, as its workflow returned it
    const result = await h.client.workflow.getHandle(imageEditWorkflowId(jobId)).result();
    expect(state).toEqual({ jobId, workflowId: imageEditWorkflowId(jobId), status: 'completed', progress: 100, message: 'Your image was sent for approval.', error: null, errorCode: null, result });
    // the steps went by on the row: every state read was one the run wrote
    for (const s of seen) expect(s).toMatch(/^(pending 0 Queued|processing \d+ \S.*|completed 100 Your image was sent for approval\.)$/);
    await expect(offline.state(randomUUID(), jobId)).rejects.toMatchObject({ status: 404 });

    // a refusal of the run (no credits left) reads from the row too, with its code
    await h.knex('profiles').where({ id: user.id }).update({ reserved_credits: 5 });
    const refused = await service.run(user.id, request);
    const refusedId = refused.body.metadata.jobId;
    let failed = await offline.state(user.id, refusedId);
    for (let i = 0; i < 200 && failed.status !== 'failed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      failed = await offline.state(user.id, refusedId);
    }
    expect(failed).toMatchObject({ status: 'failed', error: MSG.insufficientCreditsImage, message: MSG.insufficientCreditsImage, errorCode: 'INSUFFICIENT_CREDITS', result: null });
  });

  it('answers a running edit that no worker can answer for as queued, not as a 500', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    // its workflow task queue has no worker: the run stays open and its state query cannot be answered
    const service = new ImageEditService({
      knex: h.knex,
      storage: h.storage,
      projects: new ProjectService({ storage: h.storage }),
      temporal: async () => h.client,
      queues: { ...h.queues, generation: `unpolled-${randomUUID()}` },
      waitMs: 1,
      queryTimeoutMs: 300,
    });
    const answer = await service.run(user.id, { projectId: null, userIntent: null, platform: 'web', prompt: 'bright', baseImage: renderId, imageDescription: null, validateRefinement: true, format: 'square', quality: 'hd', upscaleScale: 2 });
    expect(answer.status).toBe(202);
    const jobId = answer.body.metadata.jobId;
    try {
      expect(await service.state(user.id, jobId)).toEqual({ jobId, workflowId: imageEditWorkflowId(jobId), status: 'pending', progress: 0, message: 'Queued', error: null, errorCode: null, result: null });
      await expect(service.state(randomUUID(), jobId)).rejects.toMatchObject({ status: 404 });
    } finally {
      await h.client.workflow.getHandle(imageEditWorkflowId(jobId)).terminate('test over');
    }
  });
});
