import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import sharp from 'sharp';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { runBackend, runStorage, unfinishedWrites } from '../support/objectStorage';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';
import {
  createProject,
  fetchBytes,
  gifBytes,
  jpegBytes,
  mp4Bytes,
  newUser,
  pngBytes,
  startProjectsApp,
  uploadRender,
  webpBytes,
} from './fixtures';

// this file's own local storage folder: the run's shared one also holds the unfinished writes of the files running
// beside it, which the checks for this file's left-overs would count (one did once, with the 413 test)
process.env.STORAGE_DIR = path.join(process.env.STORAGE_DIR ?? '.data/storage', `uploads-test-${process.pid}`);

let server: TestServer;
let owner: TestUser;
let projectId: string;

/** This file's unfinished writes: on S3 the buckets are shared with the run, so only the owner's open uploads count. */
const unfinishedWritesOfOwner = async () =>
  (await unfinishedWrites()).filter((w) => runBackend() === 'local' || w.startsWith(`renders/${owner.id}/`));

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  owner = await newUser(server.baseUrl);
  projectId = (await createProject(server.baseUrl, owner, 'Uploads')).id;
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

/** Every file under the renders bucket of this user (uploads, thumbnails and previews), asked of the storage in use. */
async function storedFilesOf(userId: string): Promise<string[]> {
  const objects = runStorage().objects;
  const listed = [...(await objects.list('renders', userId)), ...(await objects.list('renders', `thumbs/${userId}`)), ...(await objects.list('renders', `previews/${userId}`))];
  return listed.map((o) => o.path);
}

async function renderRows(project: string): Promise<Array<Record<string, unknown>>> {
  return testKnex()('renders').where({ project_id: project });
}

describe('POST /api/upload/renders: accepted images', () => {
  it.each([
    ['png', () => pngBytes(160, 90), 'image/png', 160, 90, '16:9'],
    ['jpeg', () => jpegBytes(120, 90), 'image/jpeg', 120, 90, '4:3'],
    ['gif', () => gifBytes(50, 50), 'image/gif', 50, 50, '1:1'],
    ['webp', () => webpBytes(90, 160), 'image/webp', 90, 160, '9:16'],
  ])('stores a %s with its real size, type, dimensions, ratio, checksum and a thumbnail', async (_name, make, mime, width, height, ratio) => {
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user);
    const bytes = await make();
    const res = await uploadRender(server.baseUrl, user, project.id, { bytes, fileName: `render.${_name}`, type: mime });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, duplicate: false });
    expect(res.body.processingInfo).toMatchObject({
      width,
      height,
      aspectRatio: ratio,
      fileSize: bytes.length,
      mimeType: mime,
      checksum: createHash('sha256').update(bytes).digest('hex'),
    });
    const [row] = await renderRows(project.id);
    expect(row).toMatchObject({ width, height, aspect_ratio: ratio, storage_mime: mime, storage_bucket: 'renders', workspace_id: user.id });
    expect(Number(row.file_size)).toBe(bytes.length);

    const file = await fetchBytes(server.baseUrl, res.body.url as string);
    expect(file.status).toBe(200);
    expect(file.type).toBe(mime);
    expect(file.bytes.equals(bytes)).toBe(true);

    const thumb = await fetchBytes(server.baseUrl, res.body.processingInfo?.thumbnailUrl as string);
    expect(thumb.status).toBe(200);
    const meta = await sharp(thumb.bytes).metadata();
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(480);
  });

  it('judges the type by content, not by the declared type or name', async () => {
    const bytes = await jpegBytes(64, 64);
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes, fileName: 'looks-like.png', type: 'image/png' });
    expect(res.status).toBe(200);
    expect(res.body.processingInfo?.mimeType).toBe('image/jpeg');
  });

  it('reads the fields whether they come before or after the file', async () => {
    const bytes = await pngBytes(30, 20, 3);
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes, fileName: 'late-fields.png', type: 'image/png' }, { fieldsFirst: false });
    expect(res.status).toBe(200);
    expect(res.body.duplicate).toBe(false);
  });

  it('recognises the same image uploaded twice into one project and stores it once', async () => {
    const project = await createProject(server.baseUrl, owner, 'Duplicates');
    const bytes = await pngBytes(48, 48, 5);
    const first = await uploadRender(server.baseUrl, owner, project.id, { bytes, fileName: 'one.png' });
    const second = await uploadRender(server.baseUrl, owner, project.id, { bytes, fileName: 'again.png' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ success: true, duplicate: true });
    expect(second.body.render?.data.id).toBe(first.body.render?.data.id);
    expect(await renderRows(project.id)).toHaveLength(1);
    const before = (await storedFilesOf(owner.id)).length;
    await uploadRender(server.baseUrl, owner, project.id, { bytes, fileName: 'third.png' });
    expect((await storedFilesOf(owner.id)).length).toBe(before);

    // another project of the same user takes the same bytes as its own render
    const other = await createProject(server.baseUrl, owner, 'Elsewhere');
    const third = await uploadRender(server.baseUrl, owner, other.id, { bytes, fileName: 'one.png' });
    expect(third.body.duplicate).toBe(false);
  });

  it('stores one row when the same image arrives twice at once', async () => {
    const project = await createProject(server.baseUrl, owner, 'Race');
    const bytes = await pngBytes(200, 120, 9);
    const answers = await Promise.all([1, 2, 3].map(() => uploadRender(server.baseUrl, owner, project.id, { bytes, fileName: 'race.png' })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.render?.data.id)).size).toBe(1);
    expect(await renderRows(project.id)).toHaveLength(1);
  });
});

describe('POST /api/upload/renders: refusals', () => {
  async function expectNothingStored(project: string, before: number, user: TestUser = owner): Promise<void> {
    expect(await renderRows(project)).toHaveLength(before);
    expect((await storedFilesOf(user.id)).length).toBe(filesBefore);
  }
  let filesBefore = 0;
  let rowsBefore = 0;

  beforeEach(async () => {
    filesBefore = (await storedFilesOf(owner.id)).length;
    rowsBefore = (await renderRows(projectId)).length;
  });

  it('answers 401 with the spec text without a session', async () => {
    const res = await uploadRender(server.baseUrl, null, projectId, { bytes: await pngBytes(), fileName: 'a.png' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Please login to upload files');
    await expectNothingStored(projectId, rowsBefore);
  });

  it('refuses a video with the spec text', async () => {
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes: mp4Bytes(), fileName: 'walkthrough.mp4', type: 'video/mp4' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Video uploads are not supported. Please upload images only.');
    await expectNothingStored(projectId, rowsBefore);
  });

  it('refuses a video disguised as an image', async () => {
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes: mp4Bytes(), fileName: 'photo.jpg', type: 'image/jpeg' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Video uploads are not supported. Please upload images only.');
    await expectNothingStored(projectId, rowsBefore);
  });

  it.each([
    ['a script named .png', Buffer.from('#!/bin/sh\necho pwned\n'.repeat(20)), 'evil.png', 'image/png'],
    ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'x.svg', 'image/svg+xml'],
    ['a PDF', Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(300, 32)]), 'plan.pdf', 'application/pdf'],
    ['an empty file', Buffer.alloc(0), 'empty.png', 'image/png'],
  ])('refuses %s with 400', async (_what, bytes, fileName, type) => {
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes, fileName, type });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`File "${fileName}" has invalid type. Accepted types: JPEG, PNG, GIF, WebP`);
    await expectNothingStored(projectId, rowsBefore);
  });

  it('refuses an image whose header is right but whose data is not an image', async () => {
    const png = await pngBytes(64, 64);
    const broken = Buffer.concat([png.subarray(0, 8), Buffer.alloc(4000, 0xab)]);
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes: broken, fileName: 'broken.png', type: 'image/png' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('File "broken.png" is not a readable image');
    await expectNothingStored(projectId, rowsBefore);
  });

  it("answers 404 for another user's project and for a project that does not exist, storing nothing", async () => {
    const stranger = await newUser(server.baseUrl);
    const bytes = await pngBytes(20, 20, 11);
    for (const fieldsFirst of [true, false]) {
      const res = await uploadRender(server.baseUrl, stranger, projectId, { bytes, fileName: 'x.png' }, { fieldsFirst });
      expect(res.status).toBe(404);
    }
    const missing = await uploadRender(server.baseUrl, owner, randomUUID(), { bytes, fileName: 'x.png' });
    expect(missing.status).toBe(404);
    const notAnId = await uploadRender(server.baseUrl, owner, 'not-a-uuid', { bytes, fileName: 'x.png' });
    expect(notAnId.status).toBe(404);
    await expectNothingStored(projectId, rowsBefore);
    expect(await storedFilesOf(stranger.id)).toEqual([]);
  });

  it("answers 403 when userId is someone else's", async () => {
    const res = await uploadRender(server.baseUrl, owner, projectId, { bytes: await pngBytes(), fileName: 'a.png' }, { userId: randomUUID() });
    expect(res.status).toBe(403);
    await expectNothingStored(projectId, rowsBefore);
  });

  it('answers 400 without a file or without a project id, and for a body that is not multipart', async () => {
    const noFile = new FormData();
    noFile.append('projectId', projectId);
    expect((await request(server.baseUrl, '/api/upload/renders', { method: 'POST', body: noFile, token: owner.token })).status).toBe(400);

    const noProject = new FormData();
    noProject.append('file', new Blob([new Uint8Array(await pngBytes(10, 10, 13))]), 'a.png');
    const res = await request(server.baseUrl, '/api/upload/renders', { method: 'POST', body: noProject, token: owner.token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('projectId is required');

    const json = await request(server.baseUrl, '/api/upload/renders', { json: { projectId }, token: owner.token });
    expect(json.status).toBe(400);
    await expectNothingStored(projectId, rowsBefore);
  });

  /** A multipart body whose file part is `fileBytes` long: a PNG signature, then filler; `failAfter` breaks the stream there. */
  async function bigUpload(fileBytes: number, options: { contentLength: boolean; failAfter?: number }): Promise<Response | Error> {
    const boundary = `----rs${randomUUID()}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="projectId"\r\n\r\n${projectId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.png"\r\nContent-Type: image/png\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const pngHead = (await pngBytes(8, 8)).subarray(0, 16);
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    async function* body(): AsyncGenerator<Uint8Array> {
      yield head;
      yield pngHead;
      let sent = pngHead.length;
      while (sent < fileBytes) {
        if (options.failAfter !== undefined && sent >= options.failAfter) throw new Error('client gave up');
        const n = Math.min(fileBytes - sent, chunk.length);
        yield chunk.subarray(0, n);
        sent += n;
      }
      yield tail;
    }
    const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${owner.token}` };
    if (options.contentLength) headers['content-length'] = String(head.length + fileBytes + tail.length);
    try {
      return await fetch(`${server.baseUrl}/api/upload/renders`, { method: 'POST', headers, body: ReadableStreamFrom(body()), duplex: 'half' } as RequestInit);
    } catch (err) {
      return err as Error;
    }
  }

  it('refuses a file over 150 MB with 413 and the spec text while it streams (no length given), storing nothing', async () => {
    const res = await bigUpload(MAX_UPLOAD_BYTES + 1, { contentLength: false });
    if (res instanceof Error) throw res;
    expect(res.status).toBe(413);
    const answer = (await res.json()) as { error: string };
    expect(answer.error).toMatch(/^File too large: 150\.\d\dMB\. Maximum size is 150MB\.$/);
    await expectNothingStored(projectId, rowsBefore);
    expect(await unfinishedWritesOfOwner()).toEqual([]);
  });

  it('refuses at once a request whose declared length is over the limit', async () => {
    const res = await bigUpload(MAX_UPLOAD_BYTES + 2 * 1024 * 1024, { contentLength: true });
    if (res instanceof Error) throw res;
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('File too large: 152.00MB. Maximum size is 150MB.');
    await expectNothingStored(projectId, rowsBefore);
  });

  it('keeps nothing of an upload the client abandons midway', async () => {
    const res = await bigUpload(40 * 1024 * 1024, { contentLength: false, failAfter: 8 * 1024 * 1024 });
    expect(res instanceof Response).toBe(false);
    // the server notices the broken request and removes its half-written file; on S3 the bucket is shared with the
    // suites running beside this one, so only this user's open multipart uploads count
    const mine = unfinishedWritesOfOwner;
    // the client's failure can reach the test before the server has begun (and then aborted) its multipart upload:
    // nothing left means nothing left for a whole second
    const deadline = Date.now() + 10_000;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    while (Date.now() < deadline) {
      if ((await mine()).length === 0) {
        await sleep(1000);
        if ((await mine()).length === 0) break;
      }
      await sleep(50);
    }
    expect(await mine()).toEqual([]);
    await expectNothingStored(projectId, rowsBefore);
  });
});

function ReadableStreamFrom(source: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await source.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
  });
}
