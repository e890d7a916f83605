import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { createApprovalActivities } from '../../activities/approvals';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { NewPendingApproval } from '../../domain/approvals';
import { addCredits, checkAndReserve } from '../../services/billing/credits';
import { createEventHub, publishEvent, type EventHub } from '../../services/platform/events';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { renderJpeg } from '../clips/fixtures';
import { request, serve, type TestServer } from '../support/http';

const config = loadConfig();

interface Instance {
  app: Koa;
  server: TestServer;
  hub: EventHub;
  errors: unknown[];
  /** The application_name of its LISTEN connection, unique to this instance. */
  name: string;
}

/** One API process as npm start runs it: its own app, its own hub (one LISTEN connection), its own port. */
async function startInstance(options: { heartbeatMs?: number } = {}): Promise<Instance> {
  const knex = testKnex();
  const name = `events-test-${randomUUID().slice(0, 8)}`;
  const hub = createEventHub({ databaseUrl: config.databaseUrl, knex, logger, applicationName: name });
  const app = createApp({ config, knex, logger, events: hub, eventStreamHeartbeatMs: options.heartbeatMs });
  const errors: unknown[] = [];
  app.on('error', (err) => errors.push(err));
  return { app, hub, errors, name, server: await serve(app) };
}

/** LISTEN connections of these instances (other test files share the database). */
async function listenerConnections(...instances: Instance[]): Promise<number> {
  const row = await testKnex()('pg_stat_activity').whereIn('application_name', instances.map((i) => i.name)).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const grant = (user: TestUser, amount = 1) =>
  addCredits(testKnex(), { workspaceId: user.id, amount, type: 'add', description: 'test grant', idempotencyKey: `grant:${randomUUID()}` });

describe('GET /api/events', () => {
  let one: Instance;
  let two: Instance;
  let ada: TestUser;
  let bob: TestUser;
  const open: OpenedEventStream[] = [];
  const stream = async (instance: Instance, user: TestUser, lastEventId?: string) => {
    const s = await openEventStream(instance.server.baseUrl, { token: user.token, lastEventId });
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    one = await startInstance();
    two = await startInstance();
    ada = await createTestUser(one.server.baseUrl, { name: 'Ada' });
    bob = await createTestUser(one.server.baseUrl, { name: 'Bob' });
  });

  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  afterAll(async () => {
    await one?.hub.close();
    await two?.hub.close();
    await one?.server.close();
    await two?.server.close();
    await closeTestKnex();
  });

  it('answers 401 without a session and 400 for a Last-Event-ID that is no event id', async () => {
    const anonymous = await request(one.server.baseUrl, '/api/events');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: 'Authentication required' });
    const bad = await request(one.server.baseUrl, '/api/events', { token: ada.token, headers: { 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Last-Event-ID must be the id of an earlier event');
  });

  it('is an uncompressed, uncached event stream that starts with a ready message', async () => {
    const s = await stream(one, ada);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-cache, no-transform');
    expect(s.headers['x-accel-buffering']).toBe('no');
    expect(s.headers['content-encoding']).toBeUndefined();
    expect((await s.next()).event).toBe('ready');
  });

  it('delivers a credit change from both API instances, each on one LISTEN connection, and none of it to another user', async () => {
    const [onOne, onTwo, alsoOnTwo, bobs] = [await stream(one, ada), await stream(two, ada), await stream(two, ada), await stream(one, bob)];
    for (const s of [onOne, onTwo, alsoOnTwo, bobs]) await s.next((m) => m.event === 'ready');
    // four streams, two processes: one LISTEN connection each (a just-released one may still be closing)
    await waitFor(async () => (await listenerConnections(one, two)) === 2);

    await grant(ada, 3);
    const seen = await Promise.all([onOne, onTwo, alsoOnTwo].map((s) => s.next((m) => m.event === 'credits')));
    for (const m of seen) expect(m.data).toEqual({ kind: 'credits', id: m.id });
    expect(new Set(seen.map((m) => m.id)).size).toBe(1);

    // NOTIFYs arrive in commit order: Bob's first event being his own later one shows Ada's never reached him
    await grant(bob);
    const bobsFirst = await bobs.next((m) => m.event !== 'ready');
    expect(bobsFirst.event).toBe('credits');
    expect(Number(bobsFirst.id)).toBeGreaterThan(Number(seen[0].id));
    expect(bobs.messages.filter((m) => m.event !== 'ready')).toHaveLength(1);
  });

  it('replays what a reconnecting stream missed after its Last-Event-ID, then goes live', async () => {
    const first = await stream(one, ada);
    await first.next((m) => m.event === 'ready');
    await grant(ada);
    const last = await first.next((m) => m.event === 'credits');
    first.close();

    await grant(ada, 2);
    await publishEvent(testKnex(), ada.id, { kind: 'content', change: 'added', contentKind: 'render', projectId: randomUUID(), itemId: randomUUID() });
    await publishEvent(testKnex(), bob.id, { kind: 'credits' });

    const resumed = await stream(two, ada, last.id ?? undefined);
    const replayed = [await resumed.next(), await resumed.next()];
    expect(replayed.map((m) => m.event)).toEqual(['credits', 'content']);
    expect(Number(replayed[0].id)).toBeGreaterThan(Number(last.id));
    expect(Number(replayed[1].id)).toBeGreaterThan(Number(replayed[0].id));
    expect((await resumed.next()).data).toEqual({ resumed: true });
    await grant(ada);
    expect((await resumed.next()).event).toBe('credits');
  });

  it('delivers an event published in a transaction only when it commits', async () => {
    const s = await stream(one, ada);
    await s.next((m) => m.event === 'ready');
    await expect(
      testKnex().transaction(async (trx) => {
        await publishEvent(trx, ada.id, { kind: 'approval', approvalId: randomUUID(), status: 'pending' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const approvalId = randomUUID();
    await testKnex().transaction(async (trx) => {
      await publishEvent(trx, ada.id, { kind: 'approval', approvalId, status: 'approved' });
      // not before the commit: an event committed meanwhile (outside this transaction) reaches the stream first, and
      // once it is there the uncommitted one, had it been sent, would have been too
      await publishEvent(testKnex(), ada.id, { kind: 'credits' });
      await s.next((m) => m.event === 'credits');
      expect(s.messages.filter((m) => m.event === 'approval')).toHaveLength(0);
    });
    const delivered = await s.next((m) => m.event === 'approval');
    expect(delivered.data).toMatchObject({ approvalId, status: 'approved' });
  });

  it('publishes approval created and decided, content added and the credit charge from the approval activities', async () => {
    const storage = createStorage(config);
    const activities = createApprovalActivities({ knex: testKnex(), config, storage, logger });
    const [project] = await testKnex()('projects').insert({ workspace_id: ada.id, name: 'Live' }).returning<{ id: string }[]>('id');
    const approvalId = randomUUID();
    const reservation = await checkAndReserve(testKnex(), { workspaceId: ada.id, contentType: 'image', idempotencyKey: `test:${approvalId}` });
    const s = await stream(one, ada);
    await s.next((m) => m.event === 'ready');

    const files = [`pending/${approvalId}/original.jpg`, `pending/${approvalId}/preview.jpg`];
    for (const path of files) await storage.objects.put('images', path, Buffer.from(path));
    const item: NewPendingApproval = {
      approvalId,
      workspaceId: ada.id,
      projectId: project.id,
      fileName: 'edit.jpg',
      aspectRatio: '1:1',
      original: { bucket: 'images', path: files[0] },
      watermarked: { bucket: 'images', path: files[1] },
      thumbnailPath: null,
      reservationId: reservation.id,
      cost: 1,
      sourceJobId: null,
      metadata: { kind: 'image', originalPrompt: 'dusk', refinedPrompt: 'dusk', baseImageUrl: null, format: 'jpeg', width: 10, height: 10, fileSize: 10, mime: 'image/jpeg', upscaled: false },
    } as unknown as NewPendingApproval;
    await activities.createPendingApproval(item);
    // a retried activity announces nothing twice
    await activities.createPendingApproval(item);
    expect((await s.next((m) => m.event === 'approval')).data).toMatchObject({ approvalId, status: 'pending', contentType: 'image', projectId: project.id });

    const { contentId } = await activities.approvePendingItem({ approvalId });
    expect((await s.next((m) => m.event === 'credits')).data.kind).toBe('credits');
    expect((await s.next((m) => m.event === 'approval')).data).toMatchObject({ approvalId, status: 'approved' });
    expect((await s.next((m) => m.event === 'content')).data).toMatchObject({ change: 'added', contentKind: 'image', projectId: project.id, itemId: contentId });
    expect(s.messages.filter((m) => m.event === 'approval' && m.data.status === 'pending')).toHaveLength(1);
  });

  it('publishes content added and removed from a render upload, a library delete and a project delete', async () => {
    const s = await stream(one, ada);
    await s.next((m) => m.event === 'ready');
    const base = one.server.baseUrl;
    const project = await request<{ project: { id: string } }>(base, '/api/projects', { token: ada.token, json: { name: 'Content events' } });
    const projectId = project.body.project.id;
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(await renderJpeg(320, 180))], { type: 'image/jpeg' }), 'small.jpg');
    const upload = await request<{ render: { data: { id: string } } }>(base, '/api/upload/renders', { method: 'POST', body: form, token: ada.token });
    const renderId = upload.body.render.data.id;
    expect((await s.next((m) => m.event === 'content')).data).toMatchObject({ change: 'added', contentKind: 'render', projectId, itemId: renderId });

    expect((await request(base, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'DELETE', token: ada.token })).status).toBe(200);
    expect((await s.next((m) => m.event === 'content')).data).toMatchObject({ change: 'removed', contentKind: 'render', projectId, itemId: renderId });

    expect((await request(base, `/api/projects/${projectId}`, { method: 'DELETE', token: ada.token })).status).toBe(200);
    expect((await s.next((m) => m.event === 'content')).data).toMatchObject({ change: 'removed', contentKind: 'project', projectId });
  });

  it('sends a heartbeat comment on a quiet stream', async () => {
    const quick = await startInstance({ heartbeatMs: 50 });
    try {
      const s = await openEventStream(quick.server.baseUrl, { token: ada.token });
      await waitFor(() => s.comments.filter((c) => c === 'heartbeat').length >= 2, 3000);
      s.close();
    } finally {
      await quick.hub.close();
      await quick.server.close();
    }
  });

  it('lets go of a closed stream quietly, and of the LISTEN connection with the last one', async () => {
    const quiet = await startInstance();
    try {
      const a = await openEventStream(quiet.server.baseUrl, { token: ada.token });
      const b = await openEventStream(quiet.server.baseUrl, { token: bob.token });
      await a.next((m) => m.event === 'ready');
      await b.next((m) => m.event === 'ready');
      expect(quiet.hub.clientCount()).toBe(2);
      a.close();
      await waitFor(() => quiet.hub.clientCount() === 1);
      b.close();
      await waitFor(() => quiet.hub.clientCount() === 0);
      await waitFor(async () => (await listenerConnections(quiet)) === 0);
      expect(quiet.errors).toEqual([]);
    } finally {
      await quiet.hub.close();
      await quiet.server.close();
    }
  });

  it('ends its streams when the LISTEN connection breaks, and the reconnect replays what happened meanwhile', async () => {
    const s = await stream(one, ada);
    await s.next((m) => m.event === 'ready');
    await grant(ada);
    const last = await s.next((m) => m.event === 'credits');
    await testKnex().raw('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [one.name]);
    await s.ended;
    await grant(ada, 2);
    const again = await stream(one, ada, last.id ?? undefined);
    expect((await again.next()).event).toBe('credits');
    expect((await again.next()).event).toBe('ready');
  });

  it('ends every stream when the hub closes (API shutdown)', async () => {
    const closing = await startInstance();
    const s = await openEventStream(closing.server.baseUrl, { token: ada.token });
    await s.next((m) => m.event === 'ready');
    await closing.hub.close();
    await s.ended;
    await closing.server.close();
    expect(closing.errors).toEqual([]);
  });
});
