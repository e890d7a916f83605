import { randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { createTestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { apiFileLink, fileRefOfLink } from '../support/objectStorage';
import { MSG } from '../../domain/messages';
import { approvalStatusQuery } from '../../workflows';
import { buyCredits, creditState, decide, generateImage, seedPendingImage, startHarness, userWithRender, type Harness } from '../imageEdit/harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('approvals');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function list(token: string): Promise<Array<Record<string, any>>> {
  const res = await request(h.baseUrl, '/api/approvals/list', { token });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function stats(token: string): Promise<Record<string, number>> {
  const res = await request(h.baseUrl, '/api/approvals/stats', { token });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function ledger(userId: string): Promise<Array<{ transaction_type: string; amount: number }>> {
  return h.knex('credit_transactions').where({ workspace_id: userId }).orderBy('created_at').select('transaction_type', 'amount');
}

async function workflowResult(approvalId: string): Promise<string> {
  return h.client.workflow.getHandle(`approval-${approvalId}`).result();
}

describe('approval queue, end to end (API, dev server, workers, PostgreSQL)', () => {
  it('takes a generated image from the queue into the library on approval, charging its 1 credit', async () => {
    const { user, projectId, renderId } = await userWithRender(h.baseUrl);
    const generated = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId, prompt: 'night scene with warm windows' });
    expect(generated.status).toBe(200);
    const approvalId: string = generated.body.result.savedImage.approvalId;

    const queue = await list(user.token);
    expect(queue).toHaveLength(1);
    expect(queue[0]).toMatchObject({
      id: approvalId,
      project_id: projectId,
      project_name: 'Harbour View',
      content_type: 'image',
      status: 'pending',
      aspect_ratio: '1:1',
      remaining_cost: 1,
      file_name: 'harbour-render — night scene with warm windows.jpg',
      prompt: 'night scene with warm windows',
    });
    const deadline = Date.parse(queue[0].approval_deadline);
    expect(deadline - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(deadline - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    // pay on approval: the queue links the watermarked preview only, and no link to the original is served
    expect(queue[0].original_file_url).toBeNull();
    const watermarked = await fetch(new URL(queue[0].watermarked_file_url, h.baseUrl));
    expect(watermarked.status).toBe(200);
    const pendingRow = await h.knex('pending_approvals').where({ id: approvalId }).first();
    const original = await fetch(new URL(apiFileLink(h.config, pendingRow.original_bucket, pendingRow.original_path), h.baseUrl));
    expect(original.status).toBe(403);
    const originalBytes = await buffer(await h.storage.objects.read(pendingRow.original_bucket, pendingRow.original_path));
    expect(await stats(user.token)).toEqual({ pending_count: 1, limit: 5, total_pending_cost: 1, in_progress_count: 0, in_progress_cost: 0 });

    // the API's short listing cache holds the library from before the approval
    const before = await request(h.baseUrl, `/api/projects/${projectId}/content`, { token: user.token });
    expect(before.body.content.map((c: { type: string }) => c.type)).toEqual(['render']);

    const approved = await decide(h, user, 'approve', approvalId);

    expect(approved.status).toBe(200);
    // ...and the approval drops it: the next plain read already shows the saved image
    const after = await request(h.baseUrl, `/api/projects/${projectId}/content`, { token: user.token });
    expect(after.body.content.map((c: { type: string }) => c.type).sort()).toEqual(['ai_image', 'render']);
    expect(approved.body).toEqual({ success: true, error: null, code: null, contentId: expect.any(String), warning: null });
    expect(await workflowResult(approvalId)).toBe('approved');
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 4, reserved: 0 });
    expect(await ledger(user.id)).toEqual([
      { transaction_type: 'signup_bonus', amount: 5 },
      { transaction_type: 'consume', amount: -1 },
    ]);
    expect(await list(user.token)).toEqual([]);
    expect(await stats(user.token)).toEqual({ pending_count: 0, limit: 4, total_pending_cost: 0, in_progress_count: 0, in_progress_cost: 0 });

    // the library shows the original (not the watermark) as an AI image of the project
    const library = await request(h.baseUrl, `/api/projects/${projectId}/content?refresh=1`, { token: user.token });
    const item = library.body.content.find((c: { data: { id: string } }) => c.data.id === approved.body.contentId);
    expect(item).toMatchObject({ type: 'ai_image', data: { original_prompt: 'night scene with warm windows', upscaled: true, format: 'square', aspect_ratio: '1:1' } });
    const saved = Buffer.from(await (await fetch(new URL(item.signed_url, h.baseUrl))).arrayBuffer());
    expect(saved.equals(originalBytes)).toBe(true);
    expect(fileRefOfLink(item.data.thumbnail_url as string)?.bucket).toBe('images');
    const row = await h.knex('pending_approvals').where({ id: approvalId }).first();
    expect(row).toMatchObject({ status: 'approved', remaining_cost: 0, content_id: approved.body.contentId });
    expect(await h.storage.objects.stat('images', row.watermarked_path)).toBeNull();
    expect(await h.storage.objects.stat('images', row.original_path)).not.toBeNull();
    expect((await sharp(saved).metadata()).width).toBe(960);
  });

  it("refuses a rejection without a past purchase (403, the spec's text), and the item stays pending and approvable", async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, user.id, projectId);

    const rejected = await decide(h, user, 'reject', item.approvalId);

    expect(rejected.status).toBe(403);
    expect(rejected.body).toEqual({ success: false, error: MSG.rejectionRequiresPurchase, code: 'REJECTION_REQUIRES_PURCHASE' });
    expect(await h.client.workflow.getHandle(item.workflowId).query(approvalStatusQuery)).toBe('pending');
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 1 });
    expect(await list(user.token)).toHaveLength(1);

    const approved = await decide(h, user, 'approve', item.approvalId);
    expect(approved.status).toBe(200);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 4, reserved: 0 });
  });

  it('rejects after a purchase: releases the credit, removes the files, and nothing reaches the library', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    await buyCredits(h.knex, user.id, 12);
    const item = await seedPendingImage(h, user.id, projectId);

    const rejected = await decide(h, user, 'reject', item.approvalId);

    expect(rejected.status).toBe(200);
    expect(rejected.body).toEqual({ success: true, error: null, code: null, contentId: null, warning: null });
    expect(await workflowResult(item.approvalId)).toBe('rejected');
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 17, reserved: 0 });
    expect((await ledger(user.id)).map((t) => t.transaction_type)).toEqual(['signup_bonus', 'purchase']);
    for (const path of Object.values(item.files)) expect(await h.storage.objects.stat('images', path)).toBeNull();
    expect(await list(user.token)).toEqual([]);
    expect(await h.knex('images').where({ project_id: projectId })).toEqual([]);
    // decided once: a second decision is a conflict
    const again = await decide(h, user, 'approve', item.approvalId);
    expect(again.status).toBe(409);
  });

  it('warns on the 4th rejection in a row, pauses generation on the 5th, and an approval lifts the pause', async () => {
    const { user, projectId, renderId } = await userWithRender(h.baseUrl);
    await buyCredits(h.knex, user.id, 30);
    // at most 5 pending at once: the 6th item (approved at the end) joins after four rejections; the first five are
    // independent of each other and seeded side by side
    const items = await Promise.all(Array.from({ length: 5 }, () => seedPendingImage(h, user.id, projectId)));
    const answers = [];
    for (const item of items.slice(0, 4)) answers.push((await decide(h, user, 'reject', item.approvalId)).body);
    items.push(await seedPendingImage(h, user.id, projectId));
    answers.push((await decide(h, user, 'reject', items[4].approvalId)).body);

    expect(answers.slice(0, 3).map((a) => [a.code, a.warning])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    expect(answers[3]).toMatchObject({ success: true, code: 'REJECTION_STREAK_WARNING', warning: MSG.rejectionStreakWarning });
    expect(answers[4]).toMatchObject({ success: true, code: 'REJECTION_STREAK_COOLDOWN', warning: MSG.rejectionStreakCooldown });
    const paused = await generateImage(h.baseUrl, user, { baseImage: renderId });
    expect(paused.status).toBe(429);
    expect(paused.body).toMatchObject({ error: MSG.rejectionStreakCooldown, code: 'REJECTION_STREAK_COOLDOWN' });

    expect((await decide(h, user, 'approve', items[5].approvalId)).status).toBe(200);
    const profile = await h.knex('profiles').where({ id: user.id }).first('rejection_streak', 'rejection_cooldown_until');
    expect(profile).toEqual({ rejection_streak: 0, rejection_cooldown_until: null });
    const resumed = await generateImage(h.baseUrl, user, { baseImage: renderId });
    expect(resumed.status).toBe(200);
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 34, reserved: 1 });
  });

  it('charges once when two approvals of one item arrive together', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, user.id, projectId);

    const answers = await Promise.all([decide(h, user, 'approve', item.approvalId), decide(h, user, 'approve', item.approvalId)]);

    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.find((a) => a.status === 200)!;
    expect(answers.find((a) => a.status === 409)!.body).toMatchObject({ success: false, code: 'APPROVAL_NOT_PENDING' });
    expect(await creditState(h.knex, user.id)).toEqual({ credits: 4, reserved: 0 });
    expect((await ledger(user.id)).filter((t) => t.transaction_type === 'consume')).toHaveLength(1);
    expect(await h.knex('images').where({ project_id: projectId }).select('id')).toEqual([{ id: winner.body.contentId }]);
  });

  it("keeps users apart: another user's item is not found, and another user's id is refused", async () => {
    const owner = await userWithRender(h.baseUrl);
    const item = await seedPendingImage(h, owner.user.id, owner.projectId);
    const other = await createTestUser(h.baseUrl);
    await buyCredits(h.knex, other.id);

    for (const decision of ['approve', 'reject'] as const) {
      const res = await decide(h, other, decision, item.approvalId);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'Approval not found', code: 'APPROVAL_NOT_FOUND' });
    }
    expect((await decide(h, other, 'approve', randomUUID())).status).toBe(404);
    expect((await decide(h, other, 'approve', 'not-an-id')).status).toBe(404);
    expect((await request(h.baseUrl, '/api/approvals/approve', { token: other.token, json: {} })).status).toBe(400);
    expect(await list(other.token)).toEqual([]);
    expect(await stats(other.token)).toEqual({ pending_count: 0, limit: 5, total_pending_cost: 0, in_progress_count: 0, in_progress_cost: 0 });
    expect((await request(h.baseUrl, `/api/approvals/list?userId=${owner.user.id}`, { token: other.token })).status).toBe(403);
    expect((await request(h.baseUrl, `/api/approvals/stats?userId=${owner.user.id}`, { token: other.token })).status).toBe(403);
    expect((await request(h.baseUrl, '/api/approvals/approve', { token: other.token, json: { approvalId: item.approvalId, userId: owner.user.id } })).status).toBe(403);
    expect((await request(h.baseUrl, `/api/approvals/list?userId=${owner.user.id}`, { token: owner.user.token })).body.data).toHaveLength(1);
    expect((await request(h.baseUrl, '/api/approvals/list')).status).toBe(401);

    expect(await h.client.workflow.getHandle(item.workflowId).query(approvalStatusQuery)).toBe('pending');
    expect(await creditState(h.knex, owner.user.id)).toEqual({ credits: 5, reserved: 1 });
  });

  it('lists newest first and leaves out items past their deadline; stats count what the list shows', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const first = await seedPendingImage(h, user.id, projectId);
    const second = await seedPendingImage(h, user.id, projectId);
    const third = await seedPendingImage(h, user.id, projectId);
    await h.knex('pending_approvals').where({ id: first.approvalId }).update({ approval_deadline: new Date(Date.now() - 1000) });

    expect((await list(user.token)).map((i) => i.id)).toEqual([third.approvalId, second.approvalId]);
    // 5 credits, 3 reserved (the expired item's until its workflow releases it): 2 available + 2 pending = limit 4
    expect(await stats(user.token)).toEqual({ pending_count: 2, limit: 4, total_pending_cost: 2, in_progress_count: 0, in_progress_cost: 0 });
  });
});
