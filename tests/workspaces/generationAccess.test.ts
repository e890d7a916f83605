/**
 * Generation in a team workspace (DESIGN.md "Teams (workspaces)"; issue 27, items 2, 4 and 8), end to end on the
 * run's PostgreSQL, storage and Temporal dev server with real workers:
 *
 * - a member's image edit and clip in the workspace's project belong to the workspace (rows' workspace_id, the
 *   workspace's credits reserved) and record the member who started them (created_by on the job rows and the
 *   pending item, the reservation's actorId), and their runs carry RsWorkspaceId (RsUserId: the member);
 * - the Activity list of the workspace shows every member the job with who started it, and the member's personal
 *   workspace does not list it;
 * - one clip at a time holds per member (member A's second is told the single-clip text, member B's runs beside
 *   it), and a workspace's cap on its clips in flight, when set, refuses B while A's runs;
 * - a viewer's starts, retries and cancels are 403 and a non-member's 404, and neither changes anything (no row, no
 *   reservation, no run);
 * - Enhance Renders: drafts are the workspace's; a viewer who entered the access code may read them, not change them.
 *
 * The clips' provider is a hosted one (tests/support/fakeFal.ts) whose video jobs run until cancelled, so a clip is
 * still running when the second member asks; images and draft models are the local ones.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { loadConfig } from '../../config/env';
import { ERROR_CODES, MSG } from '../../domain/messages';
import { WORKSPACE_HEADER } from '../../domain/workspaceRoles';
import type { ActivityJob, ActivityJobList } from '../../domain/jobs';
import { createProviders } from '../../providers';
import { addCredits } from '../../services/billing/credits';
import { RS_JOB_KIND, RS_USER_ID, RS_WORKSPACE_ID, jobSearchAttributes } from '../../domain/searchAttributes';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { request, type JsonResponse } from '../support/http';
import { renderBytes, startHarness, type Harness } from '../imageEdit/harness';
import { ACCESS_CODE, renderPng } from '../enhanceRenders/support';

const KEY = 'workspace-generation-key';
const SLOW_VIDEO = 'fake/video-until-cancelled';
const TEAM_CREDITS = 20;

type Role = 'owner' | 'member' | 'viewer';
type Person = 'owner' | 'memberA' | 'memberB' | 'viewer' | 'outsider';

let h: Harness;
let fal: FakeFal;
let workDir: string;
let knex: Knex;
const people = {} as Record<Person, TestUser>;
let workspaceId: string;
let projectId: string;
let renderId: string;
let renderUrl: string;

/** The team workspace as the workspaces service makes one: its row, its account (same id) funded through the ledger, its members. */
async function createTeamWorkspace(db: Knex, name: string, members: Array<{ user: TestUser; role: Role }>): Promise<string> {
  const owner = members.find((m) => m.role === 'owner')?.user as TestUser;
  const [row] = await db('workspaces').insert({ name, created_by: owner.id }).returning<{ id: string }[]>('id');
  await db('profiles').insert({ id: row.id, email: owner.email, name });
  await addCredits(db, { workspaceId: row.id, amount: TEAM_CREDITS, type: 'purchase', description: 'Team credits', idempotencyKey: `team:${row.id}` });
  await db('workspace_members').insert(members.map((m) => ({ workspace_id: row.id, user_id: m.user.id, role: m.role })));
  return row.id;
}

function inTeam(): Record<string, string> {
  return { [WORKSPACE_HEADER]: workspaceId };
}

function startClip(user: TestUser, headers: Record<string, string> = inTeam()): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/video-generation/start', {
    token: user.token,
    headers,
    json: {
      options: { imageUrl: renderUrl, movement: 'Zoom In', originalPrompt: 'A calm morning at the harbour', duration: 5, platform: 'YouTube' },
      context: { projectId, userId: user.id, renderId, isTemporaryImage: false },
    },
  });
}

function startPortrait(user: TestUser, headers: Record<string, string> = inTeam()): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/video-generation/portrait/start', {
    token: user.token,
    headers,
    json: { projectId, userId: user.id, renderId, cameraMovement: 'Pan Left', platform: 'TikTok' },
  });
}

function editImage(user: TestUser, headers: Record<string, string> = inTeam()): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/ai-image-simple', {
    token: user.token,
    headers,
    json: {
      workflow: 'ENHANCED_IMAGE_EDITING',
      context: { projectId, userId: user.id, userIntent: 'test', platform: 'web' },
      parameters: { prompt: 'a snowy evening over the harbour', baseImage: renderId },
    },
  });
}

async function activity(user: TestUser, headers: Record<string, string> = inTeam()): Promise<JsonResponse<ActivityJobList & { success: boolean }>> {
  return request(h.baseUrl, '/api/jobs', { token: user.token, headers });
}

function starterOf(user: TestUser): ActivityJob['startedBy'] {
  return { userId: user.id, name: user.name, email: user.email };
}

/** What a refused call must leave as it was: the workspace's jobs, items, drafts, reservations, ledger and balance. */
async function snapshot(): Promise<Record<string, unknown>> {
  const rows = (table: string, column = 'workspace_id') => knex(table).where({ [column]: workspaceId }).orderBy('id');
  return {
    // a running clip's progress and message move on by themselves: what a refused call could change is the rest
    clips: await rows('video_generation_jobs').select('id', 'workspace_id', 'created_by', 'project_id', 'render_id', 'options', 'workflow_id', 'created_at'),
    edits: await rows('ai_image_edits'),
    approvals: await rows('pending_approvals'),
    drafts: await rows('drafts'),
    draftJobs: await rows('draft_jobs'),
    reservations: await rows('credit_reservations', 'workspace_id'),
    ledger: await rows('credit_transactions', 'workspace_id'),
    account: await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits', 'rejection_streak'),
  };
}

/** Runs the given user started, by RsUserId (none may exist for a refused caller). */
async function runsStartedBy(userId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const run of h.client.workflow.list({ query: `${RS_USER_ID.name} = '${userId}'` })) ids.push(run.workflowId);
  return ids;
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  fal = await startFakeFal({ apiKey: KEY, models: { [SLOW_VIDEO]: { kind: 'video', behaviour: 'never-complete', queuedPolls: 1 } } });
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'workspace-generation-'));
  // local images and draft models; clips from the hosted fake, whose jobs run until cancelled
  const base = { ...loadConfig(), videoPreset: 'ultrafast' };
  const hosted = createProviders(
    { ...base, providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: SLOW_VIDEO },
    { workDir, videoPollIntervalMs: 100, expectedVideoRunMs: 60_000 },
  );
  h = await startHarness('workspace-generation', { config: { videoPreset: 'ultrafast' }, providers: { ...createProviders(base), imageToVideo: hosted.imageToVideo } });
  knex = h.knex;
  for (const [key, name] of [
    ['owner', 'Olive Owner'],
    ['memberA', 'Ada Member'],
    ['memberB', 'Ben Member'],
    ['viewer', 'Vera Viewer'],
    ['outsider', 'Otto Outsider'],
  ] as const) {
    people[key] = await createTestUser(h.baseUrl, { name });
  }
  workspaceId = await createTeamWorkspace(knex, 'Harbour Studio', [
    { user: people.owner, role: 'owner' },
    { user: people.memberA, role: 'member' },
    { user: people.memberB, role: 'member' },
    { user: people.viewer, role: 'viewer' },
  ]);
  const project = await request<{ project: { id: string } }>(h.baseUrl, '/api/projects', { token: people.owner.token, headers: inTeam(), json: { name: 'Harbour View' } });
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`);
  projectId = project.body.project.id;
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await renderBytes(640, 480))], { type: 'image/png' }), 'harbour-render.png');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(h.baseUrl, '/api/upload/renders', {
    method: 'POST',
    body: form,
    token: people.memberA.token,
    headers: inTeam(),
  });
  if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${JSON.stringify(upload.body)}`);
  ({ id: renderId, file_url: renderUrl } = upload.body.render.data);
});

afterAll(async () => {
  await h?.close();
  await fal?.close();
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  await closeTestKnex();
});

describe('generation in a team workspace', () => {
  it("a member's image edit is the workspace's: its credits, rows and run, with the member recorded as who started it", async () => {
    expect(await knex('projects').where({ id: projectId }).first('workspace_id')).toEqual({ workspace_id: workspaceId });
    const res = await editImage(people.memberA);
    expect(res.status).toBe(200);
    const { jobId, workflowId } = res.body.metadata as { jobId: string; workflowId: string };
    const approvalId = res.body.result.savedImage.approvalId as string;

    expect(await knex('ai_image_edits').where({ workflow_id: workflowId }).first('workspace_id', 'created_by', 'status')).toEqual({
      workspace_id: workspaceId,
      created_by: people.memberA.id,
      status: 'completed',
    });
    expect(await knex('pending_approvals').where({ id: approvalId }).first('workspace_id', 'created_by', 'status')).toEqual({
      workspace_id: workspaceId,
      created_by: people.memberA.id,
      status: 'pending',
    });
    const reservation = await knex('credit_reservations').where({ idempotency_key: workflowId }).first('workspace_id', 'status', 'amount', 'metadata');
    expect(reservation).toMatchObject({ workspace_id: workspaceId, status: 'active', amount: 1, metadata: { actorId: people.memberA.id } });
    // the workspace's credits hold it; the member's own account is untouched
    expect(await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits')).toEqual({ credits: TEAM_CREDITS, reserved_credits: 1 });
    expect(await knex('profiles').where({ id: people.memberA.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });

    // the run and its approval child say whose they are
    const run = await h.client.workflow.getHandle(workflowId).describe();
    expect(run.typedSearchAttributes.get(RS_WORKSPACE_ID)).toBe(workspaceId);
    expect(run.typedSearchAttributes.get(RS_USER_ID)).toBe(people.memberA.id);
    expect(run.typedSearchAttributes.get(RS_JOB_KIND)).toBe('image-edit');
    const approval = await h.client.workflow.getHandle(`approval-${approvalId}`).describe();
    expect(approval.typedSearchAttributes.get(RS_WORKSPACE_ID)).toBe(workspaceId);
    expect(approval.typedSearchAttributes.get(RS_USER_ID)).toBe(people.memberA.id);

    // another member reads its status in the workspace, and a member finds it without naming the workspace (the start
    // needed none either: the workspace came from the project); a non-member does not
    const status = await request(h.baseUrl, `/api/ai-image-simple/status/${jobId}`, { token: people.memberB.token, headers: inTeam() });
    expect(status.status).toBe(200);
    expect(status.body.job).toMatchObject({ jobId, status: 'completed' });
    expect((await request(h.baseUrl, `/api/ai-image-simple/status/${jobId}`, { token: people.memberA.token })).body.job).toMatchObject({ jobId, status: 'completed' });
    expect((await request(h.baseUrl, `/api/ai-image-simple/status/${jobId}`, { token: people.outsider.token })).status).toBe(404);

    // every member's Activity shows it with who started it (a viewer reads it too); the personal one does not
    for (const reader of [people.memberB, people.viewer, people.owner]) {
      const list = await activity(reader);
      expect(list.status).toBe(200);
      const job = list.body.jobs.find((j) => j.workflowId === workflowId);
      expect(job).toMatchObject({ kind: 'image-edit', id: jobId, userId: workspaceId, startedBy: starterOf(people.memberA) });
      expect(job).not.toHaveProperty('userEmail');
    }
    const personal = await activity(people.memberA, {});
    expect(personal.status).toBe(200);
    expect(personal.body.jobs.map((j) => j.workflowId)).not.toContain(workflowId);
  });

  it("one clip at a time per member: member A's clip runs on the workspace's credits, A's second is told to wait, member B's runs beside it, a viewer and a non-member change nothing", async () => {
    const before = await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits');
    const started = await startClip(people.memberA);
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const workflowId = `clip-${jobId}`;
    expect(await knex('video_generation_jobs').where({ id: jobId }).first('workspace_id', 'created_by')).toEqual({ workspace_id: workspaceId, created_by: people.memberA.id });
    const reservation = await knex('credit_reservations').where({ idempotency_key: workflowId }).first('workspace_id', 'status', 'amount', 'metadata');
    expect(reservation).toMatchObject({ workspace_id: workspaceId, status: 'active', amount: 4, metadata: { actorId: people.memberA.id } });
    expect(await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits')).toEqual({ credits: before.credits, reserved_credits: before.reserved_credits + 4 });
    const run = await h.client.workflow.getHandle(workflowId).describe();
    expect(run.typedSearchAttributes.get(RS_WORKSPACE_ID)).toBe(workspaceId);
    expect(run.typedSearchAttributes.get(RS_USER_ID)).toBe(people.memberA.id);
    expect(run.typedSearchAttributes.get(RS_JOB_KIND)).toBe('clip');
    await waitFor(
      'clip processing',
      async () => (await request(h.baseUrl, `/api/video-generation/status/${jobId}`, { token: people.memberB.token, headers: inTeam() })).body.job?.status,
      (s) => s === 'processing',
    );

    // member A again: the spec's single-clip answer ("a user restricted to one clip"), and nothing written
    const unchanged = await snapshot();
    const second = await startClip(people.memberA);
    expect(second.status).toBe(409);
    expect(second.body).toEqual({ success: false, error: MSG.waitForCurrentGeneration, code: ERROR_CODES.singleClipRestriction });
    expect(await snapshot()).toEqual(unchanged);
    // A's running clip is what A's reload picks up; member B has none of their own (A's is in Activity for them)
    const activeFor = async (who: typeof people.memberA) => (await request(h.baseUrl, '/api/video-generation/active', { token: who.token, headers: inTeam() })).body.job;
    expect(await activeFor(people.memberA)).toMatchObject({ id: jobId, status: 'processing' });
    expect(await activeFor(people.memberB)).toBeNull();
    // the status route finds the team's job without a workspace hint, as the start needed none
    expect((await request(h.baseUrl, `/api/video-generation/status/${jobId}`, { token: people.memberB.token })).body.job).toMatchObject({ id: jobId, status: 'processing' });
    const list = await activity(people.memberB);
    expect(list.body.jobs.find((j) => j.id === jobId)).toMatchObject({ kind: 'clip', userId: workspaceId, state: 'processing', startedBy: starterOf(people.memberA), canCancel: true });

    // a viewer: may read, not start, retry or cancel; nothing changes and no run of theirs exists
    expect((await request(h.baseUrl, `/api/video-generation/status/${jobId}`, { token: people.viewer.token, headers: inTeam() })).status).toBe(200);
    const refusedToViewer = [
      await startClip(people.viewer),
      await startPortrait(people.viewer),
      await editImage(people.viewer),
      await request(h.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: people.viewer.token, headers: inTeam() }),
      await request(h.baseUrl, `/api/video-generation/retry/${jobId}`, { method: 'POST', token: people.viewer.token, headers: inTeam() }),
      await request(h.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: people.viewer.token, headers: inTeam() }),
      await request(h.baseUrl, `/api/jobs/clip/${jobId}/retry`, { method: 'POST', token: people.viewer.token, headers: inTeam() }),
    ];
    for (const res of refusedToViewer) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, code: 'WORKSPACE_FORBIDDEN' });
    }
    expect(await snapshot()).toEqual(unchanged);

    // a non-member: the project is not found in their own workspace, the named workspace is not found, the job is not found
    const refusedToOutsider = [
      await startClip(people.outsider, {}),
      await startClip(people.outsider),
      await startPortrait(people.outsider, {}),
      await editImage(people.outsider, {}),
      await editImage(people.outsider),
      await activity(people.outsider),
      await request(h.baseUrl, `/api/video-generation/status/${jobId}`, { token: people.outsider.token }),
      await request(h.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: people.outsider.token }),
      await request(h.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: people.outsider.token, headers: inTeam() }),
      await request(h.baseUrl, `/api/jobs/clip/${jobId}/cancel`, { method: 'POST', token: people.outsider.token }),
    ];
    for (const res of refusedToOutsider) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false });
    }
    expect(refusedToOutsider[1].body).toMatchObject({ code: 'WORKSPACE_NOT_FOUND' });
    expect(await snapshot()).toEqual(unchanged);
    expect(await knex('video_generation_jobs').whereIn('workspace_id', [people.viewer.id, people.outsider.id]).count<{ count: string }[]>('id as count')).toEqual([{ count: '0' }]);
    expect(await runsStartedBy(people.viewer.id)).toEqual([]);
    expect(await runsStartedBy(people.outsider.id)).toEqual([]);
    expect(await runsStartedBy(people.memberB.id)).toEqual([]);

    // a workspace may cap its clips in flight (owners and admins set it): at 1, A's running clip refuses B's start
    const capTo = (who: TestUser, maxClipsInFlight: unknown) =>
      request(h.baseUrl, `/api/workspaces/${workspaceId}/clip-cap`, { method: 'PUT', token: who.token, json: { maxClipsInFlight } });
    expect((await capTo(people.memberA, 1)).status).toBe(403);
    for (const wrong of [0, 101, 1.5, '2', undefined]) {
      const refused = await capTo(people.owner, wrong);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ success: false });
    }
    const capped = await capTo(people.owner, 1);
    expect(capped.status).toBe(200);
    expect(capped.body.workspace).toMatchObject({ id: workspaceId, maxClipsInFlight: 1 });
    const atCap = await startClip(people.memberB);
    expect(atCap.status).toBe(409);
    expect(atCap.body).toEqual({
      success: false,
      error: 'This workspace runs at most 1 clip at a time. Please wait for one to finish, or ask an admin to raise the limit.',
      code: 'WORKSPACE_CLIP_CAP',
    });
    expect(await snapshot()).toEqual(unchanged);
    // at 2 there is room again; cleared (null), the credits are the only bound
    expect((await capTo(people.owner, 2)).body.workspace).toMatchObject({ maxClipsInFlight: 2 });
    expect((await capTo(people.owner, null)).body.workspace).toMatchObject({ maxClipsInFlight: null });

    // member B starts one of their own while A's runs: it records them, and both hold the workspace's credits
    const own = await startClip(people.memberB);
    expect(own.status).toBe(200);
    expect(await knex('video_generation_jobs').where({ id: own.body.jobId }).first('workspace_id', 'created_by')).toEqual({ workspace_id: workspaceId, created_by: people.memberB.id });
    const ownRun = await h.client.workflow.getHandle(`clip-${own.body.jobId}`).describe();
    expect(ownRun.typedSearchAttributes.get(RS_USER_ID)).toBe(people.memberB.id);
    expect(await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits')).toEqual({ credits: before.credits, reserved_credits: before.reserved_credits + 8 });
    expect(await activeFor(people.memberB)).toMatchObject({ id: own.body.jobId });

    // member B may cancel A's clip: its reservation goes back to the workspace
    const cancelled = await request(h.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: people.memberB.token, headers: inTeam() });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.job).toMatchObject({ id: jobId, status: 'cancelled' });
    expect(await knex('credit_reservations').where({ idempotency_key: workflowId }).first('status')).toEqual({ status: 'released' });
    const cancelOwn = await request(h.baseUrl, `/api/jobs/clip/${own.body.jobId}/cancel`, { method: 'POST', token: people.memberA.token, headers: inTeam() });
    expect(cancelOwn.status).toBe(200);
    expect(cancelOwn.body.job).toMatchObject({ id: own.body.jobId, state: 'cancelled', startedBy: starterOf(people.memberB) });
    expect(await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits')).toEqual(before);
  });

  it("Enhance Renders: a member's drafts and runs are the workspace's; a viewer with the access code reads them and changes nothing", async () => {
    for (const user of [people.memberA, people.viewer]) {
      // the access code is the caller's own: entered once, in any workspace
      const unlocked = await request(h.baseUrl, '/api/enhance-set/access/unlock', { token: user.token, json: { code: ACCESS_CODE } });
      expect(unlocked.status).toBe(200);
    }
    const created = await request<{ draft: { id: string } }>(h.baseUrl, '/api/enhance-set/drafts/create', { token: people.memberA.token, headers: inTeam(), json: { name: 'Team draft' } });
    expect(created.status).toBe(201);
    const draftId = created.body.draft.id;
    expect(await knex('drafts').where({ id: draftId }).first('workspace_id')).toEqual({ workspace_id: workspaceId });

    const form = new FormData();
    form.append('draftId', draftId);
    form.append('file', new Blob([new Uint8Array(await renderPng())], { type: 'image/png' }), 'facade.png');
    const upload = await request<{ url: string }>(h.baseUrl, '/api/enhance-set/drafts/upload', { method: 'POST', body: form, token: people.memberA.token, headers: inTeam() });
    expect(upload.status).toBe(200);
    const added = await request<{ images: Array<{ id: string }> }>(h.baseUrl, '/api/enhance-set/drafts/add-images', {
      token: people.memberA.token,
      headers: inTeam(),
      json: { draftId, images: [{ source_type: 'uploaded', source_url: upload.body.url, name: 'facade.png', metadata: {} }] },
    });
    expect(added.status).toBe(200);
    const imageId = added.body.images[0].id;
    const run = { draftId, imageIds: [imageId], prompt: 'soft morning light', modelId: 'flux-kontext-max', mode: 'edit_render', references: [] };

    // the viewer reads the draft; every change and every run is refused, and nothing changes
    const read = await request(h.baseUrl, `/api/enhance-set/drafts/get?draftId=${draftId}`, { token: people.viewer.token, headers: inTeam() });
    expect(read.status).toBe(200);
    expect((await request(h.baseUrl, '/api/enhance-set/drafts/list', { token: people.viewer.token, headers: inTeam() })).body.drafts.map((d: { id: string }) => d.id)).toContain(draftId);
    const unchanged = await snapshot();
    const viewerForm = new FormData();
    viewerForm.append('draftId', draftId);
    viewerForm.append('file', new Blob([new Uint8Array(await renderPng())], { type: 'image/png' }), 'viewer.png');
    const refused = [
      await request(h.baseUrl, '/api/enhance-set/drafts/create', { token: people.viewer.token, headers: inTeam(), json: { name: 'Not mine' } }),
      await request(h.baseUrl, '/api/enhance-set/drafts/upload', { method: 'POST', body: viewerForm, token: people.viewer.token, headers: inTeam() }),
      await request(h.baseUrl, '/api/enhance-set/drafts/remove-image', { token: people.viewer.token, headers: inTeam(), json: { draftId, imageId } }),
      await request(h.baseUrl, '/api/enhance-set/drafts/delete', { token: people.viewer.token, headers: inTeam(), json: { draftId } }),
      await request(h.baseUrl, '/api/enhance-set/jobs/dispatch', { token: people.viewer.token, headers: inTeam(), json: run }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'WORKSPACE_FORBIDDEN' });
    }
    // a non-member is told the workspace is not found, whether or not they entered the code
    const outsider = await request(h.baseUrl, `/api/enhance-set/drafts/get?draftId=${draftId}`, { token: people.outsider.token, headers: inTeam() });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toMatchObject({ code: 'WORKSPACE_NOT_FOUND' });
    expect(await snapshot()).toEqual(unchanged);

    // the member runs a model: the job is the workspace's, started by them, and Activity says so
    const dispatched = await request(h.baseUrl, '/api/enhance-set/jobs/dispatch', { token: people.memberA.token, headers: inTeam(), json: run });
    expect(dispatched.status).toBe(200);
    expect(dispatched.body).toMatchObject({ success: true, dispatched: 1 });
    const { jobId, workflowId } = dispatched.body.results[0].data as { jobId: string; workflowId: string };
    expect(await knex('draft_jobs').where({ id: jobId }).first('workspace_id', 'created_by')).toEqual({ workspace_id: workspaceId, created_by: people.memberA.id });
    const described = await h.client.workflow.getHandle(workflowId).describe();
    expect(described.typedSearchAttributes.get(RS_WORKSPACE_ID)).toBe(workspaceId);
    expect(described.typedSearchAttributes.get(RS_USER_ID)).toBe(people.memberA.id);
    await waitFor('draft job', async () => (await knex('draft_jobs').where({ id: jobId }).first('status')).status as string, (s) => s === 'completed');
    const list = await activity(people.viewer);
    expect(list.body.jobs.find((j) => j.id === jobId)).toMatchObject({ kind: 'draft', userId: workspaceId, state: 'completed', startedBy: starterOf(people.memberA) });
  });

  it('every kind of run carries RsWorkspaceId (the account); RsUserId is its starter, else the account, as before workspaces', () => {
    const pairs = (attrs: ReturnType<typeof jobSearchAttributes>) => Object.fromEntries(attrs.map((p) => [p.key.name, p.value]));
    expect(pairs(jobSearchAttributes({ workspaceId: workspaceId, actorId: people.memberA.id, kind: 'assembly', itemId: 'job-1', projectId }))).toEqual({
      RsWorkspaceId: workspaceId,
      RsUserId: people.memberA.id,
      RsJobKind: 'assembly',
      RsItemId: 'job-1',
      RsProjectId: projectId,
    });
    // a personal account's own runs (export, deletion, onboarding) name no actor: the account is the user
    expect(pairs(jobSearchAttributes({ workspaceId: people.owner.id, kind: 'export', itemId: 'export-1' }))).toEqual({
      RsWorkspaceId: people.owner.id,
      RsUserId: people.owner.id,
      RsJobKind: 'export',
      RsItemId: 'export-1',
    });
  });

  it('a run from before workspaces (no actorId in its input) records its account as who started it when that is a user, else nobody', async () => {
    const [personalProject] = await knex('projects').insert({ workspace_id: people.owner.id, name: 'Older run' }).returning<{ id: string }[]>('id');
    const record = (userId: string, project: string, workflowId: string) =>
      h.activities.recordImageEdit({
        workflowId,
        workspaceId: userId,
        projectId: project,
        originalImageUrl: renderUrl,
        editPrompt: 'an older run',
        status: 'failed',
        editedImage: null,
        editData: {},
        error: 'test',
      });
    await record(people.owner.id, personalProject.id, 'image-edit-older-personal');
    await record(workspaceId, projectId, 'image-edit-older-team');
    expect(await knex('ai_image_edits').where({ workflow_id: 'image-edit-older-personal' }).first('workspace_id', 'created_by')).toEqual({ workspace_id: people.owner.id, created_by: people.owner.id });
    expect(await knex('ai_image_edits').where({ workflow_id: 'image-edit-older-team' }).first('workspace_id', 'created_by')).toEqual({ workspace_id: workspaceId, created_by: null });
  });
});
