/**
 * An upload killed between its put and its row (the chaos soak killed an API there, and the checker found a stored
 * render without a row: issue 41 item 9) leaves its upload intent with the object (services/content/uploadIntents.ts):
 * the invariant checker counts the object as claimed, the abandoned-upload sweep removes it (with its thumbnail and
 * preview) once it is 10 minutes old, and the checker reports one the sweep left past its time. A recorded upload keeps
 * nothing of its claim, and an upload whose claim the sweep took refuses to record. Real PostgreSQL, local storage.
 *
 * On a database of this file's own: the sweeps here run as of 10 minutes on, and on the run's shared database they
 * would take the claims of uploads other files have in flight at that moment (which then refuse: UPLOAD_EXPIRED).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ProjectService } from '../../services/content/projects';
import { RenderUploadService, type StagedRender } from '../../services/content/renders';
import { ABANDONED_UPLOAD_AFTER_MS, ABANDONED_UPLOAD_SWEEP_EVERY_MS, sweepAbandonedUploads } from '../../services/content/uploadIntents';
import { checkInvariants } from '../../services/platform/invariants';
import { createStorage, type Storage } from '../../storage';
import type { Knex } from 'knex';
import { connectDatabase } from '../../db/connection';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { serve, type TestServer } from '../support/http';
import { createProject, newUser } from '../projects/fixtures';

let server: TestServer;
let db: ScratchDatabase;
let knex: Knex;
let root: string;
let storage: Storage;
let uploads: RenderUploadService;

beforeAll(async () => {
  const config = loadConfig();
  db = await createScratchDatabase('abandoned', { migrated: true });
  knex = connectDatabase(db.url, { min: 0, max: 5 });
  server = await serve(createApp({ config: { ...config, databaseUrl: db.url }, knex, logger }));
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-abandoned-'));
  // storage of this file's own: the checker's objects are these only
  storage = createStorage({ ...config, storageBackend: 'local', storageDir: root } as AppConfig);
  uploads = new RenderUploadService({ storage, projects: new ProjectService({ storage }), logger });
});

afterAll(async () => {
  await server?.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
  await knex?.destroy();
  await db?.drop();
});

async function png(): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 30, g: 90, b: Math.floor(Math.random() * 255) } } })
    .png()
    .toBuffer();
}

async function staged(workspaceId: string): Promise<StagedRender> {
  return uploads.stage(workspaceId, { stream: Readable.from(await png()), fileName: 'hall.png', declaredMime: 'image/png' });
}

const intentOf = (file: StagedRender['file']) => knex('upload_intents').where({ bucket: file.bucket, path: file.path }).first('stored_at');

/** The objects of this file's storage the checker reports without a row, as of `now`. */
async function reportedWithoutRow(now: number): Promise<string[]> {
  const report = await checkInvariants({ knex, storage: storage.objects }, { graceMs: 0, now });
  return report.storage.objectsWithoutRow;
}

it("claims a killed upload's object until the sweep, 10 minutes on, removes it", async () => {
  const user = await newUser(server.baseUrl, knex);
  // stored, then the process died before recording it: no complete(), no discard()
  const killed = await staged(user.id);
  expect(await storage.objects.stat(killed.file.bucket, killed.file.path)).not.toBeNull();
  expect((await intentOf(killed.file))?.stored_at).toBeInstanceOf(Date);

  // the checker: the object is claimed by its upload, not storage and database apart
  expect(await reportedWithoutRow(Date.now() + 1_000)).not.toContain(`renders/${killed.file.path}`);
  // the sweep: not before 10 minutes, then the object (and any thumbnail or preview beside it) and the claim go
  expect((await sweepAbandonedUploads({ knex, objects: storage.objects, logger })).removed).not.toContain(`renders/${killed.file.path}`);
  const swept = await sweepAbandonedUploads({ knex, objects: storage.objects, logger }, { now: Date.now() + ABANDONED_UPLOAD_AFTER_MS + 1_000 });
  expect(swept.removed).toContain(`renders/${killed.file.path}`);
  expect(await storage.objects.stat(killed.file.bucket, killed.file.path)).toBeNull();
  expect(await intentOf(killed.file)).toBeUndefined();
  expect(await reportedWithoutRow(Date.now() + 1_000)).toEqual([]);
});

it('reports an abandoned object the sweep left past its time', async () => {
  const user = await newUser(server.baseUrl, knex);
  const killed = await staged(user.id);
  const overdue = Date.now() + ABANDONED_UPLOAD_AFTER_MS + ABANDONED_UPLOAD_SWEEP_EVERY_MS + 60_000;
  expect(await reportedWithoutRow(overdue)).toContain(`renders/${killed.file.path}`);
  await sweepAbandonedUploads({ knex, objects: storage.objects, logger }, { now: overdue });
  expect(await reportedWithoutRow(overdue)).toEqual([]);
});

it('keeps nothing of the claim once the upload is recorded, and the sweep leaves the render alone', async () => {
  const user = await newUser(server.baseUrl, knex);
  const project = await createProject(server.baseUrl, user);
  const done = await staged(user.id);
  const result = await uploads.complete(user.id, project.id, done);
  expect(result.duplicate).toBe(false);
  expect(await intentOf(done.file)).toBeUndefined();
  await sweepAbandonedUploads({ knex, objects: storage.objects, logger }, { now: Date.now() + ABANDONED_UPLOAD_AFTER_MS + 1_000 });
  expect(await storage.objects.stat(done.file.bucket, done.file.path)).not.toBeNull();
  expect(await reportedWithoutRow(Date.now() + 1_000)).toEqual([]);

  // the same bytes again: a duplicate, whose own copy and claim go at once
  const again = await uploads.stage(user.id, { stream: Readable.from(await fs.promises.readFile(path.join(root, 'renders', done.file.path))), fileName: 'hall.png', declaredMime: 'image/png' });
  expect((await uploads.complete(user.id, project.id, again)).duplicate).toBe(true);
  expect(await storage.objects.stat(again.file.bucket, again.file.path)).toBeNull();
  expect(await intentOf(again.file)).toBeUndefined();
});

it('refuses to record an upload whose claim the sweep took (its object is gone), and records nothing', async () => {
  const user = await newUser(server.baseUrl, knex);
  const project = await createProject(server.baseUrl, user);
  const slow = await staged(user.id);
  await sweepAbandonedUploads({ knex, objects: storage.objects, logger }, { now: Date.now() + ABANDONED_UPLOAD_AFTER_MS + 1_000 });
  await expect(uploads.complete(user.id, project.id, slow)).rejects.toMatchObject({ status: 409, code: 'UPLOAD_EXPIRED' });
  expect(await knex('renders').where({ storage_path: slow.file.path })).toEqual([]);
});
