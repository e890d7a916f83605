/**
 * Comment threads on items (issue 42 item 1, DESIGN.md "Review"), through the API as the app calls it, in a team
 * workspace with an owner, an admin, a member, a viewer and an outsider:
 * - a viewer opens a pinned thread on a render, a member replies mentioning them, everyone looking gets it live;
 * - pins in fractions (point, rectangle, time on clips and videos only), text up to 5,000 characters, stored and
 *   answered as text whatever it holds (HTML, script), control characters refused;
 * - edit: the author only; delete: the author or an admin (the opening comment takes its thread); resolve and reopen:
 *   the thread's author or a member and up; a reply reopens;
 * - a non-member and another workspace's item: 404 with nothing written;
 * - threads go with their item (library delete, project delete) and are kept in the data export.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { COMMENT_MAX_CHARS, COMMENT_MSG } from '../../domain/comments';
import { collectUserRows } from '../../services/accounts/userData';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, inWorkspace, type TeamWithRoles } from '../support/workspaces';
import { pngBytes } from '../projects/fixtures';
import type { TestUser } from '../support/accounts';

let knex: Knex;
let server: TestServer;
let team: TeamWithRoles;
let projectId: string;
let renderId: string;
const streams: OpenedEventStream[] = [];

interface Thread {
  id: string;
  itemKind: string;
  itemId: string;
  pin: Record<string, number> | null;
  resolved: boolean;
  resolvedBy: { userId: string; name: string } | null;
  comments: Array<{ id: string; body: string; author: { userId: string; name: string } | null; mentions: Array<{ userId: string; name: string }>; editedAt: string | null }>;
}

const call = (user: TestUser, path: string, init: { method?: string; json?: unknown } = {}) =>
  request<{ success: boolean; thread: Thread; threads: Thread[]; error: string; code: string; item: { kind: string; id: string } }>(server.baseUrl, path, {
    ...init,
    token: user.token,
    headers: inWorkspace(team.id),
  });
const openThread = (user: TestUser, itemId: string, json: unknown) => call(user, `/api/content/${itemId}/comments`, { json });
const threadsOf = (user: TestUser, itemId: string) => call(user, `/api/content/${itemId}/comments`);
const reply = (user: TestUser, threadId: string, body: string) => call(user, `/api/comments/threads/${threadId}/replies`, { json: { body } });
const resolve = (user: TestUser, threadId: string, resolved = true) => call(user, `/api/comments/threads/${threadId}/${resolved ? 'resolve' : 'reopen'}`, { method: 'POST' });

async function uploadRender(user: TestUser, project: string, seed: number): Promise<string> {
  const form = new FormData();
  form.append('projectId', project);
  form.append('file', new Blob([new Uint8Array(await pngBytes(64, 36, seed))], { type: 'image/png' }), `render-${seed}.png`);
  const res = await request<{ render: { data: { id: string } } }>(server.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect(res.status).toBe(200);
  return res.body.render.data.id;
}

async function counts(): Promise<{ threads: number; comments: number }> {
  const [t] = (await knex('comment_threads').where({ workspace_id: team.id }).count({ n: '*' })) as Array<{ n: string }>;
  const [c] = (await knex('comments').where({ workspace_id: team.id }).count({ n: '*' })) as Array<{ n: string }>;
  return { threads: Number(t.n), comments: Number(c.n) };
}

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger, eventStreamHeartbeatMs: 60_000 }));
  team = await createTeamWithRoles(server.baseUrl, { name: 'Harbour Team' });
  const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: 'Quay' } });
  expect(project.status).toBe(201);
  projectId = project.body.project.id;
  renderId = await uploadRender(team.member, projectId, 1);
}, 120_000);

afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

describe('threads on a render', () => {
  it('a viewer opens a pinned thread, a member replies mentioning them, and both are read back in order with names and mentions', async () => {
    const opened = await openThread(team.viewer, renderId, { body: 'The balcony rail looks bent here', pin: { x: 0.25, y: 0.5, w: 0.2, h: 0.1 } });
    expect(opened.status).toBe(201);
    expect(opened.body.thread).toMatchObject({ itemKind: 'render', itemId: renderId, pin: { x: 0.25, y: 0.5, w: 0.2, h: 0.1 }, resolved: false });
    const viewerName = opened.body.thread.comments[0].author?.name as string;
    expect(opened.body.thread.comments[0].author?.userId).toBe(team.viewer.id);

    const answered = await reply(team.member, opened.body.thread.id, `@${viewerName} agreed, I will ask for a fix. See https://example.com/rail.`);
    expect(answered.status).toBe(201);
    const list = await threadsOf(team.owner, renderId);
    expect(list.status).toBe(200);
    expect(list.body.item).toEqual({ kind: 'render', id: renderId });
    const thread = list.body.threads.find((t) => t.id === opened.body.thread.id) as Thread;
    expect(thread.comments.map((c) => c.author?.userId)).toEqual([team.viewer.id, team.member.id]);
    expect(thread.comments[1].mentions).toEqual([{ userId: team.viewer.id, name: viewerName }]);
    expect(thread.comments[0].mentions).toEqual([]);
  });

  it('everyone with the workspace open hears of a new thread and a reply (SSE)', async () => {
    const watcher = await openEventStream(server.baseUrl, { token: team.admin.token, path: `/api/events?workspaceId=${team.id}` });
    streams.push(watcher);
    expect(watcher.status).toBe(200);
    await watcher.next((m) => m.event === 'ready');
    const opened = await openThread(team.member, renderId, { body: 'Sky is too saturated' });
    const created = await watcher.next((m) => m.event === 'comments');
    expect(created.data).toMatchObject({ kind: 'comments', itemId: renderId, threadId: opened.body.thread.id, change: 'created' });
    await reply(team.viewer, opened.body.thread.id, 'Yes');
    expect((await watcher.next((m) => m.event === 'comments')).data).toMatchObject({ threadId: opened.body.thread.id, change: 'updated' });
  });

  it('pins: points, rectangles inside the picture, times only on clips and videos; anything else is a 400 with nothing written', async () => {
    const before = await counts();
    const bad: Array<[unknown, string]> = [
      [{ x: 1.2, y: 0.5 }, COMMENT_MSG.pinInvalid],
      [{ x: 0.5 }, COMMENT_MSG.pinInvalid],
      [{ x: 0.8, y: 0.5, w: 0.3, h: 0.1 }, COMMENT_MSG.pinInvalid],
      [{ x: 0.1, y: 0.1, w: 0, h: 0.1 }, COMMENT_MSG.pinInvalid],
      [{ w: 0.2, h: 0.2 }, COMMENT_MSG.pinInvalid],
      [{}, COMMENT_MSG.pinInvalid],
      [{ t: 3 }, COMMENT_MSG.timePinOnPicture],
    ];
    for (const [pin, message] of bad) {
      const res = await openThread(team.member, renderId, { body: 'Pinned', pin });
      expect([res.status, res.body.error]).toEqual([400, message]);
    }
    const unknownKey = await openThread(team.member, renderId, { body: 'Pinned', pin: { x: 0.1, y: 0.1, z: 1 } });
    expect(unknownKey.status).toBe(400);
    expect(await counts()).toEqual(before);

    // a pending clip takes a time, alone or with a point; numbers are kept to what a screen shows
    const clip = await insertPendingApproval(knex, { userId: team.id, projectId, contentType: 'clip' });
    const timed = await openThread(team.member, clip.id, { body: 'Camera shakes', pin: { t: 2.50049 } });
    expect([timed.status, timed.body.thread.pin, timed.body.thread.itemKind]).toEqual([201, { t: 2.5 }, 'approval']);
    const both = await openThread(team.member, clip.id, { body: 'This corner', pin: { x: 0.123456, y: 0.9, t: 1 } });
    expect(both.body.thread.pin).toEqual({ x: 0.1235, y: 0.9, t: 1 });
    const tooLate = await openThread(team.member, clip.id, { body: 'Late', pin: { t: 99_999 } });
    expect([tooLate.status, tooLate.body.error]).toEqual([400, COMMENT_MSG.pinInvalid]);
  });

  it('text: required, at most 5,000 characters (an emoji is one), kept as text whatever it holds; control characters refused', async () => {
    const before = await counts();
    for (const body of ['', '   ', 'x'.repeat(COMMENT_MAX_CHARS + 1)]) {
      const res = await openThread(team.member, renderId, { body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(body.trim() ? COMMENT_MSG.bodyTooLong : COMMENT_MSG.bodyRequired);
    }
    const control = await openThread(team.member, renderId, { body: 'bell \u0007' });
    expect(control.status).toBe(400);
    expect(await counts()).toEqual(before);

    const emoji = await openThread(team.member, renderId, { body: '🏠'.repeat(COMMENT_MAX_CHARS) });
    expect(emoji.status).toBe(201);
    const xss = '<img src=x onerror="alert(1)"><script>alert(2)</script> [a](javascript:alert(3))';
    const stored = await openThread(team.member, renderId, { body: xss });
    expect(stored.status).toBe(201);
    const read = await threadsOf(team.viewer, renderId);
    expect(read.body.threads.find((t) => t.id === stored.body.thread.id)?.comments[0].body).toBe(xss);
    expect(read.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('edit: the author only, marked edited; others get 403 and the text stays', async () => {
    const opened = await openThread(team.member, renderId, { body: 'Frist draft' });
    const commentId = opened.body.thread.comments[0].id;
    for (const other of [team.owner, team.admin, team.viewer]) {
      const res = await call(other, `/api/comments/${commentId}`, { method: 'PATCH', json: { body: 'Hijacked' } });
      expect([res.status, res.body.code, res.body.error]).toEqual([403, 'COMMENT_NOT_YOURS', COMMENT_MSG.notYours]);
    }
    const edited = await call(team.member, `/api/comments/${commentId}`, { method: 'PATCH', json: { body: 'First draft' } });
    expect(edited.status).toBe(200);
    expect(edited.body.thread.comments[0]).toMatchObject({ body: 'First draft' });
    expect(edited.body.thread.comments[0].editedAt).not.toBeNull();
  });

  it('delete: the author or an admin; a reply alone, the opening comment with its thread', async () => {
    const opened = await openThread(team.viewer, renderId, { body: 'Remove the car' });
    const replied = await reply(team.member, opened.body.thread.id, 'Which car?');
    const replyId = replied.body.thread.comments[1].id;
    // a member may not delete the viewer's comment; the viewer may not delete the member's
    expect((await call(team.member, `/api/comments/${opened.body.thread.comments[0].id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await call(team.viewer, `/api/comments/${replyId}`, { method: 'DELETE' })).body.error).toBe(COMMENT_MSG.deleteNotAllowed);
    const own = await call(team.member, `/api/comments/${replyId}`, { method: 'DELETE' });
    expect(own.status).toBe(200);
    expect(own.body.thread.comments.map((c) => c.id)).toEqual([opened.body.thread.comments[0].id]);

    await reply(team.member, opened.body.thread.id, 'Again');
    const byAdmin = await call(team.admin, `/api/comments/${opened.body.thread.comments[0].id}`, { method: 'DELETE' });
    expect([byAdmin.status, byAdmin.body.thread]).toEqual([200, null]);
    expect(await knex('comment_threads').where({ id: opened.body.thread.id })).toHaveLength(0);
    expect(await knex('comments').where({ thread_id: opened.body.thread.id })).toHaveLength(0);
  });

  it("resolve and reopen: the thread's author or a member and up; a reply reopens; resolving twice changes nothing", async () => {
    const byMember = await openThread(team.member, renderId, { body: 'Add people on the terrace' });
    const threadId = byMember.body.thread.id;
    const refused = await resolve(team.viewer, threadId);
    expect([refused.status, refused.body.error]).toEqual([403, COMMENT_MSG.resolveNotAllowed]);
    const resolved = await resolve(team.admin, threadId);
    expect(resolved.body.thread).toMatchObject({ resolved: true, resolvedBy: { userId: team.admin.id } });
    expect((await resolve(team.admin, threadId)).body.thread.resolved).toBe(true);
    const reopened = await reply(team.viewer, threadId, 'Not done yet');
    expect(reopened.body.thread.resolved).toBe(false);

    const byViewer = await openThread(team.viewer, renderId, { body: 'Mine to close' });
    expect((await resolve(team.viewer, byViewer.body.thread.id)).body.thread.resolved).toBe(true);
    expect((await resolve(team.viewer, byViewer.body.thread.id, false)).body.thread.resolved).toBe(false);
  });
});

describe('who may', () => {
  it('a non-member gets 404 on the threads, a new thread, a reply, an edit, a delete and a resolve, and nothing is written', async () => {
    const opened = await openThread(team.member, renderId, { body: 'Members only' });
    const threadId = opened.body.thread.id;
    const commentId = opened.body.thread.comments[0].id;
    const before = await counts();
    const o = team.outsider;
    const answers = await Promise.all([
      threadsOf(o, renderId),
      openThread(o, renderId, { body: 'Hi' }),
      reply(o, threadId, 'Hi'),
      call(o, `/api/comments/${commentId}`, { method: 'PATCH', json: { body: 'Hi' } }),
      call(o, `/api/comments/${commentId}`, { method: 'DELETE' }),
      resolve(o, threadId),
    ]);
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(await counts()).toEqual(before);
  });

  it("another workspace's item is not found from this one, and an unknown id is 404", async () => {
    const ownProject = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: team.outsider.token, json: { name: 'Elsewhere' } });
    const elsewhere = await uploadRender(team.outsider, ownProject.body.project.id, 2);
    const res = await openThread(team.member, elsewhere, { body: 'Peek' });
    expect([res.status, res.body.error]).toEqual([404, COMMENT_MSG.itemNotFound]);
    expect((await threadsOf(team.member, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await threadsOf(team.member, 'not-an-id')).status).toBe(404);
  });
});

describe('threads go with their item and are kept in the export', () => {
  it('deleting a render from the library removes its threads and comments; deleting the project removes the rest', async () => {
    const doomed = await uploadRender(team.member, projectId, 3);
    const opened = await openThread(team.member, doomed, { body: 'Soon gone', pin: { x: 0.5, y: 0.5 } });
    await reply(team.viewer, opened.body.thread.id, 'Bye');
    const removed = await request(server.baseUrl, `/api/projects/${projectId}/content/renders/${doomed}`, { method: 'DELETE', token: team.member.token });
    expect(removed.status).toBe(200);
    expect(await knex('comment_threads').where({ item_id: doomed })).toHaveLength(0);
    expect(await knex('comments').where({ thread_id: opened.body.thread.id })).toHaveLength(0);
    expect((await counts()).threads).toBeGreaterThan(0);
  });

  it("the personal workspace's threads are in its owner's export, and what they wrote in a team's too", async () => {
    const me = team.member;
    const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: me.token, json: { name: 'Mine' } });
    const mine = await uploadRender(me, project.body.project.id, 4);
    const own = await request<{ thread: Thread }>(server.baseUrl, `/api/content/${mine}/comments`, { token: me.token, json: { body: 'Note to self' } });
    expect(own.status).toBe(201);
    const rows = await collectUserRows(knex, me.id);
    expect(rows.items.comment_threads.map((t) => t.id)).toEqual([own.body.thread.id]);
    expect(rows.items.comments.map((c) => c.body)).toEqual(['Note to self']);
    expect(rows.items.comments_in_other_workspaces.length).toBeGreaterThan(0);
    expect(rows.items.comments_in_other_workspaces.every((c) => c.created_by === me.id && c.workspace_id === team.id)).toBe(true);
  });

  it('deleting the project removes every thread of its items', async () => {
    expect((await counts()).threads).toBeGreaterThan(0);
    const res = await request(server.baseUrl, `/api/projects/${projectId}`, { method: 'DELETE', token: team.owner.token });
    expect(res.status).toBe(200);
    expect(await counts()).toEqual({ threads: 0, comments: 0 });
  });
});
