/**
 * The Enhance Renders drafts API on real PostgreSQL and storage: the access code (server-checked, remembered per
 * account, rate-limited), 403 before unlock on every call, owner scoping, the 4-image limit, uploads checked by
 * content, versions restored, commit copying files into a new project, delete.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { fileRefOfLink, runBackend } from '../support/objectStorage';
import { ACCESS_CODE, addImage, createDraft, getDraft, renderPng, unlock, unlockedUser, uploadFile } from './support';

const config = loadConfig();
const storage = createStorage(config);
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  server = await serve(
    createApp({
      config,
      knex: testKnex(),
      logger,
      enhanceAccessLimits: {
        tableName: 'auth_rate_limits',
        keyPrefix: `enhance_test_${Date.now()}`,
        perAccount: { points: 3, durationSeconds: 3600, blockSeconds: 3600 },
        perIp: { points: 1000, durationSeconds: 3600, blockSeconds: 3600 },
      },
    }),
  );
  baseUrl = server.baseUrl;
});

afterAll(async () => {
  await server?.close();
  await closeTestKnex();
});

const EVERY_CALL: Array<{ method: 'GET' | 'POST'; path: string; json?: unknown }> = [
  { method: 'GET', path: '/api/enhance-set/drafts/list' },
  { method: 'POST', path: '/api/enhance-set/drafts/create', json: { name: 'x' } },
  { method: 'POST', path: '/api/enhance-set/drafts/commit', json: { draftId: '00000000-0000-4000-8000-000000000000', newProjectName: 'x' } },
  { method: 'POST', path: '/api/enhance-set/drafts/delete', json: { draftId: '00000000-0000-4000-8000-000000000000' } },
  { method: 'POST', path: '/api/enhance-set/drafts/add-images', json: { draftId: '00000000-0000-4000-8000-000000000000', images: [{ source_url: 'x' }] } },
  { method: 'GET', path: '/api/enhance-set/drafts/get?draftId=00000000-0000-4000-8000-000000000000' },
  { method: 'POST', path: '/api/enhance-set/drafts/remove-image', json: { draftId: '00000000-0000-4000-8000-000000000000', imageId: 'x', sourceUrl: 'x' } },
  { method: 'POST', path: '/api/enhance-set/drafts/restore-version', json: { draftId: '00000000-0000-4000-8000-000000000000', imageId: 'x', versionUrl: 'x' } },
  { method: 'POST', path: '/api/enhance-set/jobs/dispatch', json: { draftId: '00000000-0000-4000-8000-000000000000', imageIds: ['x'], modelId: 'esrgan', mode: 'basic_upscale' } },
  { method: 'POST', path: '/api/ai-enhance-prompt/vision', json: { mode: 'attach', prompt: 'warm', imageUrls: [], referenceUrls: [] } },
];

describe('Enhance Renders access', () => {
  it('answers 403 ENHANCE_LOCKED on every enhance-set call (and the vision prompt) before the code, and 401 without a session', async () => {
    const user = await createTestUser(baseUrl);
    for (const call of EVERY_CALL) {
      const res = await request(baseUrl, call.path, { method: call.method, token: user.token, json: call.json });
      expect({ path: call.path, status: res.status, code: res.body.code }).toEqual({ path: call.path, status: 403, code: 'ENHANCE_LOCKED' });
      const anonymous = await request(baseUrl, call.path, { method: call.method, json: call.json });
      expect(anonymous.status).toBe(401);
    }
    const form = new FormData();
    form.append('draftId', '00000000-0000-4000-8000-000000000000');
    form.append('file', new Blob([new Uint8Array(await renderPng())], { type: 'image/png' }), 'r.png');
    const upload = await request(baseUrl, '/api/enhance-set/drafts/upload', { method: 'POST', body: form, token: user.token });
    expect([upload.status, upload.body.code]).toEqual([403, 'ENHANCE_LOCKED']);
  });

  it('accepts the code trimmed and in any case, remembers it for the account, and refuses a wrong one with 403', async () => {
    const user = await createTestUser(baseUrl);
    expect((await request(baseUrl, '/api/enhance-set/access', { token: user.token })).body).toEqual({ success: true, configured: true, unlocked: false });
    const wrong = await unlock(baseUrl, user, 'not-the-code');
    expect([wrong.status, wrong.body.code]).toEqual([403, 'ACCESS_CODE_INVALID']);
    const right = await unlock(baseUrl, user, `  ${ACCESS_CODE.toLowerCase()} `);
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ success: true, unlocked: true });
    // remembered on the account: a new session (another browser) is unlocked too
    const again = await request<{ token: string }>(baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const other = { ...user, token: again.body.token };
    expect((await request(baseUrl, '/api/enhance-set/access', { token: other.token })).body.unlocked).toBe(true);
    expect((await request(baseUrl, '/api/enhance-set/drafts/list', { token: other.token })).status).toBe(200);
    expect(await testKnex()('profiles').where({ id: user.id }).first('enhance_unlocked_at')).toEqual({ enhance_unlocked_at: expect.any(Date) });
  });

  it('rate-limits wrong guesses per account: after the budget even the right code is refused with 429 and Retry-After', async () => {
    const user = await createTestUser(baseUrl);
    for (let i = 0; i < 3; i += 1) expect((await unlock(baseUrl, user, `guess-${i}`)).status).toBe(403);
    // the 4th wrong guess goes over the budget of 3
    expect((await unlock(baseUrl, user, 'guess-3')).status).toBe(403);
    const blocked = await unlock(baseUrl, user, ACCESS_CODE);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('RATE_LIMITED');
    expect(blocked.body.error).toMatch(/^Too many access code attempts\. Please try again in \d+ (minutes|hour)/);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // another account is not affected
    const other = await createTestUser(baseUrl);
    expect((await unlock(baseUrl, other)).status).toBe(200);
  });

  it('rate-limits wrong guesses per address too, whatever the account', async () => {
    const limited = await serve(
      createApp({
        config,
        knex: testKnex(),
        logger,
        enhanceAccessLimits: {
          tableName: 'auth_rate_limits',
          keyPrefix: `enhance_ip_test_${Date.now()}`,
          perAccount: { points: 100, durationSeconds: 3600, blockSeconds: 3600 },
          perIp: { points: 2, durationSeconds: 3600, blockSeconds: 600 },
        },
      }),
    );
    try {
      const users = [await createTestUser(limited.baseUrl), await createTestUser(limited.baseUrl), await createTestUser(limited.baseUrl)];
      for (const guesser of users) expect((await unlock(limited.baseUrl, guesser, 'wrong')).status).toBe(403);
      const fresh = await createTestUser(limited.baseUrl);
      const res = await unlock(limited.baseUrl, fresh);
      expect([res.status, res.body.code]).toEqual([429, 'RATE_LIMITED']);
      expect(await testKnex()('profiles').where({ id: fresh.id }).first('enhance_unlocked_at')).toEqual({ enhance_unlocked_at: null });
    } finally {
      await limited.close();
    }
  });

  it('keeps the feature locked for everyone when no code is configured', async () => {
    const closed = await serve(createApp({ config: { ...config, enhanceAccessCode: '' }, knex: testKnex(), logger }));
    try {
      const user = await createTestUser(closed.baseUrl);
      expect((await request(closed.baseUrl, '/api/enhance-set/access', { token: user.token })).body).toEqual({ success: true, configured: false, unlocked: false });
      const res = await unlock(closed.baseUrl, user, '');
      expect([res.status, res.body.code]).toEqual([403, 'ENHANCE_NOT_CONFIGURED']);
      expect((await request(closed.baseUrl, '/api/enhance-set/drafts/list', { token: user.token })).body.code).toBe('ENHANCE_NOT_CONFIGURED');
    } finally {
      await closed.close();
    }
  });
});

describe('drafts', () => {
  let owner: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    owner = await unlockedUser(baseUrl);
    stranger = await unlockedUser(baseUrl);
  });

  it('creates a draft with a non-blank name, lists active drafts, and refuses another userId', async () => {
    const blank = await request(baseUrl, '/api/enhance-set/drafts/create', { token: owner.token, json: { name: '   ' } });
    expect([blank.status, blank.body.error]).toEqual([400, 'Draft name is required']);
    const other = await request(baseUrl, '/api/enhance-set/drafts/create', { token: owner.token, json: { userId: stranger.id, name: 'x' } });
    expect(other.status).toBe(403);
    const draftId = await createDraft(baseUrl, owner, '  Level 3 renders ');
    const list = await request(baseUrl, `/api/enhance-set/drafts/list?userId=${owner.id}`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.drafts).toEqual(expect.arrayContaining([expect.objectContaining({ id: draftId, name: 'Level 3 renders', status: 'active', image_count: 0 })]));
    expect((await request(baseUrl, `/api/enhance-set/drafts/list?userId=${owner.id}`, { token: stranger.token })).status).toBe(403);
    expect((await request(baseUrl, '/api/enhance-set/drafts/list', { token: stranger.token })).body.drafts.map((d: { id: string }) => d.id)).not.toContain(draftId);
  });

  it('uploads into the drafts bucket, registers images with metadata, order and source type, and answers get with no-store', async () => {
    const draftId = await createDraft(baseUrl, owner);
    const up = await uploadFile(baseUrl, owner, draftId, await renderPng(400, 300), { name: 'north.png' });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ success: true, url: expect.any(String), storage: { bucket: 'drafts', mime: 'image/png', width: 400, height: 300 } });
    // a signed link to the stored file, whichever backend the run uses
    expect(fileRefOfLink(up.body.url)).toEqual({ bucket: 'drafts', path: up.body.storage.path });
    expect(up.body.url).toMatch(runBackend() === 's3' ? /X-Amz-Signature=/ : /^\/api\/files\/drafts\/.+\?expires=/);
    expect(up.body.storage.path.startsWith(`${owner.id}/${draftId}/uploads/`)).toBe(true);
    const added = await request(baseUrl, '/api/enhance-set/drafts/add-images', {
      token: owner.token,
      json: { draftId, images: [{ source_type: 'uploaded', source_url: up.body.url, name: 'north.png', order_index: 2, metadata: { ignored: true } }] },
    });
    expect(added.status).toBe(200);
    const res = await getDraft(baseUrl, owner, draftId);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.draft.name).toBe('Harbour draft');
    const [image] = res.body.images;
    expect(image).toMatchObject({ name: 'north.png', order_index: 2, source_type: 'uploaded', source_url: up.body.file_url, job: null });
    expect(image.metadata).toMatchObject({ storage: { bucket: 'drafts', path: up.body.storage.path }, previous_url: null, width: 400, height: 300 });
    expect(image.metadata.history).toEqual([expect.objectContaining({ url: up.body.file_url, source: 'upload' })]);
    // a relative /api/files link on disk, a presigned object storage link on S3
    const file = await fetch(new URL(image.resolved_url, baseUrl));
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  });

  it('holds at most 4 images per draft, counting uploads not yet added, on add-images and on upload, with the spec text', async () => {
    const draftId = await createDraft(baseUrl, owner);
    const uploads = [];
    for (let i = 0; i < 4; i += 1) uploads.push(await uploadFile(baseUrl, owner, draftId, await renderPng(120 + i, 90)));
    expect(uploads.map((u) => u.status)).toEqual([200, 200, 200, 200]);
    // four uploads waiting to be added already fill the draft: a fifth is refused, as a full draft is
    const early = await uploadFile(baseUrl, owner, draftId, await renderPng(125, 90));
    expect([early.status, early.body.error, early.body.code]).toEqual([409, 'Limit reached: maximum 4 images per draft', 'DRAFT_IMAGE_LIMIT']);
    const five = await request(baseUrl, '/api/enhance-set/drafts/add-images', { token: owner.token, json: { draftId, images: [...uploads, uploads[0]].map((u) => ({ source_url: u.body.url })) } });
    expect([five.status, five.body.error]).toEqual([400, 'Limit reached: maximum 4 images per draft']);
    expect((await getDraft(baseUrl, owner, draftId)).body.images).toHaveLength(0);
    const four = await request(baseUrl, '/api/enhance-set/drafts/add-images', { token: owner.token, json: { draftId, images: uploads.map((u) => ({ source_url: u.body.url })) } });
    expect(four.status).toBe(200);
    expect(four.body.images.map((i: { order_index: number }) => i.order_index)).toEqual([0, 1, 2, 3]);
    const fifth = await request(baseUrl, '/api/enhance-set/drafts/add-images', { token: owner.token, json: { draftId, images: [{ source_url: uploads[0].body.url }] } });
    // a full draft: 409 DRAFT_IMAGE_LIMIT, as the API document says (five in one request above is a bad request)
    expect([fifth.status, fifth.body.error, fifth.body.code]).toEqual([409, 'Limit reached: maximum 4 images per draft', 'DRAFT_IMAGE_LIMIT']);
    const upload = await uploadFile(baseUrl, owner, draftId, await renderPng());
    expect([upload.status, upload.body.error, upload.body.code]).toEqual([409, 'Limit reached: maximum 4 images per draft', 'DRAFT_IMAGE_LIMIT']);
    // attachments are not draft images: a full draft still takes references
    expect((await uploadFile(baseUrl, owner, draftId, await renderPng(), { purpose: 'reference' })).status).toBe(200);
  });

  it('refuses uploads without a draft, of another user\'s draft, of non-images, and unknown source URLs', async () => {
    const draftId = await createDraft(baseUrl, owner);
    const none = await uploadFile(baseUrl, owner, null, await renderPng());
    expect([none.status, none.body.error]).toEqual([400, 'Open or create a draft project first']);
    expect((await uploadFile(baseUrl, stranger, draftId, await renderPng())).status).toBe(404);
    const text = await uploadFile(baseUrl, owner, draftId, Buffer.from('just some text, not an image at all'), { name: 'notes.png' });
    expect([text.status, text.body.code]).toEqual([400, 'INVALID_FILE_TYPE']);
    const foreign = await request(baseUrl, '/api/enhance-set/drafts/add-images', {
      token: owner.token,
      json: { draftId, images: [{ source_url: 'https://example.com/render.png' }] },
    });
    expect([foreign.status, foreign.body.code]).toEqual([400, 'INVALID_SOURCE_URL']);
    // an upload of another draft (even the user's own) is not this draft's
    const otherDraft = await createDraft(baseUrl, owner);
    const up = await uploadFile(baseUrl, owner, otherDraft, await renderPng());
    const cross = await request(baseUrl, '/api/enhance-set/drafts/add-images', { token: owner.token, json: { draftId, images: [{ source_url: up.body.url }] } });
    expect(cross.status).toBe(400);
  });

  it('scopes every call to the owner: another user\'s draft and images are not found', async () => {
    const draftId = await createDraft(baseUrl, owner);
    const imageId = await addImage(baseUrl, owner, draftId);
    const image = (await getDraft(baseUrl, owner, draftId)).body.images[0];
    expect((await getDraft(baseUrl, stranger, draftId)).status).toBe(404);
    const calls: Array<[string, unknown]> = [
      ['/api/enhance-set/drafts/remove-image', { draftId, imageId, sourceUrl: image.source_url }],
      ['/api/enhance-set/drafts/restore-version', { draftId, imageId, versionUrl: image.source_url }],
      ['/api/enhance-set/drafts/commit', { draftId, newProjectName: 'stolen' }],
      ['/api/enhance-set/drafts/delete', { draftId }],
      ['/api/enhance-set/jobs/dispatch', { draftId, imageIds: [imageId], modelId: 'esrgan', mode: 'basic_upscale' }],
    ];
    for (const [path, json] of calls) expect({ path, status: (await request(baseUrl, path, { token: stranger.token, json })).status }).toEqual({ path, status: 404 });
    // another user's file is not a reference either
    const theirDraft = await createDraft(baseUrl, stranger);
    const theirImage = await addImage(baseUrl, stranger, theirDraft);
    const refs = await request(baseUrl, '/api/enhance-set/jobs/dispatch', {
      token: owner.token,
      json: { draftId, imageIds: [imageId], modelId: 'nano-banana-edit', mode: 'edit_render', prompt: 'warm', references: [(await getDraft(baseUrl, stranger, theirDraft)).body.images[0].source_url] },
    });
    expect([refs.status, refs.body.error]).toEqual([400, 'A reference image was not found. Attach it again.']);
    expect(theirImage).toBeTruthy();
    expect((await getDraft(baseUrl, owner, draftId)).body.images).toHaveLength(1);
  });

  it('removes an image with its files; restore-version refuses a URL outside the history', async () => {
    const draftId = await createDraft(baseUrl, owner);
    const imageId = await addImage(baseUrl, owner, draftId);
    const image = (await getDraft(baseUrl, owner, draftId)).body.images[0];
    const restore = await request(baseUrl, '/api/enhance-set/drafts/restore-version', { token: owner.token, json: { draftId, imageId, versionUrl: '/api/files/drafts/nope.png' } });
    expect([restore.status, restore.body.error]).toEqual([404, 'That version is not in the image history']);
    const same = await request(baseUrl, '/api/enhance-set/drafts/restore-version', { token: owner.token, json: { draftId, imageId, versionUrl: image.resolved_url } });
    expect(same.status).toBe(200);
    const removed = await request(baseUrl, '/api/enhance-set/drafts/remove-image', { token: owner.token, json: { draftId, imageId, sourceUrl: image.source_url } });
    expect(removed.body).toEqual({ success: true });
    expect((await getDraft(baseUrl, owner, draftId)).body.images).toEqual([]);
    expect(await storage.objects.stat('drafts', image.metadata.storage.path)).toBeNull();
    expect((await request(baseUrl, '/api/enhance-set/drafts/remove-image', { token: owner.token, json: { draftId, imageId } })).status).toBe(404);
  });

  it('commits a draft into a new project with copied renders; the draft leaves the list, and deleting it leaves the project intact', async () => {
    const draftId = await createDraft(baseUrl, owner, 'Waterfront');
    await addImage(baseUrl, owner, draftId, await renderPng(320, 240), 'east.png');
    await addImage(baseUrl, owner, draftId, await renderPng(240, 320, { r: 200, g: 120, b: 80 }), 'west.png');
    const commit = await request(baseUrl, '/api/enhance-set/drafts/commit', { token: owner.token, json: { draftId, newProjectName: 'Waterfront final' } });
    expect(commit.status).toBe(200);
    expect(commit.body).toMatchObject({ success: true, projectName: 'Waterfront final', renders: 2 });
    const list = await request(baseUrl, '/api/enhance-set/drafts/list', { token: owner.token });
    expect(list.body.drafts.map((d: { id: string }) => d.id)).not.toContain(draftId);
    const content = await request(baseUrl, `/api/projects/${commit.body.projectId}/content`, { token: owner.token });
    expect(content.status).toBe(200);
    const renders = (content.body.content as Array<{ type: string; data: { file_name: string; file_url: string }; signed_url: string }>).filter((c) => c.type === 'render');
    expect(renders.map((r) => r.data.file_name).sort()).toEqual(['east.png', 'west.png']);
    for (const render of renders) expect(render.data.file_url.startsWith('/api/files/renders/')).toBe(true);
    // a second commit is refused, and the draft can still be deleted: the project's files are its own
    expect((await request(baseUrl, '/api/enhance-set/drafts/commit', { token: owner.token, json: { draftId, newProjectName: 'again' } })).status).toBe(404);
    expect((await request(baseUrl, '/api/enhance-set/drafts/delete', { token: owner.token, json: { draftId } })).body).toEqual({ success: true });
    expect(await testKnex()('draft_images').where({ draft_id: draftId })).toEqual([]);
    for (const render of renders) expect((await fetch(new URL(render.signed_url, baseUrl))).status).toBe(200);
  });

  it('deletes a draft with its files', async () => {
    const draftId = await createDraft(baseUrl, owner);
    await addImage(baseUrl, owner, draftId);
    const path = (await getDraft(baseUrl, owner, draftId)).body.images[0].metadata.storage.path;
    expect(await storage.objects.stat('drafts', path)).not.toBeNull();
    expect((await request(baseUrl, '/api/enhance-set/drafts/delete', { token: owner.token, json: { draftId } })).status).toBe(200);
    expect(await storage.objects.stat('drafts', path)).toBeNull();
    expect((await getDraft(baseUrl, owner, draftId)).status).toBe(404);
    expect((await request(baseUrl, '/api/enhance-set/drafts/delete', { token: owner.token, json: { draftId } })).status).toBe(404);
  });
});
