import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Knex } from 'knex';
import type { TestUser } from '../support/accounts';
import { request, serve, type TestServer } from '../support/http';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { connectDatabase } from '../../db/connection';
import { logger } from '../../config/logger';
import { createContentServices } from '../../services/content/contentServices';
import { ResumableUploads } from '../../services/content/resumableUploads';
import { BackgroundWork, type AppDeps } from '../../api/deps';
import { resumableUploadsFor } from '../../api/routes/resumableUploads';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';
import { uploadLimitRefusalsTotal } from '../../services/platform/metrics';
import { createProject, fetchBytes, mp4Bytes, newUser, noiseImage, pngBytes } from './fixtures';

// a database and storage of this file's own: its sweeps expire uploads within milliseconds, and on the run's shared
// ones they would expire (and remove the files of) the resumable uploads other files have in flight
let db: ScratchDatabase;
let knex: Knex;
let config: AppConfig;
let server: TestServer;
let owner: TestUser;
let projectId: string;
let image: Buffer;

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const metadata = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${b64(v)}`).join(',');

beforeAll(async () => {
  db = await createScratchDatabase('resumable', { migrated: true });
  knex = connectDatabase(db.url, { min: 0, max: 10 });
  const base = loadConfig();
  const tag = randomBytes(4).toString('hex');
  config = { ...base, databaseUrl: db.url, storageDir: path.join(base.storageDir, `resumable-${tag}`), s3: { ...base.s3, bucketPrefix: `${base.s3.bucketPrefix}ru${tag}-` } };
  server = await serve(createApp({ config, knex, logger }));
  owner = await newUser(server.baseUrl, knex);
  projectId = (await createProject(server.baseUrl, owner, 'Resumable')).id;
  // about 3.6 MB of noise: several network writes, so a cut really lands mid-file
  image = await (await noiseImage(1100, 1100)).png({ compressionLevel: 0 }).toBuffer();
});

afterAll(async () => {
  await server?.close();
  await knex?.destroy();
  await db?.drop();
  if (config) fs.rmSync(config.storageDir, { recursive: true, force: true });
});

async function createUpload(user: TestUser, size: number, meta: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
  const res = await fetch(`${server.baseUrl}/api/uploads/tus`, {
    method: 'POST',
    headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-length': String(size), 'upload-metadata': metadata(meta) },
  });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

async function offsetOf(user: TestUser, location: string): Promise<{ status: number; offset: number | null }> {
  const res = await fetch(`${server.baseUrl}${location}`, { method: 'HEAD', headers: { ...TUS, authorization: `Bearer ${user.token}` } });
  const offset = res.headers.get('upload-offset');
  return { status: res.status, offset: offset === null ? null : Number(offset) };
}

async function patch(user: TestUser, location: string, offset: number, bytes: Buffer): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`${server.baseUrl}${location}`, {
    method: 'PATCH',
    headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
    body: new Uint8Array(bytes),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

/** A PATCH of the whole rest of the file whose connection is cut once `cutAt` bytes have been written. */
function cutPatch(user: TestUser, location: string, bytes: Buffer, cutAt: number): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(`${server.baseUrl}${location}`);
    const req = http.request(url, {
      method: 'PATCH',
      headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(bytes.length) },
    });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      res.on('end', resolve);
    });
    let sent = 0;
    const chunk = 64 * 1024;
    const writeMore = (): void => {
      while (sent < cutAt) {
        const piece = bytes.subarray(sent, Math.min(cutAt, sent + chunk));
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', writeMore);
          return;
        }
      }
      // the connection drops with 60 % sent
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    };
    writeMore();
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('resumable render uploads (tus at /api/uploads/tus)', () => {
  it('an upload cut at 60 % resumes from the offset the server holds and the stored file is byte-identical', async () => {
    const created = await createUpload(owner, image.length, { projectId, filename: 'tower.png', filetype: 'image/png' });
    expect(created.status).toBe(201);
    expect(created.location).toMatch(/^\/api\/uploads\/tus\/[0-9a-f]{32}$/);
    const location = created.location as string;

    await cutPatch(owner, location, image, Math.floor(image.length * 0.6));
    const held = await offsetOf(owner, location);
    expect(held.status).toBe(200);
    expect(held.offset).toBeGreaterThan(0);
    expect(held.offset).toBeLessThanOrEqual(Math.floor(image.length * 0.6));

    const done = await patch(owner, location, held.offset as number, image.subarray(held.offset as number));
    expect(done.status).toBe(200);
    const answer = JSON.parse(done.body);
    expect(answer).toMatchObject({ success: true, duplicate: false, processingInfo: { width: 1100, height: 1100, fileSize: image.length, mimeType: 'image/png', checksum: sha256(image) } });

    const stored = await fetchBytes(server.baseUrl, answer.url);
    expect(stored.status).toBe(200);
    expect(sha256(stored.bytes)).toBe(sha256(image));
    const row = await knex('renders').where({ id: answer.render.data.id }).first();
    expect(row).toMatchObject({ project_id: projectId, workspace_id: owner.id, file_name: 'tower.png', checksum: sha256(image), storage_size: String(image.length) });
    const upload = await knex('resumable_uploads').where({ id: location.split('/').pop() }).first();
    expect(upload).toMatchObject({ status: 'completed', render_id: answer.render.data.id });
    // the tus copy is gone once the render is recorded
    expect((await offsetOf(owner, location)).status).toBe(410);
  });

  it('another user can neither see, resume nor cancel the upload', async () => {
    const other = await newUser(server.baseUrl, knex);
    const bytes = await pngBytes(300, 200, 3);
    const created = await createUpload(owner, bytes.length, { projectId, filename: 'mine.png', filetype: 'image/png' });
    const location = created.location as string;
    expect((await patch(owner, location, 0, bytes.subarray(0, 1000))).status).toBe(204);

    expect((await offsetOf(other, location)).status).toBe(404);
    const resumed = await patch(other, location, 1000, bytes.subarray(1000));
    expect(resumed.status).toBe(404);
    expect(JSON.parse(resumed.body)).toMatchObject({ success: false, error: 'Upload not found' });
    const cancel = await fetch(`${server.baseUrl}${location}`, { method: 'DELETE', headers: { ...TUS, authorization: `Bearer ${other.token}` } });
    expect(cancel.status).toBe(404);
    expect(await offsetOf(owner, location)).toEqual({ status: 200, offset: 1000 });
    expect(await knex('renders').where({ workspace_id: other.id })).toHaveLength(0);
  });

  it("lists the project's unfinished uploads with the bytes held (a reload's way back), for its workspace only; a cancel or the last byte takes one off", async () => {
    const listed = async (user: TestUser, project = listProject) => request<{ uploads: Array<Record<string, unknown>> }>(server.baseUrl, `/api/uploads/unfinished?projectId=${project}`, { token: user.token });
    const listProject = (await createProject(server.baseUrl, owner, 'Unfinished')).id;
    const bytes = await pngBytes(300, 200, 5);
    expect((await listed(owner)).body).toEqual({ success: true, error: null, uploads: [] });
    const kept = await createUpload(owner, bytes.length, { projectId: listProject, filename: 'kept.png', filetype: 'image/png' });
    expect((await patch(owner, kept.location as string, 0, bytes.subarray(0, 1500))).status).toBe(204);
    const dropped = await createUpload(owner, bytes.length, { projectId: listProject, filename: 'dropped.png', filetype: 'image/png' });
    const list = await listed(owner);
    expect(list.status).toBe(200);
    expect(list.body.uploads).toEqual([
      { id: (kept.location as string).split('/').pop(), projectId: listProject, projectName: 'Unfinished', fileName: 'kept.png', size: bytes.length, received: 1500, startedAt: expect.any(String), expiresAt: expect.any(String) },
      { id: (dropped.location as string).split('/').pop(), projectId: listProject, projectName: 'Unfinished', fileName: 'dropped.png', size: bytes.length, received: 0, startedAt: expect.any(String), expiresAt: expect.any(String) },
    ]);
    const first = list.body.uploads[0] as { startedAt: string; expiresAt: string };
    expect(Date.parse(first.expiresAt) - Date.parse(first.startedAt)).toBe(24 * 60 * 60 * 1000);
    // another project's list holds none of them, the workspace's holds both; a stranger finds no such project
    expect((await listed(owner, projectId)).body.uploads.map((u) => u.fileName)).not.toContain('kept.png');
    const all = await request<{ uploads: Array<{ fileName: string }> }>(server.baseUrl, '/api/uploads/unfinished', { token: owner.token });
    expect(all.body.uploads.map((u) => u.fileName)).toEqual(expect.arrayContaining(['kept.png', 'dropped.png']));
    expect((await listed(await newUser(server.baseUrl, knex))).status).toBe(404);
    // cancelled (the list's Cancel) and finished: both leave the list
    expect((await fetch(`${server.baseUrl}${dropped.location}`, { method: 'DELETE', headers: { ...TUS, authorization: `Bearer ${owner.token}` } })).status).toBe(204);
    expect((await patch(owner, kept.location as string, 1500, bytes.subarray(1500))).status).toBe(200);
    expect((await listed(owner)).body.uploads).toEqual([]);
  });

  it('needs a session, a project of the user, a name and a size within 150 MB, refused before a byte is sent', async () => {
    const anonymous = await fetch(`${server.baseUrl}/api/uploads/tus`, { method: 'POST', headers: { ...TUS, 'upload-length': '10', 'upload-metadata': metadata({ projectId, filename: 'a.png' }) } });
    expect(anonymous.status).toBe(401);

    const tooLarge = await createUpload(owner, MAX_UPLOAD_BYTES + 1, { projectId, filename: 'huge.png', filetype: 'image/png' });
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body).error).toBe('File too large: 150.00MB. Maximum size is 150MB.');

    const stranger = await newUser(server.baseUrl, knex);
    const foreign = await createUpload(stranger, 100, { projectId, filename: 'x.png', filetype: 'image/png' });
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.body).error).toBe('Project not found');

    expect((await createUpload(owner, 100, { filename: 'x.png' })).status).toBe(400);
    expect((await createUpload(owner, 100, { projectId })).status).toBe(400);
    const nul = await createUpload(owner, 100, { projectId, filename: 'a\u0000b.png' });
    expect(nul.status).toBe(400);
    const video = await createUpload(owner, 100, { projectId, filename: 'clip.mp4', filetype: 'video/mp4' });
    expect(video.status).toBe(400);
    expect(JSON.parse(video.body).error).toBe('Video uploads are not supported. Please upload images only.');
    expect(await knex('resumable_uploads').where({ workspace_id: stranger.id })).toHaveLength(0);
  });

  it('answers a Tus-Resumable it does not speak (or none) with 412, naming its version in Tus-Version, and keeps nothing', async () => {
    const before = (await knex('resumable_uploads').where({ workspace_id: owner.id })).length;
    for (const version of ['0.2.2', '2.0.0', null]) {
      const res = await fetch(`${server.baseUrl}/api/uploads/tus`, {
        method: 'POST',
        headers: { ...(version ? { 'tus-resumable': version } : {}), authorization: `Bearer ${owner.token}`, 'upload-length': '100', 'upload-metadata': metadata({ projectId, filename: 'v.png', filetype: 'image/png' }) },
      });
      expect({ version, status: res.status }).toEqual({ version, status: 412 });
      expect(res.headers.get('tus-resumable')).toBe('1.0.0');
      if (version) expect(res.headers.get('tus-version')).toBe('1.0.0');
      await res.text();
    }
    const created = await createUpload(owner, 100, { projectId, filename: 'v.png', filetype: 'image/png' });
    expect(created.status).toBe(201);
    const head = await fetch(`${server.baseUrl}${created.location}`, { method: 'HEAD', headers: { 'tus-resumable': '0.2.2', authorization: `Bearer ${owner.token}` } });
    expect(head.status).toBe(412);
    expect((await knex('resumable_uploads').where({ workspace_id: owner.id })).length).toBe(before + 1);
  });

  it('judges the type by content when the last byte arrives: a video named .png is refused and nothing is kept', async () => {
    const bytes = mp4Bytes();
    const created = await createUpload(owner, bytes.length, { projectId, filename: 'sneaky.png', filetype: 'image/png' });
    const done = await patch(owner, created.location as string, 0, bytes);
    expect(done.status).toBe(400);
    expect(JSON.parse(done.body)).toMatchObject({ success: false, code: 'VIDEO_NOT_SUPPORTED' });
    const id = (created.location as string).split('/').pop();
    expect(await knex('resumable_uploads').where({ id }).first()).toMatchObject({ status: 'failed' });
    expect(await knex('renders').where({ project_id: projectId, file_name: 'sneaky.png' })).toHaveLength(0);
  });

  it('the same bytes again answer as a duplicate of the render already in the project', async () => {
    const bytes = await pngBytes(320, 180, 9);
    const first = await createUpload(owner, bytes.length, { projectId, filename: 'same.png', filetype: 'image/png' });
    const a = JSON.parse((await patch(owner, first.location as string, 0, bytes)).body);
    const second = await createUpload(owner, bytes.length, { projectId, filename: 'same-again.png', filetype: 'image/png' });
    const b = JSON.parse((await patch(owner, second.location as string, 0, bytes)).body);
    expect(a.duplicate).toBe(false);
    expect(b).toMatchObject({ success: true, duplicate: true });
    expect(b.render.data.id).toBe(a.render.data.id);
  });

  it('the multipart route keeps working beside it', async () => {
    const bytes = await pngBytes(200, 100, 5);
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'classic.png');
    const res = await request(server.baseUrl, '/api/upload/renders', { token: owner.token, body: form });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, duplicate: false });
  });

  it('abandoned unfinished uploads are swept after their expiry; finished ones are not touched', async () => {
    const bytes = await pngBytes(300, 300, 11);
    const created = await createUpload(owner, bytes.length, { projectId, filename: 'abandoned.png', filetype: 'image/png' });
    const location = created.location as string;
    expect((await patch(owner, location, 0, bytes.subarray(0, 500))).status).toBe(204);
    const id = location.split('/').pop() as string;
    // the sweep of an API process whose uploads expire almost at once (same store folder and database)
    const expiring = { ...config, tusExpirationHours: 0.000001 };
    const uploads = new ResumableUploads({ config: expiring, knex, services: createContentServices({ config: expiring, logger }), logger });
    await new Promise((r) => setTimeout(r, 20));
    expect(await uploads.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await knex('resumable_uploads').where({ id }).first()).toMatchObject({ status: 'expired' });
    expect((await offsetOf(owner, location)).status).toBe(410);
    const finished = await knex('resumable_uploads').where({ status: 'completed' }).whereNotNull('render_id');
    expect(finished.length).toBeGreaterThanOrEqual(2);
  });

  it('the API process sweeps from the first use and its close waits for the sweep; an app without background work never sweeps', async () => {
    const abandoned = async (name: string) => {
      const bytes = await pngBytes(200, 200, name.length);
      const created = await createUpload(owner, bytes.length, { projectId, filename: name, filetype: 'image/png' });
      expect((await patch(owner, created.location as string, 0, bytes.subarray(0, 300))).status).toBe(204);
      return (created.location as string).split('/').pop() as string;
    };
    const expiring = { ...config, tusExpirationHours: 0.000001 };
    const status = async (id: string) => ((await knex('resumable_uploads').where({ id }).first()) as { status: string }).status;

    const quiet = await abandoned('quiet.png');
    await new Promise((r) => setTimeout(r, 20));
    resumableUploadsFor({ config: expiring, knex, logger } as AppDeps);
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(quiet)).toBe('uploading');

    const background = new BackgroundWork();
    resumableUploadsFor({ config: expiring, knex, logger, background } as AppDeps);
    await background.close();
    expect(await status(quiet)).toBe('expired');
  });
});

describe('limits on unfinished resumable uploads per account', () => {
  const limits = { tusMaxUnfinishedUploads: 3, tusMaxUnfinishedBytes: 1024 * 1024 };
  let first: TestServer;
  let second: TestServer;
  let user: TestUser;
  let project: string;

  beforeAll(async () => {
    // two API processes (apps) over the same database and storage: the limits are the account's, not a process's
    first = await serve(createApp({ config: { ...config, ...limits }, knex, logger }));
    second = await serve(createApp({ config: { ...config, ...limits }, knex, logger }));
    user = await newUser(first.baseUrl, knex);
    project = (await createProject(first.baseUrl, user, 'Limits')).id;
  });

  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
  });

  const create = async (via: TestServer, who: TestUser, size: number, name = 'r.png') => {
    const res = await fetch(`${via.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...TUS, authorization: `Bearer ${who.token}`, 'upload-length': String(size), 'upload-metadata': metadata({ projectId: project, filename: name, filetype: 'image/png' }) },
    });
    const text = await res.text();
    return { status: res.status, location: res.headers.get('location'), body: text ? (JSON.parse(text) as { error?: string; code?: string }) : {} };
  };
  const cancel = async (who: TestUser, location: string) => (await fetch(`${first.baseUrl}${location}`, { method: 'DELETE', headers: { ...TUS, authorization: `Bearer ${who.token}` } })).status;
  const unfinished = async (who: TestUser) => (await knex('resumable_uploads').where({ workspace_id: who.id, status: 'uploading' })).length;
  const refusals = async (limit: string) => (await uploadLimitRefusalsTotal.get()).values.find((v) => v.labels.limit === limit)?.value ?? 0;
  const cancelAll = async (who: TestUser) => {
    const rows = (await knex('resumable_uploads').where({ workspace_id: who.id, status: 'uploading' }).select('id')) as Array<{ id: string }>;
    for (const { id } of rows) expect(await cancel(who, `/api/uploads/tus/${id}`)).toBe(204);
  };

  it('concurrent creations through two API processes never pass the count: the rest answer 429 naming the limit', async () => {
    const before = await refusals('tus_unfinished_uploads');
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i % 2 ? second : first, user, 1000, `c${i}.png`)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, a.body.code])).toEqual(Array(9).fill([429, 'TOO_MANY_UNFINISHED_UPLOADS']));
    expect(refused[0].body.error).toBe('Too many unfinished uploads: at most 3 at once. Finish or cancel one before starting another (an unfinished upload is removed 24 hours after it starts).');
    expect(await unfinished(user)).toBe(3);
    expect((await refusals('tus_unfinished_uploads')) - before).toBe(9);
    // another account is not held up
    const other = await newUser(first.baseUrl, knex);
    const own = (await createProject(first.baseUrl, other, 'Other')).id;
    const res = await fetch(`${first.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...TUS, authorization: `Bearer ${other.token}`, 'upload-length': '1000', 'upload-metadata': metadata({ projectId: own, filename: 'o.png', filetype: 'image/png' }) },
    });
    expect(res.status).toBe(201);
    await cancelAll(user);
  });

  it('a cancelled, completed or expired upload stops counting at once', async () => {
    const held = [];
    for (let i = 0; i < 3; i += 1) held.push(await create(first, user, 1000, `h${i}.png`));
    expect(held.map((h) => h.status)).toEqual([201, 201, 201]);
    expect((await create(first, user, 1000)).status).toBe(429);
    // cancelled (tus DELETE)
    expect(await cancel(user, held[0].location as string)).toBe(204);
    expect(await knex('resumable_uploads').where({ id: (held[0].location as string).split('/').pop() }).first()).toMatchObject({ status: 'cancelled' });
    const bytes = await pngBytes(120, 80, 21);
    const replacement = await create(first, user, bytes.length, 'done.png');
    expect(replacement.status).toBe(201);
    expect((await create(first, user, 1000)).status).toBe(429);
    // completed
    expect((await patch(user, replacement.location as string, 0, bytes)).status).toBe(200);
    expect((await create(second, user, 1000)).status).toBe(201);
    // expired: past TUS_EXPIRATION_HOURS an unfinished upload no longer counts, even before the sweep marks it
    await knex('resumable_uploads').where({ id: (held[1].location as string).split('/').pop() }).update({ created_at: new Date(Date.now() - 25 * 3600 * 1000) });
    expect((await create(second, user, 1000)).status).toBe(201);
    expect((await create(second, user, 1000)).status).toBe(429);
    await cancelAll(user);
    // a creation refused after its row was written (creation-with-upload sending more than Upload-Length) keeps no slot
    const overlong = await fetch(`${first.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-length': '100', 'content-type': 'application/offset+octet-stream', 'upload-metadata': metadata({ projectId: project, filename: 'long.png', filetype: 'image/png' }) },
      body: new Uint8Array(300),
    });
    expect(overlong.status).toBeGreaterThanOrEqual(400);
    await overlong.text();
    expect(await knex('resumable_uploads').where({ workspace_id: user.id, file_name: 'long.png' }).first('status')).toEqual({ status: 'failed' });
    expect(await unfinished(user)).toBe(0);
  });

  it('the declared bytes of unfinished uploads stay within TUS_MAX_UNFINISHED_MB: beyond, creation answers 413 naming the limit', async () => {
    const before = await refusals('tus_unfinished_bytes');
    expect((await create(first, user, 600 * 1024)).status).toBe(201);
    const over = await create(second, user, 500 * 1024);
    expect([over.status, over.body.code]).toEqual([413, 'UNFINISHED_UPLOAD_BYTES']);
    expect(over.body.error).toBe('Unfinished uploads may hold at most 1.00MB at once: 0.59MB are in unfinished uploads and this file is 0.49MB. Finish or cancel one first (an unfinished upload is removed 24 hours after it starts).');
    expect((await refusals('tus_unfinished_bytes')) - before).toBe(1);
    expect((await create(second, user, 400 * 1024)).status).toBe(201);
    expect(await unfinished(user)).toBe(2);
    await cancelAll(user);
  });
});
