/**
 * What an item is compared with (issue 42 item 3): GET /api/content/{id}/compare answers the item's picture and the
 * versions before it, nearest first, the render the chain began with marked as its source. A pending item is shown
 * by its watermarked preview only, and finds its source from what its generation recorded; another workspace's item
 * is not found.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { ApprovalMetadata } from '../../domain/approvals';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { clipMetadata, imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request, serve, type TestServer } from '../support/http';

const config = loadConfig();
let server: TestServer;
let user: TestUser;
let projectId: string;
let renderId: string;
let renderUrl: string;

interface Media {
  kind: string;
  id: string;
  name: string;
  media: 'image' | 'video';
  url: string | null;
}
interface Answer {
  item: Media;
  versions: Array<Media & { relation: string; depth: number }>;
}

const compare = (id: string, as: TestUser = user) => request<Answer & { error?: string }>(server.baseUrl, `/api/content/${id}/compare`, { token: as.token });

/** An AI image or clip of this test's user (approved unless `pendingOnly`). */
const generated = (metadata: ApprovalMetadata, fileName: string, pendingOnly = false) => storeGeneratedItem({ workspaceId: user.id, projectId, metadata, fileName, pendingOnly });

beforeAll(async () => {
  server = await serve(createApp({ config, knex: testKnex(), logger }));
  user = await createTestUser(server.baseUrl);
  await testKnex()('profiles').where({ id: user.id }).update({ credits: 30 });
  projectId = (await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Compare' } })).body.project.id;
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 320, height: 180, channels: 3, background: { r: 200, g: 180, b: 150 } } }).png().toBuffer())], { type: 'image/png' }), 'facade.png');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(server.baseUrl, '/api/upload/renders', { token: user.token, body: form });
  renderId = upload.body.render.data.id;
  renderUrl = upload.body.render.data.file_url;
}, 60_000);

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

it('a clip of an AI image of a render: the image, then the render as the source, nearest first, with pictures', async () => {
  const image = await generated(imageMetadata(renderUrl), 'dusk.png');
  const clip = await generated(clipMetadata({ imageId: image.contentId as string }), 'dusk-clip.mp4');
  const res = await compare(clip.contentId as string);
  expect(res.status).toBe(200);
  expect(res.body.item).toMatchObject({ kind: 'clip', id: clip.contentId, media: 'video', name: 'dusk-clip.mp4' });
  expect(res.body.versions.map((v) => [v.kind, v.id, v.relation, v.depth, v.media])).toEqual([
    ['image', image.contentId, 'earlier', 1, 'image'],
    ['render', renderId, 'source', 2, 'image'],
  ]);
  for (const v of res.body.versions) {
    const url = v.url as string;
    const file = await fetch(url.startsWith('http') ? url : `${server.baseUrl}${url}`);
    expect([v.kind, file.status]).toEqual([v.kind, 200]);
  }
  // the approval's id finds the saved item
  expect((await compare(clip.approvalId)).body.item).toMatchObject({ kind: 'clip', id: clip.contentId });
});

it('a pending image is shown by its watermarked preview and compared with the render its edit started from', async () => {
  const pending = await generated(imageMetadata(`${renderUrl}?sig=abc`), 'pending.png', true);
  const res = await compare(pending.approvalId);
  expect(res.status).toBe(200);
  expect(res.body.item).toMatchObject({ kind: 'approval', id: pending.approvalId, media: 'image' });
  expect(res.body.item.url).toContain(`pending/${pending.approvalId}/preview.png`);
  expect(res.body.item.url).not.toContain('original');
  expect(res.body.versions.map((v) => [v.kind, v.id, v.relation])).toEqual([['render', renderId, 'source']]);
});

it('a pending clip of a render compares with that render; a render alone has nothing before it', async () => {
  const pending = await generated(clipMetadata({ renderId }), 'pending-clip.mp4', true);
  expect((await compare(pending.approvalId)).body.versions.map((v) => [v.kind, v.id])).toEqual([['render', renderId]]);
  const alone = await compare(renderId);
  expect([alone.status, alone.body.item.kind, alone.body.versions]).toEqual([200, 'render', []]);
});

it("another workspace's item and an unknown id are 404", async () => {
  const stranger = await createTestUser(server.baseUrl);
  expect((await compare(renderId, stranger)).status).toBe(404);
  expect((await compare(randomUUID())).status).toBe(404);
  expect((await compare('nope')).status).toBe(404);
});
