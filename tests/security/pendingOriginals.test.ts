/**
 * Pay on approval is absolute (DESIGN.md, Credits): no unwatermarked original of an item that is not approved
 * (pending, rejected or expired) leaves the server, by any route, and after the approval it is served as before.
 * Each route is asked for a not approved item's original (and the thumbnail made from it) and must not answer 200.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import Koa from 'koa';
import { errorHandler } from '../../api/middleware/errors';
import { filesRouter } from '../../api/routes/files';
import { loadConfig, type AppConfig } from '../../config/env';
import { createStorage, UrlSigner } from '../../storage';
import { apiFileLink } from '../support/objectStorage';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { insertPendingApproval } from '../support/credits';
import { readZip, sha256, waitForExport } from '../accountData/support/accountDataApp';
import type { TestUser } from '../support/accounts';
import { createDraft, unlock } from '../enhanceRenders/support';
import { buyCredits, decide, generateImage, seedPendingImage, startHarness, userWithRender, type Harness, type SeededItem } from '../imageEdit/harness';

let h: Harness;
let scratch: string;

beforeAll(async () => {
  h = await startHarness('pending-originals', { accountData: true });
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'pending-originals-'));
});

afterAll(async () => {
  await h?.close();
  await fs.rm(scratch, { recursive: true, force: true });
  await closeTestKnex();
});

type Unapproved = 'pending' | 'rejected' | 'expired';

interface Item extends SeededItem {
  user: TestUser;
  projectId: string;
  originalBytes: Buffer;
  thumbnailBytes: Buffer;
}

async function read(bucket: 'images' | 'videos', file: string): Promise<Buffer> {
  return buffer(await h.storage.objects.read(bucket, file));
}

/** A pending image item of a new user, then rejected or expired when asked. */
async function itemIn(state: Unapproved | 'approved'): Promise<Item> {
  const { user, projectId } = await userWithRender(h.baseUrl);
  const seeded = await seedPendingImage(h, user.id, projectId, state === 'expired' ? { windowMs: 300 } : {});
  const originalBytes = await read('images', seeded.files.original);
  const thumbnailBytes = await read('images', seeded.files.thumbnail);
  if (state === 'rejected') {
    await buyCredits(h.knex, user.id);
    expect((await decide(h, user, 'reject', seeded.approvalId)).status).toBe(200);
  }
  if (state === 'approved') expect((await decide(h, user, 'approve', seeded.approvalId)).status).toBe(200);
  if (state === 'expired') expect(await h.client.workflow.getHandle(seeded.workflowId).result()).toBe('expired');
  if (state === 'rejected' || state === 'expired') {
    // the decision removed the files; a removal that failed would leave them behind: put them back, so only the rule
    // (not a missing file) stands between the link and the bytes
    expect(await h.storage.objects.stat('images', seeded.files.original)).toBeNull();
    await h.storage.objects.put('images', seeded.files.original, originalBytes);
    await h.storage.objects.put('images', seeded.files.thumbnail, thumbnailBytes);
  }
  const row = await h.knex('pending_approvals').where({ id: seeded.approvalId }).first('status');
  expect(row.status).toBe(state);
  return { ...seeded, user, projectId, originalBytes, thumbnailBytes };
}

function link(file: string): string {
  return new URL(apiFileLink(h.config, 'images', file), h.baseUrl).toString();
}

/** Every file link anywhere in an answer, as `<bucket>/<path>`. */
function linkedFiles(body: unknown): string[] {
  const found: string[] = [];
  const text = JSON.stringify(body);
  for (const m of text.matchAll(/\/api\/files\/([a-z]+)\/([^"?\\]+)/g)) found.push(`${m[1]}/${m[2]}`);
  return found;
}

async function exportZip(user: TestUser): Promise<Array<{ name: string; data: Buffer }>> {
  const started = await request(h.baseUrl, '/api/account/exports', { token: user.token, json: {} });
  expect(started.status).toBe(202);
  const { view } = await waitForExport(h.baseUrl, user);
  expect(view).toMatchObject({ status: 'completed' });
  const res = await fetch(new URL(view.downloadUrl as string, h.baseUrl));
  expect(res.status).toBe(200);
  const file = path.join(scratch, `${randomUUID()}.zip`);
  await fs.writeFile(file, Buffer.from(await res.arrayBuffer()));
  return readZip(file);
}

describe.each<Unapproved>(['pending', 'rejected', 'expired'])('the original of an item that is %s', (state) => {
  let item: Item;

  beforeAll(async () => {
    item = await itemIn(state);
  });

  it('is refused by /api/files through a signed link minted for it (GET, HEAD and a range), and so is its thumbnail', async () => {
    for (const file of [item.files.original, item.files.thumbnail]) {
      for (const init of [{}, { method: 'HEAD' }, { headers: { range: 'bytes=0-99' } }] as RequestInit[]) {
        const res = await fetch(link(file), init);
        expect(res.status).toBe(403);
        if (init.method !== 'HEAD') expect(await res.json()).toEqual({ success: false, error: 'Invalid file link', code: 'LINK_INVALID' });
      }
    }
  });

  it('is refused by /api/downloads (no download link is made for it)', async () => {
    for (const file of [item.files.original, item.files.thumbnail]) {
      const query = new URLSearchParams({ url: h.storage.urls.sign('images', file), name: 'mine.jpg' });
      const res = await fetch(new URL(`/api/downloads?${query}`, h.baseUrl), { redirect: 'manual', headers: { authorization: `Bearer ${item.user.token}` } });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'LINK_INVALID' });
    }
  });

  it('is not linked by the approvals list (the pending item shows its watermarked preview, original_file_url null)', async () => {
    const res = await request(h.baseUrl, '/api/approvals/list', { token: item.user.token });
    expect(res.status).toBe(200);
    const files = linkedFiles(res.body);
    expect(files).not.toContain(`images/${item.files.original}`);
    expect(files).not.toContain(`images/${item.files.thumbnail}`);
    if (state === 'pending') {
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toHaveProperty('original_file_url', null);
      const preview = await fetch(new URL(res.body.data[0].watermarked_file_url, h.baseUrl));
      expect(preview.status).toBe(200);
      expect(Buffer.from(await preview.arrayBuffer()).equals(await read('images', item.files.watermarked))).toBe(true);
    } else {
      expect(res.body.data).toEqual([]);
    }
  });

  it('is in neither the library nor a lineage', async () => {
    const library = await request(h.baseUrl, `/api/projects/${item.projectId}/content?refresh=1`, { token: item.user.token });
    expect(library.status).toBe(200);
    expect(library.body.content.map((c: { type: string }) => c.type)).toEqual(['render']);
    const files = linkedFiles(library.body);
    expect(files.some((f) => f.includes(item.approvalId))).toBe(false);
    const lineage = await request(h.baseUrl, `/api/content/${item.approvalId}/lineage`, { token: item.user.token });
    expect(lineage.status).toBe(404);
  });

  it('is no source for a new generation (its link as the base image of an image edit)', async () => {
    const res = await generateImage(h.baseUrl, item.user, { baseImage: h.storage.urls.sign('images', item.files.original), projectId: item.projectId, prompt: 'copy it' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'BASE_IMAGE_NOT_FOUND' });
    expect(await h.knex('pending_approvals').where({ workspace_id: item.user.id }).count<{ count: string }[]>('id as count')).toEqual([{ count: '1' }]);
  });

  it('cannot be brought into an Enhance Renders draft (and so into a draft commit)', async () => {
    expect((await unlock(h.baseUrl, item.user)).status).toBe(200);
    const draftId = await createDraft(h.baseUrl, item.user);
    const added = await request(h.baseUrl, '/api/enhance-set/drafts/add-images', {
      token: item.user.token,
      json: { draftId, images: [{ source_type: 'uploaded', source_url: h.storage.urls.sign('images', item.files.original), name: 'mine.jpg', metadata: {} }] },
    });
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({ code: 'INVALID_SOURCE_URL' });
    const draft = await request(h.baseUrl, `/api/enhance-set/drafts/get?draftId=${draftId}`, { token: item.user.token });
    expect(draft.status).toBe(200);
    expect(linkedFiles(draft.body).some((f) => f.includes(item.approvalId))).toBe(false);
  });

  it('is not in the data export, which carries a pending item as its watermarked preview and says so', async () => {
    const entries = await exportZip(item.user);
    const hashes = entries.map((e) => sha256(e.data));
    expect(hashes).not.toContain(sha256(item.originalBytes));
    expect(hashes).not.toContain(sha256(item.thumbnailBytes));
    expect(entries.map((e) => e.name).filter((n) => n.includes(item.approvalId))).toEqual(state === 'pending' ? [`files/images/${item.files.watermarked}`] : []);
    const manifest = JSON.parse(entries.find((e) => e.name === 'manifest.json')?.data.toString('utf8') ?? 'null');
    expect(manifest.pendingItems).toMatch(/watermarked preview only/);
  });
});

describe('after the approval', () => {
  it('serves the original as before: its link, a download, the library item and the export', async () => {
    const item = await itemIn('approved');
    const row = await h.knex('pending_approvals').where({ id: item.approvalId }).first('content_id');

    const direct = await fetch(link(item.files.original));
    expect(direct.status).toBe(200);
    expect(Buffer.from(await direct.arrayBuffer()).equals(item.originalBytes)).toBe(true);
    expect((await fetch(link(item.files.thumbnail))).status).toBe(200);

    const query = new URLSearchParams({ url: h.storage.urls.sign('images', item.files.original), name: 'mine.jpg' });
    const download = await fetch(new URL(`/api/downloads?${query}`, h.baseUrl), { redirect: 'manual', headers: { authorization: `Bearer ${item.user.token}` } });
    expect(download.status).toBe(302);
    const saved = await fetch(new URL(download.headers.get('location') as string, h.baseUrl));
    expect(saved.status).toBe(200);
    expect(saved.headers.get('content-disposition')).toContain('mine.jpg');
    expect(Buffer.from(await saved.arrayBuffer()).equals(item.originalBytes)).toBe(true);

    const library = await request(h.baseUrl, `/api/projects/${item.projectId}/content?refresh=1`, { token: item.user.token });
    const saved2 = library.body.content.find((c: { data: { id: string } }) => c.data.id === row.content_id);
    expect(linkedFiles(saved2)).toContain(`images/${item.files.original}`);
    expect((await fetch(new URL(saved2.signed_url, h.baseUrl))).status).toBe(200);

    const entries = await exportZip(item.user);
    expect(entries.map((e) => sha256(e.data))).toContain(sha256(item.originalBytes));
  });
});

describe("a pending assembly's compiled video (its row exists before the approval)", () => {
  it('is refused by /api/files, left out of the export and of lineage, until the approval', async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const folder = `${user.id}/${randomUUID()}`;
    const files = { video: `${folder}/video.mp4`, preview: `${folder}/preview.mp4`, thumbnail: `${folder}/thumbnail.webp` };
    const bytes = { video: Buffer.from(`original video ${randomUUID()}`), preview: Buffer.from(`watermarked ${randomUUID()}`), thumbnail: Buffer.from(`thumb ${randomUUID()}`) };
    for (const key of ['video', 'preview', 'thumbnail'] as const) await h.storage.objects.put('videos', files[key], bytes[key]);
    const [video] = await h.knex('compiled_videos')
      .insert({
        project_id: projectId,
        workspace_id: user.id,
        file_url: `/api/files/videos/${files.video}`,
        file_name: 'Reel.mp4',
        storage_bucket: 'videos',
        storage_path: files.video,
        thumbnail_path: files.thumbnail,
        editing_data: { status: 'pending_approval', aspect_ratio: '16:9' },
      })
      .returning('id');
    const approvalId = randomUUID();
    await h.knex('pending_approvals').insert({
      id: approvalId,
      workspace_id: user.id,
      project_id: projectId,
      content_type: 'assembly',
      status: 'pending',
      file_name: 'Reel.mp4',
      original_bucket: 'videos',
      original_path: files.video,
      watermarked_bucket: 'videos',
      watermarked_path: files.preview,
      thumbnail_path: files.thumbnail,
      approval_deadline: new Date(Date.now() + 86_400_000),
      cost: 0,
      remaining_cost: 0,
      workflow_id: `approval-${approvalId}`,
      metadata: JSON.stringify({ kind: 'assembly', compiledVideoId: video.id }),
    });
    const videoLink = (file: string) => new URL(apiFileLink(h.config, 'videos', file), h.baseUrl);

    expect((await fetch(videoLink(files.video))).status).toBe(403);
    expect((await fetch(videoLink(files.thumbnail))).status).toBe(403);
    expect((await fetch(videoLink(files.preview))).status).toBe(200);
    expect((await request(h.baseUrl, `/api/content/${video.id}/lineage`, { token: user.token })).status).toBe(404);
    const entries = await exportZip(user);
    const hashes = entries.map((e) => sha256(e.data));
    expect(hashes).not.toContain(sha256(bytes.video));
    expect(hashes).not.toContain(sha256(bytes.thumbnail));
    expect(hashes).toContain(sha256(bytes.preview));

    // approved (as the approval's activity leaves it): served, in the lineage, and exported
    await h.knex('pending_approvals').where({ id: approvalId }).update({ status: 'approved', content_id: video.id });
    await h.knex('compiled_videos').where({ id: video.id }).update({ editing_data: { status: 'approved', aspect_ratio: '16:9' } });
    const served = await fetch(videoLink(files.video));
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes.video)).toBe(true);
    expect((await request(h.baseUrl, `/api/content/${video.id}/lineage`, { token: user.token })).status).toBe(200);
    expect((await exportZip(user)).map((e) => sha256(e.data))).toContain(sha256(bytes.video));
  });
});

describe('with object storage (STORAGE_BACKEND=s3), where the API presigns', () => {
  let server: TestServer;
  let config: AppConfig;

  beforeAll(async () => {
    const base = loadConfig();
    // presigning is local arithmetic: no object storage is reached by the refusals (nor by the redirects) below
    config = {
      ...base,
      storageBackend: 's3',
      s3: {
        endpoint: 'http://127.0.0.1:9',
        publicUrl: 'http://127.0.0.1:9',
        region: 'us-east-1',
        bucketPrefix: 'rs-pending-',
        accessKeyId: 'pending-originals',
        secretAccessKey: 'pending-originals-secret',
        forcePathStyle: true,
        conditionalPut: 'auto',
      },
    };
    const app = new Koa();
    app.use(errorHandler);
    app.use(filesRouter({ config, knex: testKnex() }).routes());
    server = await serve(app);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('redirects to no presigned URL for an unapproved original, from an API link or a presigned one', async () => {
    const storage = createStorage(config);
    const signer = new UrlSigner({ secret: config.signingSecret, ttlSeconds: 600 });
    const { user } = await userWithRender(h.baseUrl);
    for (const status of ['pending', 'rejected', 'expired'] as const) {
      const { id } = await insertPendingApproval(testKnex(), { userId: user.id, status });
      const original = `pending/${id}/original`;
      const preview = `pending/${id}/preview`;
      const apiLink = (file: string) => new URL(`${signer.sign('images', file)}`, server.baseUrl);
      const download = (file: string) => new URL(`/api/downloads?${new URLSearchParams({ url: storage.urls.sign('images', file), name: 'x.jpg' })}`, server.baseUrl);

      const refused = await fetch(apiLink(original), { redirect: 'manual' });
      expect([status, refused.status, refused.headers.get('location')]).toEqual([status, 403, null]);
      const refusedDownload = await fetch(download(original), { redirect: 'manual' });
      expect([status, refusedDownload.status, refusedDownload.headers.get('location')]).toEqual([status, 403, null]);

      // the watermarked preview goes on to the object storage
      const served = await fetch(apiLink(preview), { redirect: 'manual' });
      expect(served.status).toBe(302);
      expect(served.headers.get('location')).toContain(`rs-pending-images/${preview}`);
      const servedDownload = await fetch(download(preview), { redirect: 'manual' });
      expect(servedDownload.status).toBe(302);
      expect(servedDownload.headers.get('location')).toContain(`rs-pending-images/${preview}`);
    }
  });
});
