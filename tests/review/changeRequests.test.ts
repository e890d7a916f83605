/**
 * "Request changes" (issue 42, acceptance 2): the specs' rejection of a pending item (a past purchase, the streak,
 * the released reservation) plus a new job from the same source with the request folded in, whose item is the next
 * version of the rejected one and takes its threads; a refusal of the rules leaves everything as it was. Real API,
 * PostgreSQL, Temporal workers and media work (the AI providers are the local ones).
 */
import { randomUUID } from 'node:crypto';
import { REQUESTED_CHANGE_LABEL, promptWithRequest } from '../../domain/changeRequests';
import { checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request, type JsonResponse } from '../support/http';
import { buyCredits, renderBytes, startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, inTeam, seedTeamImage, teamProject, type Team } from '../workspaces/creditsFixtures';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let team: Team;
let projectId: string;
let render: { id: string; fileUrl: string };

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not there after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  h = await startHarness('change-requests', { config: { videoPreset: 'ultrafast' } });
  [owner, member, viewer, outsider] = await Promise.all(['Olivia Owner', 'Mia Member', 'Vic Viewer', 'Otto Outsider'].map((name) => createTestUser(h.baseUrl, { name })));
  team = await createTeam(h.knex, owner, [
    [member, 'member'],
    [viewer, 'viewer'],
  ], 40);
  // rejecting needs a past purchase (the specs' rule)
  await buyCredits(h.knex, team.id, 1);
  projectId = await teamProject(h.knex, team.id);
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await renderBytes(640, 360))], { type: 'image/png' }), 'harbour-render.png');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(h.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: owner.token, headers: inTeam(team.id) });
  expect(upload.status).toBe(200);
  render = { id: upload.body.render.data.id, fileUrl: upload.body.render.data.file_url };
}, 120_000);

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

function requestChanges(user: TestUser, body: Record<string, unknown>, workspaceId = team.id): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/approvals/request-changes', { token: user.token, headers: inTeam(workspaceId), json: body });
}

async function generateImage(prompt: string): Promise<string> {
  const res = await request(h.baseUrl, '/api/ai-image-simple', {
    token: member.token,
    headers: inTeam(team.id),
    json: { workflow: 'ENHANCED_IMAGE_EDITING', context: { projectId, userIntent: 'listing', platform: 'web' }, parameters: { prompt, baseImage: render.id } },
  });
  expect(res.status).toBe(200);
  return res.body.result.savedImage.approvalId as string;
}

interface PendingRow {
  id: string;
  file_name: string;
  status: string;
  version: number;
  previous_approval_id: string | null;
  reservation_id: string | null;
  decided_by: string | null;
  source_job_id: string | null;
  metadata: Record<string, unknown>;
}

function nextVersionOf(approvalId: string): Promise<PendingRow> {
  return until(`the version after ${approvalId}`, async () => (await h.knex('pending_approvals').where({ previous_approval_id: approvalId }).first()) as PendingRow | undefined);
}

async function reservationStatus(id: string | null): Promise<string | null> {
  if (!id) return null;
  const row = (await h.knex('credit_reservations').where({ id }).first('status')) as { status: string } | undefined;
  return row?.status ?? null;
}

async function threads(user: TestUser, itemId: string): Promise<Array<Record<string, any>>> {
  const res = await request(h.baseUrl, `/api/content/${itemId}/comments`, { token: user.token, headers: inTeam(team.id) });
  expect(res.status).toBe(200);
  return res.body.threads;
}

async function snapshot(approvalId: string): Promise<Record<string, unknown>> {
  const item = await h.knex('pending_approvals').where({ id: approvalId }).first('status', 'remaining_cost', 'decided_at');
  const profile = await h.knex('profiles').where({ id: team.id }).first('credits', 'reserved_credits', 'rejection_streak', 'rejection_cooldown_until');
  const [{ n: requests }] = await h.knex('change_requests').where({ approval_id: approvalId }).count({ n: '*' });
  const [{ n: threadCount }] = await h.knex('comment_threads').where({ item_id: approvalId }).count({ n: '*' });
  const [{ n: edits }] = await h.knex('ai_image_edits').where({ workspace_id: team.id }).count({ n: '*' });
  const [{ n: clips }] = await h.knex('video_generation_jobs').where({ workspace_id: team.id }).count({ n: '*' });
  return { item, profile, requests: Number(requests), threads: Number(threadCount), edits: Number(edits), clips: Number(clips) };
}

describe('request changes on an image', () => {
  it('rejects it under the rules, starts the next version from the same source with the request in its prompt, and carries the thread over (v2, then v3)', async () => {
    const v1 = await generateImage('make it a snowy evening');
    const earlier = await request(h.baseUrl, `/api/content/${v1}/comments`, { token: viewer.token, headers: inTeam(team.id), json: { body: 'The roof looks odd here', pin: { x: 0.3, y: 0.2 } } });
    expect(earlier.status).toBe(201);
    const v1Row = (await h.knex('pending_approvals').where({ id: v1 }).first()) as PendingRow;
    expect(v1Row.version).toBe(1);
    expect(await reservationStatus(v1Row.reservation_id)).toBe('active');

    const res = await requestChanges(member, { approvalId: v1, request: 'Add warm light in the windows', pin: { x: 0.5, y: 0.4, w: 0.2, h: 0.1 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: null, warning: null, next: { kind: 'image', version: 2, job_id: expect.any(String) }, next_error: null });

    // the specs' rejection: decided by the member, the reservation released, the streak counted
    const rejected = (await h.knex('pending_approvals').where({ id: v1 }).first()) as PendingRow;
    expect(rejected).toMatchObject({ status: 'rejected', decided_by: member.id });
    expect(await reservationStatus(v1Row.reservation_id)).toBe('released');
    expect((await h.knex('profiles').where({ id: team.id }).first('rejection_streak')).rejection_streak).toBe(1);

    // the next version: same source, the request folded into the prompt, its own reservation, v2 after v1
    const v2 = await nextVersionOf(v1);
    expect(v2).toMatchObject({ status: 'pending', version: 2, previous_approval_id: v1, source_job_id: res.body.next.job_id });
    // named after the version it replaces
    expect(v2.file_name).toBe(`${v1Row.file_name.replace(/\.\w+$/, '')} (v2)${/\.\w+$/.exec(v2.file_name)?.[0]}`);
    expect(v2.metadata.originalPrompt).toBe(promptWithRequest('make it a snowy evening', 'Add warm light in the windows'));
    expect(v2.metadata.originalPrompt).toBe(`make it a snowy evening\n${REQUESTED_CHANGE_LABEL} Add warm light in the windows`);
    expect(v2.metadata.baseImageUrl).toBe(v1Row.metadata.baseImageUrl);
    expect(await reservationStatus(v2.reservation_id)).toBe('active');
    const edit = await h.knex('ai_image_edits').whereRaw("edit_data->>'jobId' = ?", [res.body.next.job_id]).first('created_by', 'edit_prompt');
    expect(edit).toMatchObject({ created_by: member.id, edit_prompt: v2.metadata.originalPrompt });

    // v1 keeps its watermarked preview only (its original is gone): v2 is compared with it first, then with the render
    const v1Files = (await h.knex('pending_approvals').where({ id: v1 }).first('original_bucket', 'original_path', 'watermarked_bucket', 'watermarked_path')) as Record<string, string>;
    expect(await h.storage.objects.stat(v1Files.original_bucket as never, v1Files.original_path)).toBeNull();
    expect(await h.storage.objects.stat(v1Files.watermarked_bucket as never, v1Files.watermarked_path)).not.toBeNull();
    const compare = await request(h.baseUrl, `/api/content/${v2.id}/compare`, { token: viewer.token, headers: inTeam(team.id) });
    expect(compare.status).toBe(200);
    expect(compare.body.versions.map((v: { kind: string; id: string; relation: string; depth: number }) => [v.kind, v.id, v.relation, v.depth])).toEqual([
      ['approval', v1, 'earlier', 1],
      ['render', render.id, 'source', 2],
    ]);
    expect(compare.body.versions[0].name).toMatch(/^v1 · /);
    const preview = await fetch(new URL(compare.body.versions[0].url, h.baseUrl), { headers: { authorization: `Bearer ${viewer.token}` } });
    expect(preview.status).toBe(200);

    // the conversation goes with the versions: v1's threads (the earlier comment, the request) are v2's now
    expect(await threads(member, v1)).toEqual([]);
    const carried = await threads(member, v2.id);
    expect(carried).toHaveLength(2);
    expect(carried[0]).toMatchObject({ onVersion: 1, changeRequest: false, pin: { x: 0.3, y: 0.2 }, comments: [{ body: 'The roof looks odd here' }] });
    expect(carried[1]).toMatchObject({ onVersion: 1, changeRequest: true, pin: { x: 0.5, y: 0.4, w: 0.2, h: 0.1 }, comments: [{ body: 'Add warm light in the windows', author: { userId: member.id } }] });

    // the queue shows it as v2
    const listed = await request(h.baseUrl, '/api/approvals/list', { token: viewer.token, headers: inTeam(team.id) });
    expect(listed.body.data.find((item: { id: string }) => item.id === v2.id)).toMatchObject({ version: 2, previous_approval_id: v1, clip_settings: null });

    // and again: v3 follows v2, with both requests in its prompt and every thread
    const again = await requestChanges(owner, { approvalId: v2.id, request: 'Less snow on the path' });
    expect(again.status).toBe(200);
    expect(again.body.next).toMatchObject({ kind: 'image', version: 3 });
    const v3 = await nextVersionOf(v2.id);
    expect(v3).toMatchObject({ version: 3, previous_approval_id: v2.id });
    expect(v3.file_name).toBe(v2.file_name.replace(' (v2)', ' (v3)'));
    expect(v3.metadata.originalPrompt).toBe(promptWithRequest(v2.metadata.originalPrompt as string, 'Less snow on the path'));
    const compared = await request(h.baseUrl, `/api/content/${v3.id}/compare`, { token: owner.token, headers: inTeam(team.id) });
    expect(compared.body.versions.map((v: { id: string; depth: number }) => [v.id, v.depth])).toEqual([
      [v2.id, 1],
      [v1, 2],
      [render.id, 3],
    ]);
    const all = await threads(owner, v3.id);
    expect(all.map((t) => [t.onVersion, t.comments[0].body])).toEqual([
      [1, 'The roof looks odd here'],
      [1, 'Add warm light in the windows'],
      [2, 'Less snow on the path'],
    ]);
    expect((await h.knex('profiles').where({ id: team.id }).first('rejection_streak')).rejection_streak).toBe(2);

    // who did what: the requests are in the item's history
    const history = await request(h.baseUrl, `/api/content/${v3.id}/history`, { token: viewer.token, headers: inTeam(team.id) });
    expect(history.status).toBe(200);
    const requested = history.body.history.filter((e: { kind: string }) => e.kind === 'changes_requested');
    expect(requested.map((e: { by: { user_id: string }; text: string; version: number }) => [e.by.user_id, e.text, e.version])).toEqual([
      [member.id, 'Add warm light in the windows', 1],
      [owner.id, 'Less snow on the path', 2],
    ]);
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  }, 240_000);

  it('two requests at the same moment: one rejection, one new job, one request kept; the other is told the item is no longer pending', async () => {
    const v1 = await generateImage('a summer afternoon');
    const before = await snapshot(v1);
    const answers = await Promise.all([
      requestChanges(member, { approvalId: v1, request: 'Brighter sky' }),
      requestChanges(owner, { approvalId: v1, request: 'Greener lawn' }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const after = await snapshot(v1);
    expect(after.requests).toBe(1);
    expect(after.threads).toBe(1);
    expect(after.edits).toBe((before.edits as number) + 1);
    const v2 = await nextVersionOf(v1);
    expect(v2.version).toBe(2);
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  }, 240_000);
});

describe('request changes on a clip', () => {
  it('keeps the effect and settings (or takes the changed ones), gives the request as guidance, and makes v2', async () => {
    const start = await request(h.baseUrl, '/api/video-generation/start', {
      token: member.token,
      headers: inTeam(team.id),
      json: {
        options: { imageUrl: render.fileUrl, movement: 'Drone Shot', originalPrompt: 'A calm morning at the harbour', duration: 5, platform: 'YouTube' },
        context: { projectId, renderId: render.id, isTemporaryImage: false },
      },
    });
    expect(start.status).toBe(200);
    const clipV1 = await until('the clip v1', async () => (await h.knex('pending_approvals').where({ source_job_id: start.body.jobId }).first()) as PendingRow | undefined, 180_000);
    const listed = await request(h.baseUrl, '/api/approvals/list', { token: member.token, headers: inTeam(team.id) });
    expect(listed.body.data.find((item: { id: string }) => item.id === clipV1.id)).toMatchObject({ content_type: 'clip', clip_settings: { effect: 'Drone Shot', platform: 'YouTube' } });

    // a bad setting is refused before anything is decided
    const bad = await requestChanges(member, { approvalId: clipV1.id, request: 'Slower', settings: { effect: 'Moonwalk' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('CHANGES_SETTINGS_INVALID');
    expect((await h.knex('pending_approvals').where({ id: clipV1.id }).first('status')).status).toBe('pending');

    // the moment between the item and the end of the clip's workflow (its row reads processing until the workflow
    // records the end), held: the clip that made the item is not the member's clip in progress for the next version
    await until('the clip v1 recorded as ended', async () => (await h.knex('video_generation_jobs').where({ id: start.body.jobId, status: 'completed' }).first('id')) as { id: string } | undefined);
    await h.knex('video_generation_jobs').where({ id: start.body.jobId }).update({ status: 'processing' });
    const res = await requestChanges(member, { approvalId: clipV1.id, request: 'Fly in from the water side', pin: { t: 2.5 }, settings: { platform: 'Instagram' } });
    expect(res.status).toBe(200);
    expect(res.body.next).toMatchObject({ kind: 'clip', version: 2 });
    const job = (await h.knex('video_generation_jobs').where({ id: res.body.next.job_id }).first('options', 'render_id', 'created_by')) as { options: Record<string, unknown>; render_id: string; created_by: string };
    expect(job).toMatchObject({ render_id: render.id, created_by: member.id });
    expect(job.options).toMatchObject({ effect: 'Drone Shot', platform: 'Instagram', aspectRatio: '9:16', durationSeconds: 5, prompt: `A calm morning at the harbour\n${REQUESTED_CHANGE_LABEL} Fly in from the water side` });
    const clipV2 = await nextVersionOf(clipV1.id);
    expect(clipV2).toMatchObject({ version: 2, status: 'pending' });
    await h.knex('video_generation_jobs').where({ id: start.body.jobId }).update({ status: 'completed' });
    expect(clipV2.file_name).toMatch(/ - Drone Shot \(9x16\) \(v2\)\.mp4$/);
    expect(clipV2.metadata).toMatchObject({ kind: 'clip', effect: 'Drone Shot', platform: 'Instagram', aspectRatio: '9:16' });
    const carried = await threads(viewer, clipV2.id);
    expect(carried).toMatchObject([{ onVersion: 1, changeRequest: true, pin: { t: 2.5 } }]);
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  }, 300_000);
});

describe('refusals: nothing starts and nothing changes', () => {
  let item: string;

  beforeAll(async () => {
    item = (await seedTeamImage(h, team.id, projectId, member)).approvalId;
  });

  it('bad input, unknown items, a viewer, a non-member', async () => {
    const before = await snapshot(item);
    const cases: Array<[TestUser, Record<string, unknown>, number, string | RegExp]> = [
      [member, { approvalId: item, request: '   ' }, 400, 'Say what should change'],
      [member, { approvalId: item }, 400, 'Say what should change'],
      [member, { approvalId: item, request: 'x'.repeat(5001) }, 400, 'A request can be at most 5,000 characters'],
      [member, { approvalId: item, request: 'ok', pin: { x: 2, y: 0.5 } }, 400, /A pin is a point/],
      [member, { approvalId: item, request: 'ok', pin: { t: 3 } }, 400, 'Only clips and videos have a time to pin a comment to'],
      [member, { approvalId: randomUUID(), request: 'ok' }, 404, 'Approval not found'],
      [member, { approvalId: 'not-an-id', request: 'ok' }, 404, 'Approval not found'],
      [member, { approvalId: item, request: 'ok', extra: 1 }, 400, /extra|Unrecognized/i],
      [viewer, { approvalId: item, request: 'ok' }, 403, /.+/],
    ];
    for (const [user, body, status, error] of cases) {
      const res = await requestChanges(user, body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body.error).toMatch(error);
    }
    const foreign = await requestChanges(outsider, { approvalId: item, request: 'ok' });
    expect([403, 404]).toContain(foreign.status);
    expect(await snapshot(item)).toEqual(before);
  });

  it('the prompt and the request together must fit an image edit', async () => {
    const before = await snapshot(item);
    const res = await requestChanges(member, { approvalId: item, request: 'y'.repeat(1990) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('CHANGES_PROMPT_TOO_LONG');
    expect(res.body.error).toMatch(/shorten the request to \d+ characters or fewer/);
    expect(await snapshot(item)).toEqual(before);
  });

  it('a source deleted since: no new version can be made, so the item is not rejected', async () => {
    // the seeded item names a render that does not exist
    const before = await snapshot(item);
    const res = await requestChanges(member, { approvalId: item, request: 'warmer' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('CHANGES_SOURCE_GONE');
    expect(await snapshot(item)).toEqual(before);
  });

  it("the specs' rules: no purchase yet, a cooldown, the rejection that would start one", async () => {
    const v1 = await generateImage('a foggy dawn');
    const profile = await h.knex('profiles').where({ id: team.id }).first('total_credits_purchased', 'rejection_streak', 'rejection_cooldown_until');
    try {
      await h.knex('profiles').where({ id: team.id }).update({ total_credits_purchased: 0 });
      let before = await snapshot(v1);
      const noPurchase = await requestChanges(member, { approvalId: v1, request: 'more fog' });
      expect(noPurchase.status).toBe(403);
      expect(noPurchase.body).toMatchObject({ code: 'REJECTION_REQUIRES_PURCHASE', error: 'Rejections are disabled until you purchase a credit package...' });
      expect(await snapshot(v1)).toEqual(before);
      await h.knex('profiles').where({ id: team.id }).update({ total_credits_purchased: profile.total_credits_purchased });

      await h.knex('profiles').where({ id: team.id }).update({ rejection_cooldown_until: new Date(Date.now() + 3_600_000) });
      before = await snapshot(v1);
      const paused = await requestChanges(member, { approvalId: v1, request: 'more fog' });
      expect(paused.status).toBe(429);
      expect(paused.body).toMatchObject({ code: 'REJECTION_STREAK_COOLDOWN', error: 'Generation temporarily paused due to repeated rejections. Approve at least one item or try again later.' });
      expect(await snapshot(v1)).toEqual(before);

      await h.knex('profiles').where({ id: team.id }).update({ rejection_cooldown_until: null, rejection_streak: 4 });
      before = await snapshot(v1);
      const wouldPause = await requestChanges(member, { approvalId: v1, request: 'more fog' });
      expect(wouldPause.status).toBe(409);
      expect(wouldPause.body.code).toBe('CHANGES_WOULD_PAUSE_GENERATION');
      expect(wouldPause.body.error).toMatch(/Save an item first, or reject this one/);
      expect(await snapshot(v1)).toEqual(before);
    } finally {
      // the earlier tests' rejections counted too: the streak starts again, as an approval would start it
      await h.knex('profiles').where({ id: team.id }).update({ total_credits_purchased: profile.total_credits_purchased, rejection_streak: 0, rejection_cooldown_until: null });
    }
    // the rules met again, the same request goes through
    const ok = await requestChanges(member, { approvalId: v1, request: 'more fog' });
    expect(ok.status).toBe(200);
    expect((await nextVersionOf(v1)).version).toBe(2);
  }, 240_000);
});
