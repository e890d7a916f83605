/**
 * Webhook events recorded with their changes (issue 29, item 2), end to end on the run's PostgreSQL and Temporal dev
 * server with real workers and activities: an endpoint row subscribed to every type is written straight into
 * webhook_endpoints (the endpoints API is tested on its own), then each change is made through the API (or the
 * service that makes it, where the API needs a third party: the ledger, Stripe's webhook from the local fake), and
 * the outbox must hold exactly one event of the right type with the right payload, one delivery for the endpoint.
 * A change that rolls back records nothing; a workspace without an endpoint gets no rows at all. Every recorded
 * payload parses against its schema in the OpenAPI document's webhooks section (api/openapi/webhooks.ts), with
 * exactly the fields the schema names.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type Stripe from 'stripe';
import { ALL_WEBHOOK_TYPES, WEBHOOK_PAYLOAD_SCHEMAS } from '../../api/openapi/webhooks';
import { loadConfig } from '../../config/env';
import { LOW_CREDIT_THRESHOLD } from '../../domain/billing';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_PAYLOAD_VERSION, type AnyWebhookEventType, type WebhookEventType } from '../../domain/webhooks';
import { createProviders } from '../../providers';
import { addCredits, deductCredits } from '../../services/billing/credits';
import { newWebhookSecret } from '../../services/integrations/webhookSigning';
import { acceptInvitation } from '../../services/workspaces/invitations';
import { clipTestConfig } from '../clips/fixtures';
import { ACCESS_CODE, addImage, createDraft, dispatch, renderPng, waitForJobs } from '../enhanceRenders/support';
import { generateImage, renderBytes, seedPendingImage, startHarness, type Harness } from '../imageEdit/harness';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe } from '../support/fakeStripe';
import { request } from '../support/http';
import { createTeamWorkspace, invite, type TeamWorkspace } from '../support/workspaces';

interface EventRow {
  id: string;
  workspace_id: string;
  type: string;
  resource_id: string;
  payload: { type: string; version: number; timestamp: string; data: Record<string, unknown> };
}

// real generation on a machine shared with other work: a clip and its assembly can take minutes under load
jest.setTimeout(180_000);

const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let h: Harness;
let stripe: FakeStripe;
let user: TestUser;
let projectId: string;
/** every workspace this file subscribed, for the schema test at the end */
const subscribed = new Set<string>();
/** who may read each subscribed workspace, for following the events' links */
const readers = new Map<string, TestUser>();

/** An enabled endpoint of the workspace subscribed to every event type, as ENDPOINTS' API writes one. */
async function subscribeAll(workspaceId: string, eventTypes: readonly string[] = WEBHOOK_EVENT_TYPES): Promise<string> {
  const [row] = await h.knex('webhook_endpoints')
    .insert({ workspace_id: workspaceId, url: 'https://hooks.example.test/render-studio', description: 'events test', event_types: [...eventTypes], secret: newWebhookSecret() })
    .returning<{ id: string }[]>('id');
  subscribed.add(workspaceId);
  return row.id;
}

async function events(workspaceId: string, type?: AnyWebhookEventType, resourceId?: string): Promise<EventRow[]> {
  const query = h.knex('webhook_events').where({ workspace_id: workspaceId }).orderBy('seq');
  if (type) query.where({ type });
  if (resourceId) query.where({ resource_id: resourceId });
  return (await query.select('id', 'workspace_id', 'type', 'resource_id', 'payload')) as EventRow[];
}

/** The one event of `type` about `resourceId`, after checking there is exactly one and it has one delivery per endpoint. */
async function onlyEvent(workspaceId: string, type: WebhookEventType, resourceId: string, endpoints = 1): Promise<EventRow> {
  const rows = await events(workspaceId, type, resourceId);
  expect(rows).toHaveLength(1);
  const [event] = rows;
  expect(event.payload).toMatchObject({ type, version: WEBHOOK_PAYLOAD_VERSION, timestamp: expect.any(String) });
  expect(Number.isNaN(Date.parse(event.payload.timestamp))).toBe(false);
  const deliveries = await h.knex('webhook_deliveries').where({ event_id: event.id }).count<{ count: string }[]>('* as count');
  expect(Number(deliveries[0].count)).toBe(endpoints);
  return event;
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function uploadRender(owner: TestUser, project: string, bytes: Buffer, name = 'harbour-render.png'): Promise<{ id: string; fileUrl: string; duplicate: boolean }> {
  const form = new FormData();
  form.append('projectId', project);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), name);
  const res = await request<{ duplicate: boolean; render: { data: { id: string; file_url: string } } }>(h.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: owner.token });
  expect(res.status).toBe(200);
  return { id: res.body.render.data.id, fileUrl: res.body.render.data.file_url, duplicate: res.body.duplicate };
}

async function balanceOf(workspaceId: string): Promise<number> {
  const row = (await h.knex('profiles').where({ id: workspaceId }).first('credits')) as { credits: number };
  return row.credits;
}

beforeAll(async () => {
  stripe = await startFakeStripe();
  h = await startHarness('webhook-events', {
    config: clipTestConfig({
      publicUrl: 'http://studio.example.test',
      stripeSecretKey: FAKE_STRIPE_SECRET_KEY,
      stripeWebhookSecret: stripe.webhookSecret,
      stripeApiBase: stripe.baseUrl,
      enhanceAccessCode: ACCESS_CODE,
    }),
  });
  stripe.webhookUrl = `${h.baseUrl}/api/stripe/webhook`;
  user = await createTestUser(h.baseUrl);
  const project = await request<{ project: { id: string } }>(h.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  projectId = project.body.project.id;
  // the personal workspace's id is the user's
  await subscribeAll(user.id);
  readers.set(user.id, user);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await stripe?.close();
  await closeTestKnex();
});

describe('render.uploaded', () => {
  it('a plain upload records one event with the render, and the same bytes again (a duplicate) record none', async () => {
    const bytes = await renderBytes(400, 300);
    const render = await uploadRender(user, projectId, bytes);
    const event = await onlyEvent(user.id, 'render.uploaded', render.id);
    expect(event.payload.data).toEqual({
      workspaceId: user.id,
      projectId,
      renderId: render.id,
      fileName: 'harbour-render.png',
      fileSize: bytes.length,
      width: 400,
      height: 300,
      href: `/api/content/${render.id}/lineage?workspaceId=${user.id}`,
    });
    const again = await uploadRender(user, projectId, bytes);
    expect(again).toMatchObject({ id: render.id, duplicate: true });
    expect(await events(user.id, 'render.uploaded', render.id)).toHaveLength(1);
  });

  it('a resumable (tus) upload records one event when its last byte arrives, none before', async () => {
    const bytes = await renderBytes(360, 240);
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
    const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${user.token}` };
    const created = await fetch(`${h.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...tus, 'upload-length': String(bytes.length), 'upload-metadata': `projectId ${b64(projectId)},filename ${b64('tus-render.png')},filetype ${b64('image/png')}` },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location') as string;
    const before = (await events(user.id, 'render.uploaded')).length;
    const half = Math.floor(bytes.length / 2);
    const first = await fetch(`${h.baseUrl}${location}`, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(bytes.subarray(0, half)),
    });
    expect(first.status).toBe(204);
    expect(await events(user.id, 'render.uploaded')).toHaveLength(before);
    const done = await fetch(`${h.baseUrl}${location}`, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': String(half), 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(bytes.subarray(half)),
    });
    expect(done.status).toBe(200);
    const answer = (await done.json()) as { render: { data: { id: string } } };
    const event = await onlyEvent(user.id, 'render.uploaded', answer.render.data.id);
    expect(event.payload.data).toMatchObject({ renderId: answer.render.data.id, projectId, fileName: 'tus-render.png', fileSize: bytes.length, width: 360, height: 240 });
  });
});

describe('image edits and their approvals', () => {
  let renderId: string;
  let approvalId: string;
  let jobId: string;

  beforeAll(async () => {
    renderId = (await uploadRender(user, projectId, await renderBytes(320, 240), 'edit-source.png')).id;
  });

  it('a finished edit records job.started, job.completed with the pending item, and approval.created, once each', async () => {
    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId, prompt: 'a snowy evening over the harbour' });
    expect(res.status).toBe(200);
    jobId = res.body.metadata.jobId as string;
    approvalId = res.body.result.savedImage.approvalId as string;
    const started = await onlyEvent(user.id, 'job.started', jobId);
    const completed = await onlyEvent(user.id, 'job.completed', jobId);
    const common = { workspaceId: user.id, projectId, jobId, kind: 'image', startedBy: user.id, draftId: null, draftImageId: null, error: null, href: `/api/ai-image-simple/status/${jobId}?workspaceId=${user.id}` };
    expect(started.payload.data).toEqual({ ...common, status: 'started', approvalId: null });
    expect(completed.payload.data).toEqual({ ...common, status: 'completed', approvalId });
    const created = await onlyEvent(user.id, 'approval.created', approvalId);
    expect(created.payload.data).toEqual({
      workspaceId: user.id,
      projectId,
      approvalId,
      kind: 'image',
      status: 'pending',
      fileName: expect.stringMatching(/\.(jpg|png|webp)$/),
      credits: 1,
      deadline: expect.any(String),
      createdBy: user.id,
      decidedBy: null,
      contentId: null,
      href: `/api/approvals/list?workspaceId=${user.id}`,
    });
    // in order: the start before the end
    const all = (await events(user.id)).filter((e) => e.resource_id === jobId).map((e) => e.type);
    expect(all).toEqual(['job.started', 'job.completed']);
  });

  it('approving records approval.approved with the saved item; a balance taken from the threshold to below it records credits.low once', async () => {
    // the balance exactly at the threshold: the approval's charge takes it below
    const balance = await balanceOf(user.id);
    await addCredits(h.knex, { workspaceId: user.id, amount: LOW_CREDIT_THRESHOLD - balance, type: 'purchase', description: 'Top up', idempotencyKey: `top-up:${randomUUID()}` });
    expect(await balanceOf(user.id)).toBe(LOW_CREDIT_THRESHOLD);
    expect(await events(user.id, 'credits.low')).toHaveLength(0);

    const res = await request(h.baseUrl, '/api/approvals/approve', { token: user.token, json: { approvalId, userId: user.id } });
    expect(res.status).toBe(200);
    const contentId = res.body.contentId as string;
    const approved = await onlyEvent(user.id, 'approval.approved', approvalId);
    expect(approved.payload.data).toMatchObject({ approvalId, status: 'approved', decidedBy: user.id, createdBy: user.id, contentId, credits: 1, href: `/api/content/${contentId}/lineage?workspaceId=${user.id}` });

    const low = await onlyEvent(user.id, 'credits.low', user.id);
    expect(low.payload.data).toEqual({
      workspaceId: user.id,
      balance: LOW_CREDIT_THRESHOLD - 1,
      previousBalance: LOW_CREDIT_THRESHOLD,
      reserved: 0,
      threshold: LOW_CREDIT_THRESHOLD,
      href: `/api/credits/summary?workspaceId=${user.id}`,
    });
  });

  it('credits.low only on a crossing: not on later charges below the threshold, again after the balance went back up and down', async () => {
    const lowBefore = (await events(user.id, 'credits.low')).length;
    await deductCredits(h.knex, { workspaceId: user.id, amount: 1, description: 'below already', idempotencyKey: `deduct:${randomUUID()}` });
    expect(await events(user.id, 'credits.low')).toHaveLength(lowBefore);
    const balance = await balanceOf(user.id);
    await addCredits(h.knex, { workspaceId: user.id, amount: LOW_CREDIT_THRESHOLD + 5 - balance, type: 'add', description: 'back up', idempotencyKey: `add:${randomUUID()}` });
    expect(await events(user.id, 'credits.low')).toHaveLength(lowBefore);
    const key = `deduct:${randomUUID()}`;
    await deductCredits(h.knex, { workspaceId: user.id, amount: 10, description: 'across', idempotencyKey: key });
    // the same key again changes nothing and records nothing
    await deductCredits(h.knex, { workspaceId: user.id, amount: 10, description: 'across', idempotencyKey: key });
    const lows = await events(user.id, 'credits.low');
    expect(lows).toHaveLength(lowBefore + 1);
    expect(lows.at(-1)?.payload.data).toMatchObject({ balance: LOW_CREDIT_THRESHOLD - 5, previousBalance: LOW_CREDIT_THRESHOLD + 5 });
  });

  it('a ledger change that rolls back records nothing', async () => {
    const before = await events(user.id);
    const balance = await balanceOf(user.id);
    await addCredits(h.knex, { workspaceId: user.id, amount: LOW_CREDIT_THRESHOLD - balance, type: 'add', description: 'to the line', idempotencyKey: `add:${randomUUID()}` });
    const rolledBack = h.knex.transaction(async (trx) => {
      await deductCredits(trx, { workspaceId: user.id, amount: 3, description: 'rolled back', idempotencyKey: `deduct:${randomUUID()}` });
      expect((await trx('webhook_events').where({ workspace_id: user.id, type: 'credits.low' })).length).toBe((await events(user.id, 'credits.low')).length + 1);
      throw new Error('roll back');
    });
    await expect(rolledBack).rejects.toThrow('roll back');
    expect(await events(user.id)).toEqual(before);
    expect(await balanceOf(user.id)).toBe(LOW_CREDIT_THRESHOLD);
  });

  it('rejecting records approval.rejected with who decided', async () => {
    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId, prompt: 'warm dusk light' });
    expect(res.status).toBe(200);
    const item = res.body.result.savedImage.approvalId as string;
    // a purchase was made above (rejection needs one)
    const rejected = await request(h.baseUrl, '/api/approvals/reject', { token: user.token, json: { approvalId: item, userId: user.id } });
    expect(rejected.status).toBe(200);
    const event = await onlyEvent(user.id, 'approval.rejected', item);
    expect(event.payload.data).toMatchObject({ approvalId: item, kind: 'image', status: 'rejected', decidedBy: user.id, contentId: null, href: `/api/approvals/list?workspaceId=${user.id}` });
    expect(await events(user.id, 'approval.approved', item)).toHaveLength(0);
  });

  it('an item left past its window records approval.expired, with nobody as the decider', async () => {
    const item = await seedPendingImage(h, user.id, projectId, { windowMs: 1500 });
    await onlyEvent(user.id, 'approval.created', item.approvalId);
    const [expired] = await waitFor('approval.expired', () => events(user.id, 'approval.expired', item.approvalId), (rows) => rows.length > 0);
    expect(expired.payload.data).toMatchObject({ approvalId: item.approvalId, status: 'expired', decidedBy: null, contentId: null });
    await onlyEvent(user.id, 'approval.expired', item.approvalId);
  });

  it('an edit that fails after its start records job.started then job.failed with the reason, and no approval', async () => {
    const broken = await uploadRender(user, projectId, await renderBytes(300, 200), 'broken-source.png');
    expect(broken.duplicate).toBe(false);
    // the file goes; the row stays, so the edit starts and then cannot read its source
    const row = (await h.knex('renders').where({ id: broken.id }).first('storage_bucket', 'storage_path')) as { storage_bucket: 'renders'; storage_path: string };
    await h.storage.objects.remove(row.storage_bucket, [row.storage_path]);
    const approvalsBefore = (await events(user.id, 'approval.created')).length;
    const res = await generateImage(h.baseUrl, user, { baseImage: broken.id, projectId });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const edit = (await h.knex('ai_image_edits').where({ workspace_id: user.id, status: 'failed' }).orderBy('created_at', 'desc').first('workflow_id', 'error')) as { workflow_id: string; error: string };
    const failedJob = edit.workflow_id.replace(/^image-edit-/, '');
    await onlyEvent(user.id, 'job.started', failedJob);
    const failed = await onlyEvent(user.id, 'job.failed', failedJob);
    expect(failed.payload.data).toMatchObject({ jobId: failedJob, kind: 'image', status: 'failed', approvalId: null, error: edit.error });
    expect(edit.error).toEqual(expect.any(String));
    expect(await events(user.id, 'job.completed', failedJob)).toHaveLength(0);
    expect(await events(user.id, 'approval.created')).toHaveLength(approvalsBefore);
  });
});

describe('clips and assemblies', () => {
  let renderId: string;
  let renderUrl: string;

  beforeAll(async () => {
    ({ id: renderId, fileUrl: renderUrl } = await uploadRender(user, projectId, await renderBytes(640, 360), 'clip-source.png'));
  });

  function startClip(source: { id: string; url: string }) {
    return request(h.baseUrl, '/api/video-generation/start', {
      token: user.token,
      json: {
        options: { imageUrl: source.url, movement: 'Zoom In', originalPrompt: 'A calm morning at the harbour', duration: 5, platform: 'YouTube' },
        context: { projectId, userId: user.id, renderId: source.id, isTemporaryImage: false },
      },
    });
  }

  async function clipEnd(jobId: string): Promise<string> {
    const job = await waitFor(
      `clip ${jobId}`,
      async () => (await request(h.baseUrl, `/api/video-generation/status/${jobId}`, { token: user.token })).body.job as { status: string },
      (j) => ['completed', 'failed', 'cancelled'].includes(j.status),
    );
    return job.status;
  }

  it('a clip records job.started and job.completed with its pending item, then approval.created (kind clip); approving it and assembling it records the assembly job and its item', async () => {
    const res = await startClip({ id: renderId, url: renderUrl });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    expect(await clipEnd(jobId)).toBe('completed');
    const started = await onlyEvent(user.id, 'job.started', jobId);
    expect(started.payload.data).toMatchObject({ kind: 'clip', status: 'started', projectId, startedBy: user.id, approvalId: null, href: `/api/video-generation/status/${jobId}?workspaceId=${user.id}` });
    const completed = await onlyEvent(user.id, 'job.completed', jobId);
    const clipApproval = completed.payload.data.approvalId as string;
    expect(completed.payload.data).toMatchObject({ kind: 'clip', status: 'completed', approvalId: UUID, error: null });
    const created = await onlyEvent(user.id, 'approval.created', clipApproval);
    expect(created.payload.data).toMatchObject({ kind: 'clip', credits: 4, status: 'pending' });

    const approved = await request(h.baseUrl, '/api/approvals/approve', { token: user.token, json: { approvalId: clipApproval, userId: user.id } });
    expect(approved.status).toBe(200);
    const clipId = approved.body.contentId as string;
    await onlyEvent(user.id, 'approval.approved', clipApproval);

    const assembly = await request(h.baseUrl, '/api/video/assemble', {
      token: user.token,
      json: { projectId, platform: 'youtube', contentItems: [{ id: clipId, type: 'clip', file_url: `/api/files/clips/${clipId}`, file_name: 'clip.mp4' }], clipOrder: [clipId] },
    });
    expect(assembly.status).toBe(200);
    const assemblyId = assembly.body.jobId as string;
    await waitFor(
      `assembly ${assemblyId}`,
      async () => (await request(h.baseUrl, `/api/video/assemble?jobId=${assemblyId}`, { token: user.token })).body.job as { status: string },
      (j) => ['completed', 'failed', 'cancelled'].includes(j.status),
    );
    const aStarted = await onlyEvent(user.id, 'job.started', assemblyId);
    expect(aStarted.payload.data).toMatchObject({ kind: 'assembly', status: 'started', projectId, startedBy: user.id, href: `/api/video/assemble?jobId=${assemblyId}&workspaceId=${user.id}` });
    const aCompleted = await onlyEvent(user.id, 'job.completed', assemblyId);
    expect(aCompleted.payload.data).toMatchObject({ kind: 'assembly', status: 'completed', approvalId: UUID });
    const aItem = await onlyEvent(user.id, 'approval.created', aCompleted.payload.data.approvalId as string);
    expect(aItem.payload.data).toMatchObject({ kind: 'assembly', credits: 0 });
  }, 240_000);

  it('a clip whose source is gone records job.started and job.failed, and its credits go back', async () => {
    const broken = await uploadRender(user, projectId, await renderBytes(656, 368), 'gone-source.png');
    expect(broken.duplicate).toBe(false);
    const row = (await h.knex('renders').where({ id: broken.id }).first('storage_bucket', 'storage_path')) as { storage_bucket: 'renders'; storage_path: string };
    await h.storage.objects.remove(row.storage_bucket, [row.storage_path]);
    const res = await startClip({ id: broken.id, url: broken.fileUrl });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    expect(await clipEnd(jobId)).toBe('failed');
    await onlyEvent(user.id, 'job.started', jobId);
    const failed = await onlyEvent(user.id, 'job.failed', jobId);
    expect(failed.payload.data).toMatchObject({ kind: 'clip', status: 'failed', approvalId: null, error: expect.any(String) });
    expect(await events(user.id, 'job.completed', jobId)).toHaveLength(0);
    const reservation = (await h.knex('credit_reservations').whereRaw("metadata->>'jobId' = ?", [jobId]).first('status')) as { status: string };
    expect(reservation.status).toBe('released');
  }, 120_000);
});

describe('a cancelled clip', () => {
  // a hosted provider (the local fake of fal's queue API) whose video jobs run until cancelled, on an app of its own
  const KEY = 'webhook-events-fal-key';
  const SLOW_VIDEO = 'fake/video-until-cancelled';
  let fal: FakeFal;
  let hosted: Harness;
  let workDir: string;

  beforeAll(async () => {
    fal = await startFakeFal({ apiKey: KEY, models: { [SLOW_VIDEO]: { kind: 'video', behaviour: 'never-complete', queuedPolls: 1 } } });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'webhook-events-'));
    const base = { ...loadConfig(), videoPreset: 'ultrafast' };
    const slow = createProviders({ ...base, providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: SLOW_VIDEO }, { workDir, videoPollIntervalMs: 100, expectedVideoRunMs: 60_000 });
    hosted = await startHarness('webhook-events-cancel', { config: { videoPreset: 'ultrafast' }, providers: { ...createProviders(base), imageToVideo: slow.imageToVideo } });
  }, 120_000);

  afterAll(async () => {
    await hosted?.close();
    await fal?.close();
    if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  });

  it('records job.failed with status cancelled and the cancel message, once', async () => {
    const source = await uploadRender(user, projectId, await renderBytes(672, 378), 'cancel-source.png');
    expect(source.duplicate).toBe(false);
    const start = await request(hosted.baseUrl, '/api/video-generation/start', {
      token: user.token,
      json: {
        options: { imageUrl: source.fileUrl, movement: 'Pan Left', originalPrompt: 'Evening light', duration: 5, platform: 'YouTube' },
        context: { projectId, userId: user.id, renderId: source.id, isTemporaryImage: false },
      },
    });
    expect(start.status).toBe(200);
    const jobId = start.body.jobId as string;
    await onlyEvent(user.id, 'job.started', jobId);
    // the provider has the job: cancelling now stops a running clip
    await waitFor('provider job', async () => fal.jobs.length, (n) => n > 0);
    const cancelled = await request(hosted.baseUrl, `/api/video-generation/cancel/${jobId}`, { method: 'POST', token: user.token, json: {} });
    expect(cancelled.status).toBe(200);
    const [event] = await waitFor('job.failed', () => events(user.id, 'job.failed', jobId), (rows) => rows.length > 0);
    expect(event.payload.data).toMatchObject({ jobId, kind: 'clip', status: 'cancelled', approvalId: null, error: expect.any(String), startedBy: user.id });
    await onlyEvent(user.id, 'job.failed', jobId);
    expect(await events(user.id, 'job.completed', jobId)).toHaveLength(0);
  }, 120_000);
});

describe('Enhance Renders jobs', () => {
  it('a model run on a draft image records job.started and job.completed (kind enhance, the draft as its place)', async () => {
    const unlocked = await request(h.baseUrl, '/api/enhance-set/access/unlock', { token: user.token, json: { code: ACCESS_CODE } });
    expect(unlocked.status).toBe(200);
    const draftId = await createDraft(h.baseUrl, user);
    const imageId = await addImage(h.baseUrl, user, draftId, await renderPng(320, 240));
    const res = await dispatch(h.baseUrl, user, { draftId, imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' });
    expect(res.status).toBe(200);
    await waitForJobs(h.baseUrl, user, draftId);
    const job = (await h.knex('draft_jobs').where({ draft_image_id: imageId }).first('id', 'status')) as { id: string; status: string };
    expect(job.status).toBe('completed');
    const common = { workspaceId: user.id, projectId: null, jobId: job.id, kind: 'enhance', startedBy: user.id, approvalId: null, draftId, draftImageId: imageId, error: null, href: `/api/enhance-set/drafts/get?draftId=${draftId}&workspaceId=${user.id}` };
    expect((await onlyEvent(user.id, 'job.started', job.id)).payload.data).toEqual({ ...common, status: 'started' });
    expect((await onlyEvent(user.id, 'job.completed', job.id)).payload.data).toEqual({ ...common, status: 'completed' });
  }, 120_000);
});

describe('purchases', () => {
  function completed(sessionId: string): Stripe.Event {
    return stripe.event('checkout.session.completed', stripe.pay(sessionId));
  }

  it("Stripe's fulfilment records purchase.completed once, however often the event is delivered", async () => {
    const res = await request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId: 'small', userId: user.id, email: user.email } });
    expect(res.status).toBe(200);
    const sessionId = res.body.sessionId as string;
    const event = completed(sessionId);
    expect((await stripe.deliver(event)).body).toEqual({ received: true, outcome: 'credited' });
    await stripe.deliver(event);
    await stripe.deliver(completed(sessionId));
    const purchase = (await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).first('id', 'credits', 'amount_cents', 'currency', 'package_id')) as {
      id: string;
      credits: number;
      amount_cents: number;
      currency: string;
      package_id: string;
    };
    const recorded = await onlyEvent(user.id, 'purchase.completed', purchase.id);
    expect(recorded.payload.data).toEqual({
      workspaceId: user.id,
      purchaseId: purchase.id,
      packageId: purchase.package_id,
      credits: purchase.credits,
      amount: purchase.amount_cents,
      currency: purchase.currency,
      purchasedBy: user.id,
      href: `/api/stripe/purchases/${sessionId}?workspaceId=${user.id}`,
    });
  });
});

describe('members, rollbacks and workspaces without endpoints', () => {
  let team: TeamWorkspace;

  beforeAll(async () => {
    team = await createTeamWorkspace(h.baseUrl);
    await subscribeAll(team.id);
    readers.set(team.id, team.owner);
  });

  it('accepting an invitation records member.joined once; opening the used link again records nothing', async () => {
    const joiner = await createTestUser(h.baseUrl);
    const { token, invitationId } = await invite(h.baseUrl, team.id, team.owner, joiner.email, 'member');
    for (let i = 0; i < 2; i += 1) {
      const res = await request(h.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: joiner.token });
      expect(res.status).toBe(200);
    }
    const event = await onlyEvent(team.id, 'member.joined', joiner.id);
    expect(event.payload.data).toEqual({ workspaceId: team.id, userId: joiner.id, role: 'member', invitationId, href: `/api/workspaces/${team.id}/members` });
  });

  it('an accept inside a transaction that rolls back records nothing and adds nobody', async () => {
    const joiner = await createTestUser(h.baseUrl);
    const { token } = await invite(h.baseUrl, team.id, team.owner, joiner.email, 'viewer');
    const before = await events(team.id);
    const rolledBack = h.knex.transaction(async (trx) => {
      await acceptInvitation(trx as never, { token, user: { id: joiner.id, email: joiner.email } });
      expect(await trx('webhook_events').where({ workspace_id: team.id, type: 'member.joined', resource_id: joiner.id })).toHaveLength(1);
      throw new Error('roll back');
    });
    await expect(rolledBack).rejects.toThrow('roll back');
    expect(await events(team.id)).toEqual(before);
    expect(await h.knex('workspace_members').where({ workspace_id: team.id, user_id: joiner.id })).toHaveLength(0);
  });

  it('a disabled endpoint, or one not subscribed to the type, gets no delivery; a workspace with neither gets no rows', async () => {
    const loner = await createTestUser(h.baseUrl);
    const project = await request<{ project: { id: string } }>(h.baseUrl, '/api/projects', { token: loner.token, json: { name: 'Quiet' } });
    // no endpoint at all
    await uploadRender(loner, project.body.project.id, await renderBytes(200, 150), 'quiet.png');
    expect(await events(loner.id)).toHaveLength(0);
    // one subscribed only to member.joined, one disabled
    await subscribeAll(loner.id, ['member.joined']);
    const disabled = await subscribeAll(loner.id);
    await h.knex('webhook_endpoints').where({ id: disabled }).update({ status: 'disabled', disabled_reason: 'test', disabled_at: h.knex.fn.now() });
    await uploadRender(loner, project.body.project.id, await renderBytes(210, 150), 'quiet-2.png');
    expect(await events(loner.id)).toHaveLength(0);
    expect(await h.knex('webhook_deliveries').whereIn('endpoint_id', h.knex('webhook_endpoints').where({ workspace_id: loner.id }).select('id'))).toHaveLength(0);
  });
});

describe('comments', () => {
  it('opening a thread and replying record comment.created; resolving records comment.resolved once; editing and reopening record nothing', async () => {
    const render = await uploadRender(user, projectId, await renderBytes(320, 200), 'comments.png');
    const opened = await request<{ thread: { id: string; comments: Array<{ id: string }> } }>(h.baseUrl, `/api/content/${render.id}/comments`, {
      token: user.token,
      json: { body: 'Warmer light on the left', pin: { x: 0.25, y: 0.4 } },
    });
    expect(opened.status).toBe(201);
    const threadId = opened.body.thread.id;
    const replied = await request<{ thread: { comments: Array<{ id: string }> } }>(h.baseUrl, `/api/comments/threads/${threadId}/replies`, { token: user.token, json: { body: 'Done in v2' } });
    expect(replied.status).toBe(201);
    const created = await events(user.id, 'comment.created', threadId);
    expect(created.map((e) => e.payload.data)).toEqual([
      {
        workspaceId: user.id,
        itemKind: 'render',
        itemId: render.id,
        threadId,
        commentId: opened.body.thread.comments[0].id,
        opensThread: true,
        by: user.id,
        excerpt: 'Warmer light on the left',
        pin: { x: 0.25, y: 0.4 },
        mentions: [],
        href: `/api/content/${render.id}/comments?workspaceId=${user.id}`,
      },
      expect.objectContaining({ commentId: replied.body.thread.comments[1].id, opensThread: false, excerpt: 'Done in v2' }),
    ]);
    await request(h.baseUrl, `/api/comments/${opened.body.thread.comments[0].id}`, { method: 'PATCH', token: user.token, json: { body: 'Warmer light, left side' } });
    for (let i = 0; i < 2; i += 1) expect((await request(h.baseUrl, `/api/comments/threads/${threadId}/resolve`, { method: 'POST', token: user.token })).status).toBe(200);
    await request(h.baseUrl, `/api/comments/threads/${threadId}/reopen`, { method: 'POST', token: user.token });
    const resolved = await onlyEvent(user.id, 'comment.resolved', threadId);
    expect(resolved.payload.data).toMatchObject({ threadId, commentId: null, opensThread: false, by: user.id, excerpt: null, mentions: [] });
    expect(await events(user.id, 'comment.created', threadId)).toHaveLength(2);
  });
});

describe('review links', () => {
  it("a guest's comment records review.comment_created (and comment.created); a guest's approval records review.decided, each with the link's id", async () => {
    const item = await seedPendingImage(h, user.id, projectId);
    const made = await request<{ token: string; link: { id: string } }>(h.baseUrl, '/api/review-links', { token: user.token, json: { title: 'Events link', itemIds: [item.approvalId], canDecide: true } });
    expect(made.status).toBe(201);
    const session = await request(h.baseUrl, '/api/guest/sessions', { json: { token: made.body.token } });
    expect(session.status).toBe(201);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0];
    const guest = { name: 'Cora Client', email: 'cora@buyer.example' };
    const base = `/api/guest/links/${made.body.link.id}/items/${item.approvalId}`;
    const commented = await request<{ thread: { id: string; comments: Array<{ id: string }> } }>(h.baseUrl, `${base}/comments`, { headers: { cookie }, json: { guest, body: 'Lovely light' } });
    expect(commented.status).toBe(201);
    const threadId = commented.body.thread.id;
    const comment = await onlyEvent(user.id, 'review.comment_created', threadId);
    expect(comment.payload.data).toEqual({
      workspaceId: user.id,
      reviewLinkId: made.body.link.id,
      approvalId: item.approvalId,
      itemKind: 'approval',
      itemId: item.approvalId,
      threadId,
      commentId: commented.body.thread.comments[0].id,
      opensThread: true,
      guest,
      excerpt: 'Lovely light',
      pin: null,
      href: `/api/content/${item.approvalId}/comments?workspaceId=${user.id}`,
    });
    expect((await onlyEvent(user.id, 'comment.created', threadId)).payload.data).toMatchObject({ by: null, excerpt: 'Lovely light' });
    expect((await request(h.baseUrl, `${base}/approve`, { headers: { cookie }, json: { guest } })).status).toBe(200);
    const decided = await onlyEvent(user.id, 'review.decided', item.approvalId);
    expect(decided.payload.data).toEqual({
      workspaceId: user.id,
      reviewLinkId: made.body.link.id,
      approvalId: item.approvalId,
      decision: 'approve',
      outcome: 'approved',
      guest,
      request: null,
      href: `/api/review-links/${made.body.link.id}?workspaceId=${user.id}`,
    });
  });
});

describe('schemas (the OpenAPI document’s webhooks section)', () => {
  it('every event type, and the test event, has a payload schema and a webhook in the served document', async () => {
    expect([...ALL_WEBHOOK_TYPES].sort()).toEqual([...WEBHOOK_EVENT_TYPES, 'webhook.test'].sort());
    for (const type of ALL_WEBHOOK_TYPES) expect(WEBHOOK_PAYLOAD_SCHEMAS[type]).toBeDefined();
    const doc = await request<{ openapi: string; webhooks: Record<string, { post: { requestBody: unknown } }> }>(h.baseUrl, '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.body.webhooks).sort()).toEqual([...ALL_WEBHOOK_TYPES].sort());
    for (const type of ALL_WEBHOOK_TYPES) expect(doc.body.webhooks[type].post.requestBody).toBeDefined();
  });

  it('every payload recorded in this file parses against its type’s schema, with exactly the fields it names, and every type was recorded', async () => {
    const rows = (await h.knex('webhook_events').whereIn('workspace_id', [...subscribed]).select('type', 'payload')) as Array<Pick<EventRow, 'type' | 'payload'>>;
    const seen = new Set<string>();
    for (const row of rows) {
      const schema = WEBHOOK_PAYLOAD_SCHEMAS[row.type as AnyWebhookEventType];
      expect(schema).toBeDefined();
      const parsed = schema.safeParse(row.payload);
      if (!parsed.success) throw new Error(`${row.type} payload ${JSON.stringify(row.payload)} does not parse: ${parsed.error.message}`);
      expect(Object.keys(row.payload.data).sort()).toEqual(Object.keys(schema.shape.data.shape).sort());
      seen.add(row.type);
    }
    expect([...seen].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it("every event's link opens with a read-only access token (read, billing:read): 200, whatever route it names (?workspaceId= included)", async () => {
    const rows = (await h.knex('webhook_events').whereIn('workspace_id', [...subscribed]).select('workspace_id', 'type', 'payload')) as Array<Pick<EventRow, 'workspace_id' | 'type' | 'payload'>>;
    const readTokens = new Map<string, string>();
    for (const [workspaceId, reader] of readers) {
      const res = await request<{ token: string }>(h.baseUrl, '/api/account/tokens', { token: reader.token, json: { name: 'webhook links', scopes: ['read', 'billing:read'] } });
      expect(res.status).toBe(201);
      readTokens.set(workspaceId, res.body.token);
    }
    // each distinct link once (events of several types share one, such as the approvals list)
    const statusOf = new Map<string, number>();
    const refused: Array<{ type: string; href: string; status: number }> = [];
    for (const row of rows) {
      const href = row.payload.data.href as string;
      expect(href).toMatch(/^\/api\//);
      if (!statusOf.has(href)) statusOf.set(href, (await request(h.baseUrl, href, { token: readTokens.get(row.workspace_id) })).status);
      if (statusOf.get(href) !== 200) refused.push({ type: row.type, href, status: statusOf.get(href) as number });
    }
    expect(refused).toEqual([]);
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES));
  });
});
