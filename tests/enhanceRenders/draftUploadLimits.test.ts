/**
 * Enhance Renders draft uploads are counted and swept (services/generation/draftUploads.ts), on real PostgreSQL and
 * storage: a slot is taken before a byte is stored (4 images per draft counting uploads not yet added, 6 waiting
 * references, DRAFT_UPLOADS_WAITING_PER_ACCOUNT per account), concurrent uploads never get past the limit, and
 * uploads never registered are removed (row and file) once DRAFT_UPLOAD_MAX_AGE_MINUTES have passed.
 */
import { createApp } from '../../api/app';
import { BackgroundWork, type AppDeps } from '../../api/deps';
import { draftUploadsFor } from '../../api/routes/enhanceSet';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { DRAFTS_BUCKET, draftFolder } from '../../domain/enhanceRenders';
import { DraftUploads } from '../../services/generation/draftUploads';
import { uploadLimitRefusalsTotal, uploadsSweptTotal } from '../../services/platform/metrics';
import { createStorage } from '../../storage';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createDraft, renderPng, unlockedUser, uploadFile } from './support';

const config: AppConfig = { ...loadConfig(), draftUploadsWaitingPerAccount: 8 };
const storage = createStorage(config);
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  server = await serve(createApp({ config, knex: testKnex(), logger }));
  baseUrl = server.baseUrl;
});

afterAll(async () => {
  await server?.close();
  await closeTestKnex();
});

async function storedFiles(user: TestUser, draftId: string, folder: 'uploads' | 'references'): Promise<string[]> {
  return (await storage.objects.list(DRAFTS_BUCKET, `${draftFolder(user.id, draftId)}/${folder}`)).map((o) => o.path);
}

async function counted(counter: typeof uploadLimitRefusalsTotal | typeof uploadsSweptTotal, label: string): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => Object.values(v.labels).includes(label))?.value ?? 0;
}

function addImages(user: TestUser, draftId: string, urls: string[]) {
  return request(baseUrl, '/api/enhance-set/drafts/add-images', { token: user.token, json: { draftId, images: urls.map((source_url) => ({ source_url })) } });
}

/** Makes the user's upload rows look `minutes` old, as if they had waited that long. */
async function age(user: TestUser, minutes: number): Promise<void> {
  await testKnex()('draft_uploads').where({ workspace_id: user.id }).update({ created_at: testKnex().raw("now() - ? * interval '1 minute'", [minutes]) });
}

describe('draft upload slots', () => {
  it('concurrent uploads into an empty draft keep exactly 4; the rest are refused with the spec text before anything is stored', async () => {
    const user = await unlockedUser(baseUrl);
    const draftId = await createDraft(baseUrl, user);
    const refusedBefore = await counted(uploadLimitRefusalsTotal, 'draft_images');
    const pictures = await Promise.all(Array.from({ length: 8 }, (_, i) => renderPng(200 + i, 150)));
    const answers = await Promise.all(pictures.map((bytes) => uploadFile(baseUrl, user, draftId, bytes)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => [a.status, a.body.code, a.body.error])).toEqual(Array(4).fill([409, 'DRAFT_IMAGE_LIMIT', 'Limit reached: maximum 4 images per draft']));
    expect(await storedFiles(user, draftId, 'uploads')).toHaveLength(4);
    expect(await testKnex()('draft_uploads').where({ draft_id: draftId })).toHaveLength(4);
    expect((await counted(uploadLimitRefusalsTotal, 'draft_images')) - refusedBefore).toBe(4);
  });

  it('a draft keeps at most 6 references waiting to be used; the 7th is refused before it is stored', async () => {
    const user = await unlockedUser(baseUrl);
    const draftId = await createDraft(baseUrl, user);
    for (let i = 0; i < 6; i += 1) expect((await uploadFile(baseUrl, user, draftId, await renderPng(100 + i, 80), { purpose: 'reference' })).status).toBe(200);
    const refusedBefore = await counted(uploadLimitRefusalsTotal, 'draft_references');
    const seventh = await uploadFile(baseUrl, user, draftId, await renderPng(90, 80), { purpose: 'reference' });
    expect([seventh.status, seventh.body.code]).toEqual([409, 'DRAFT_REFERENCE_LIMIT']);
    expect(seventh.body.error).toBe('Limit reached: maximum 6 attachments waiting in a draft. Run a job with them, or upload more once unused ones are removed (30 minutes after upload).');
    expect(await storedFiles(user, draftId, 'references')).toHaveLength(6);
    expect((await counted(uploadLimitRefusalsTotal, 'draft_references')) - refusedBefore).toBe(1);
    // references are not images: the draft still takes its 4 images
    expect((await uploadFile(baseUrl, user, draftId, await renderPng())).status).toBe(200);
  });

  it('an account holds at most DRAFT_UPLOADS_WAITING_PER_ACCOUNT uploads not yet added over all its drafts (429); an added one frees its slot', async () => {
    const user = await unlockedUser(baseUrl);
    const first = await createDraft(baseUrl, user, 'First');
    const second = await createDraft(baseUrl, user, 'Second');
    const kept = [];
    for (let i = 0; i < 4; i += 1) kept.push(await uploadFile(baseUrl, user, first, await renderPng(110 + i, 80)));
    for (let i = 0; i < 4; i += 1) kept.push(await uploadFile(baseUrl, user, second, await renderPng(130 + i, 80), { purpose: 'reference' }));
    expect(kept.map((k) => k.status)).toEqual(Array(8).fill(200));
    const refusedBefore = await counted(uploadLimitRefusalsTotal, 'draft_waiting_uploads');
    const ninth = await uploadFile(baseUrl, user, second, await renderPng(140, 80));
    expect([ninth.status, ninth.body.code]).toEqual([429, 'TOO_MANY_WAITING_DRAFT_UPLOADS']);
    expect(ninth.body.error).toBe('Too many draft uploads not yet added to a draft: at most 8 at once. Add them to their draft, or upload more once unused ones are removed (30 minutes after upload).');
    expect(await storedFiles(user, second, 'uploads')).toHaveLength(0);
    expect((await counted(uploadLimitRefusalsTotal, 'draft_waiting_uploads')) - refusedBefore).toBe(1);
    // another user is not held up
    const other = await unlockedUser(baseUrl);
    expect((await uploadFile(baseUrl, other, await createDraft(baseUrl, other), await renderPng())).status).toBe(200);
    // added to its draft, an upload no longer waits: its slot is free
    expect((await addImages(user, first, [kept[0].body.url])).status).toBe(200);
    expect((await uploadFile(baseUrl, user, second, await renderPng(141, 80))).status).toBe(200);
  });

  it('the sweep removes uploads never added (row and file) once they are older than DRAFT_UPLOAD_MAX_AGE_MINUTES; added and younger ones stay', async () => {
    const user = await unlockedUser(baseUrl);
    const draftId = await createDraft(baseUrl, user);
    const ups = [];
    for (let i = 0; i < 3; i += 1) ups.push(await uploadFile(baseUrl, user, draftId, await renderPng(150 + i, 90)));
    const reference = await uploadFile(baseUrl, user, draftId, await renderPng(160, 90), { purpose: 'reference' });
    expect((await addImages(user, draftId, [ups[0].body.url])).status).toBe(200);
    const sweeper = new DraftUploads({ knex: testKnex(), storage, limits: { maxAgeMinutes: config.draftUploadMaxAgeMinutes, waitingPerAccount: 8 } });

    await age(user, config.draftUploadMaxAgeMinutes - 1);
    await sweeper.sweepUnregistered();
    expect(await storedFiles(user, draftId, 'uploads')).toHaveLength(3);

    const sweptBefore = await counted(uploadsSweptTotal, 'draft');
    await age(user, config.draftUploadMaxAgeMinutes + 1);
    expect(await sweeper.sweepUnregistered()).toBeGreaterThanOrEqual(3);
    expect((await counted(uploadsSweptTotal, 'draft')) - sweptBefore).toBeGreaterThanOrEqual(3);
    expect(await storedFiles(user, draftId, 'uploads')).toEqual([ups[0].body.storage.path]);
    expect(await storedFiles(user, draftId, 'references')).toHaveLength(0);
    expect(await testKnex()('draft_uploads').where({ draft_id: draftId }).select('path', 'registered_at')).toEqual([{ path: ups[0].body.storage.path, registered_at: expect.any(Date) }]);
    expect(reference.status).toBe(200);
    // a swept upload cannot be added any more, and its slot is free again
    const late = await addImages(user, draftId, [ups[1].body.url]);
    expect([late.status, late.body.error]).toEqual([400, 'The uploaded file was not found. Upload it again.']);
    for (let i = 0; i < 3; i += 1) expect((await uploadFile(baseUrl, user, draftId, await renderPng(170 + i, 90))).status).toBe(200);
  });

  it('the API process sweeps on its own once started and stops with it; an app without background work never sweeps', async () => {
    const user = await unlockedUser(baseUrl);
    const draftId = await createDraft(baseUrl, user);
    expect((await uploadFile(baseUrl, user, draftId, await renderPng())).status).toBe(200);
    await age(user, config.draftUploadMaxAgeMinutes + 5);

    draftUploadsFor({ config, knex: testKnex(), logger } as AppDeps, 10);
    await new Promise((r) => setTimeout(r, 400));
    expect(await storedFiles(user, draftId, 'uploads')).toHaveLength(1);

    const background = new BackgroundWork();
    draftUploadsFor({ config, knex: testKnex(), logger, background } as AppDeps, 10);
    const deadline = Date.now() + 10_000;
    while ((await storedFiles(user, draftId, 'uploads')).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await background.close();
    expect(await storedFiles(user, draftId, 'uploads')).toHaveLength(0);
    expect(await testKnex()('draft_uploads').where({ draft_id: draftId })).toHaveLength(0);
  });
});
