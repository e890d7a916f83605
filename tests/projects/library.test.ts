import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { fileRefOfLink, runBackend, runStorage } from '../support/objectStorage';
import { UrlSigner } from '../../storage';
import { createProject, fetchBytes, newUser, pngBytes, startProjectsApp, uploadRender } from './fixtures';
import type { AppConfig } from '../../config/env';

let server: TestServer;
let config: AppConfig;
let knex: Knex;
let user: TestUser;

interface Item {
  type: string;
  source: string;
  data: { id: string; name: string; created_at: string; aspect_ratio: string | null; thumbnail_url: string | null; file_name: string };
  signed_url: string | null;
}

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  config = app.config;
  knex = testKnex();
  user = await newUser(server.baseUrl);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

async function content(projectId: string, query = '?refresh=1', as: TestUser = user): Promise<{ status: number; items: Item[] }> {
  const res = await request<{ success: boolean; content: Item[] }>(server.baseUrl, `/api/projects/${projectId}/content${query}`, { token: as.token });
  return { status: res.status, items: res.body.content };
}

const base = Date.UTC(2026, 0, 1);
/** Rows for a content table, `count` of them, the i-th created at base + i*step + offset seconds. */
function rows(table: string, projectId: string, count: number, offset: number, extra: (i: number) => Record<string, unknown> = () => ({})): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    project_id: projectId,
    workspace_id: user.id,
    file_url: `/api/files/${table === 'compiled_videos' ? 'videos' : table === 'generated_content' ? 'images' : table}/${user.id}/${table}-${i}.bin`,
    file_name: `${table}-${i}`,
    created_at: new Date(base + (i * 5 + offset) * 1000),
    ...extra(i),
  }));
}

describe('GET /api/projects/:id/content', () => {
  it('merges every table newest first, 500 per table, approved compiled videos only, cut to the 1000 newest', async () => {
    const project = await createProject(server.baseUrl, user, 'Big library');
    const p = project.id;
    await knex.batchInsert('renders', rows('renders', p, 650, 0), 200);
    await knex.batchInsert('images', rows('images', p, 300, 1, (i) => ({ aspect_ratio: i % 2 ? '1:1' : '16:9' })), 200);
    await knex.batchInsert('clips', rows('clips', p, 300, 2, () => ({ analysis_data: { aspectRatio: '9:16' } })), 200);
    await knex.batchInsert('compiled_videos', rows('compiled_videos', p, 240, 3, (i) => ({ editing_data: { status: i % 6 === 0 ? 'draft' : 'approved', aspect_ratio: '16:9' } })), 200);
    await knex.batchInsert('generated_content', rows('generated_content', p, 100, 4, () => ({ content_type: 'image' })), 200);

    const { status, items } = await content(p);
    expect(status).toBe(200);
    expect(items).toHaveLength(1000);
    const times = items.map((i) => Date.parse(i.data.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // the expected answer, computed independently: newest 500 per table, merged, newest 1000
    const candidates = [
      ...Array.from({ length: 650 }, (_, i) => ({ t: i * 5, type: 'render' })).slice(150),
      ...Array.from({ length: 300 }, (_, i) => ({ t: i * 5 + 1, type: 'ai_image' })),
      ...Array.from({ length: 300 }, (_, i) => ({ t: i * 5 + 2, type: 'clip' })),
      ...Array.from({ length: 240 }, (_, i) => ({ t: i * 5 + 3, type: 'compiled_video', draft: i % 6 === 0 })).filter((v) => !v.draft),
      ...Array.from({ length: 100 }, (_, i) => ({ t: i * 5 + 4, type: 'generated_image' })),
    ]
      .sort((a, b) => b.t - a.t)
      .slice(0, 1000);
    expect(items.map((i) => `${i.type}@${(Date.parse(i.data.created_at) - base) / 1000}`)).toEqual(candidates.map((c) => `${c.type}@${c.t}`));
    expect(items.filter((i) => i.type === 'render').length).toBeLessThanOrEqual(500);
    expect(items.some((i) => i.type === 'compiled_video' && i.data.name.endsWith('-0'))).toBe(false);

    const clip = items.find((i) => i.type === 'clip');
    expect(clip?.data.aspect_ratio).toBe('9:16');
    expect(fileRefOfLink(clip?.signed_url as string)).toEqual({ bucket: 'clips', path: `${user.id}/clips-299.bin` });
    if (runBackend() === 'local') expect(clip?.signed_url).toMatch(/^\/api\/files\/clips\/.+\?expires=\d+&sig=/);
    else expect(clip?.signed_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/rs-test-\d+-clips\/.+\?X-Amz-Algorithm=AWS4-HMAC-SHA256&.*X-Amz-Signature=[0-9a-f]{64}/);
  });

  it('answers items as {type, data, signed_url} with a working signed link for an uploaded render', async () => {
    const project = await createProject(server.baseUrl, user, 'Shape');
    const bytes = await pngBytes(160, 90, 21);
    await uploadRender(server.baseUrl, user, project.id, { bytes, fileName: 'shape.png' });
    const { items } = await content(project.id, '');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'render', source: 'renders', data: { name: 'shape.png', aspect_ratio: '16:9' } });
    const file = await fetchBytes(server.baseUrl, items[0].signed_url as string);
    expect(file.bytes.equals(bytes)).toBe(true);
  });

  it('reuses a listing for a few seconds, and ?refresh=1 or ?bust= reads afresh', async () => {
    const project = await createProject(server.baseUrl, user, 'Cache');
    expect((await content(project.id, '')).items).toHaveLength(0);
    // written behind the API's back, as another process (an approval worker) would
    await knex('images').insert(rows('images', project.id, 1, 0));
    expect((await content(project.id, '')).items).toHaveLength(0);
    expect((await content(project.id, `?bust=${Date.now()}`)).items).toHaveLength(1);
    await knex('clips').insert(rows('clips', project.id, 1, 0));
    expect((await content(project.id, '?refresh=1')).items).toHaveLength(2);
  });

  it('compresses the listing with gzip for clients that accept it', async () => {
    const project = await createProject(server.baseUrl, user, 'Gzip');
    await knex.batchInsert('images', rows('images', project.id, 50, 0), 50);
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      http
        .get(`${server.baseUrl}/api/projects/${project.id}/content`, { headers: { authorization: `Bearer ${user.token}`, 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
    expect(raw.encoding).toBe('gzip');
    const listing = JSON.parse(gunzipSync(raw.body).toString('utf8')) as { content: Item[] };
    expect(listing.content).toHaveLength(50);
    const plain = await new Promise<string | undefined>((resolve, reject) => {
      http
        .get(`${server.baseUrl}/api/projects/${project.id}/content`, { headers: { authorization: `Bearer ${user.token}`, 'accept-encoding': 'identity' } }, (res) => {
          res.resume();
          resolve(res.headers['content-encoding']);
        })
        .on('error', reject);
    });
    expect(plain).toBeUndefined();
  });

  it("answers 404 for another user's project even when its listing is cached", async () => {
    const project = await createProject(server.baseUrl, user, 'Mine');
    expect((await content(project.id, '')).status).toBe(200);
    const stranger = await newUser(server.baseUrl);
    expect((await content(project.id, '', stranger)).status).toBe(404);
  });
});

describe('library items: delete and rename', () => {
  it('deletes a render with its file and thumbnail, and the listing shows it gone at once', async () => {
    const project = await createProject(server.baseUrl, user, 'Delete');
    const up = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(50, 50, 31), fileName: 'gone.png' });
    expect((await content(project.id, '')).items).toHaveLength(1);
    const id = up.body.render?.data.id as string;
    const res = await request(server.baseUrl, `/api/projects/${project.id}/content/renders/${id}`, { method: 'DELETE', token: user.token });
    expect(res.status).toBe(200);
    expect((await content(project.id, '')).items).toHaveLength(0);
    expect((await fetchBytes(server.baseUrl, up.body.url as string)).status).toBe(404);
    expect((await fetchBytes(server.baseUrl, up.body.processingInfo?.thumbnailUrl as string)).status).toBe(404);
    expect((await request(server.baseUrl, `/api/projects/${project.id}/content/renders/${id}`, { method: 'DELETE', token: user.token })).status).toBe(404);
  });

  it('deletes a compiled video by DELETE /api/projects/:id/compiled-videos/:videoId, removing its file', async () => {
    const project = await createProject(server.baseUrl, user, 'Videos');
    const storagePath = `${user.id}/${randomUUID()}.mp4`;
    const objects = runStorage().objects;
    await objects.put('videos', storagePath, Buffer.from('not really a video'));
    const [video] = await knex('compiled_videos')
      .insert({ project_id: project.id, workspace_id: user.id, file_url: `/api/files/videos/${storagePath}`, file_name: 'Assembled.mp4', storage_bucket: 'videos', storage_path: storagePath, editing_data: { status: 'approved', aspect_ratio: '16:9' } })
      .returning('id');
    expect((await content(project.id)).items.map((i) => i.type)).toEqual(['compiled_video']);
    const other = await newUser(server.baseUrl);
    expect((await request(server.baseUrl, `/api/projects/${project.id}/compiled-videos/${video.id}`, { method: 'DELETE', token: other.token })).status).toBe(404);
    const res = await request(server.baseUrl, `/api/projects/${project.id}/compiled-videos/${video.id}`, { method: 'DELETE', token: user.token });
    expect(res.status).toBe(200);
    expect(await objects.stat('videos', storagePath)).toBeNull();
    expect((await content(project.id)).items).toHaveLength(0);
  });

  it('renames an item (custom_name for clips), refusing a blank name', async () => {
    const project = await createProject(server.baseUrl, user, 'Rename');
    const up = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(40, 40, 41), fileName: 'old.png' });
    const id = up.body.render?.data.id as string;
    const renamed = await request<{ item: Item }>(server.baseUrl, `/api/projects/${project.id}/content/renders/${id}`, { method: 'PATCH', token: user.token, json: { name: '  Lobby at dusk ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.item.data.name).toBe('Lobby at dusk');
    expect((await content(project.id, '')).items[0].data.name).toBe('Lobby at dusk');
    const blank = await request(server.baseUrl, `/api/projects/${project.id}/content/renders/${id}`, { method: 'PATCH', token: user.token, json: { name: '  ' } });
    expect(blank.status).toBe(400);

    const [clip] = await knex('clips').insert(rows('clips', project.id, 1, 0)).returning('id');
    const clipRes = await request<{ item: Item }>(server.baseUrl, `/api/projects/${project.id}/content/clips/${clip.id}`, { method: 'PATCH', token: user.token, json: { name: 'Drone pass' } });
    expect(clipRes.body.item.data.name).toBe('Drone pass');
    expect((await knex('clips').where({ id: clip.id }).first()).custom_name).toBe('Drone pass');

    expect((await request(server.baseUrl, `/api/projects/${project.id}/content/tables/${id}`, { method: 'PATCH', token: user.token, json: { name: 'x' } })).status).toBe(400);
  });
});

describe('GET /api/files/:bucket/*path', () => {
  let url: string;
  let bytes: Buffer;

  beforeAll(async () => {
    const project = await createProject(server.baseUrl, user, 'Files');
    bytes = await pngBytes(120, 80, 51);
    const uploaded = (await uploadRender(server.baseUrl, user, project.id, { bytes, fileName: 'f.png' })).body.url as string;
    // the route's own links (what the app hands out on local disk; with object storage it redirects them to presigned ones)
    const ref = fileRefOfLink(uploaded);
    url = new UrlSigner({ secret: config.signingSecret, ttlSeconds: config.signedUrlTtlSeconds }).sign(ref!.bucket, ref!.path);
  });

  it('streams the file for a valid link, with no session needed', async () => {
    const res = await fetchBytes(server.baseUrl, url);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(bytes)).toBe(true);
  });

  it('answers 403 for a tampered path, expiry or signature, and for a missing signature', async () => {
    const u = new URL(url, server.baseUrl);
    const tamperedPath = new URL(u);
    tamperedPath.pathname = u.pathname.replace(/\.png$/, '.jpg');
    const tamperedExpiry = new URL(u);
    tamperedExpiry.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 60));
    const tamperedSig = new URL(u);
    tamperedSig.searchParams.set('sig', 'A'.repeat(43));
    const unsigned = new URL(u.pathname, server.baseUrl);
    const otherBucket = new URL(u);
    otherBucket.pathname = u.pathname.replace('/api/files/renders/', '/api/files/images/');
    for (const bad of [tamperedPath, tamperedExpiry, tamperedSig, unsigned, otherBucket]) {
      const res = await fetch(bad);
      expect(res.status).toBe(403);
    }
  });

  it('answers 403 for an expired link', async () => {
    const u = new URL(url, server.baseUrl);
    const filePath = u.pathname.replace('/api/files/renders/', '');
    const past = new UrlSigner({ secret: config.signingSecret, ttlSeconds: 60, expiryStepSeconds: 1, now: () => Date.now() - 3600_000 });
    const res = await fetch(new URL(past.sign('renders', filePath), server.baseUrl));
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toBe('This file link has expired');
  });

  it('serves byte ranges and HEAD', async () => {
    const res = await fetch(new URL(url, server.baseUrl), { headers: { range: 'bytes=0-7' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 0-7/${bytes.length}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(0, 8))).toBe(true);
    const head = await fetch(new URL(url, server.baseUrl), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
    const beyond = await fetch(new URL(url, server.baseUrl), { headers: { range: `bytes=${bytes.length + 10}-` } });
    expect(beyond.status).toBe(416);
  });
});
