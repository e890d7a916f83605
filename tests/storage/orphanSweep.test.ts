import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ORPHAN_MIN_AGE_MS, sweepOrphanedRenderObjects } from '../../services/content/orphanedObjects';
import { createStorage, type Storage } from '../../storage';
import { closeTestKnex, testKnex } from '../support/db';
import { serve, type TestServer } from '../support/http';
import { runS3Server, s3ConfigFor, startS3Server, type S3Server } from '../support/objectStorage';
import { createApp } from '../../api/app';
import { createProject, newUser } from '../projects/fixtures';

/**
 * The sweep of stored objects without a row (a process killed between the put and the row insert), on both
 * backends, each with buckets of its own: an old object without a row goes; a young one, and any with a row, stay.
 */
let s3Server: Omit<S3Server, 'stop'> | null = null;
let stopS3: (() => Promise<void>) | null = null;
let diskRoot: string;
let server: TestServer;
const baseConfig = loadConfig();

beforeAll(async () => {
  s3Server = runS3Server();
  if (!s3Server) {
    const started = await startS3Server('orphans');
    s3Server = started;
    stopS3 = started.stop;
  }
  diskRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-orphans-'));
  server = await serve(createApp({ config: baseConfig, knex: testKnex(), logger }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (diskRoot) fs.rmSync(diskRoot, { recursive: true, force: true });
  await stopS3?.();
  await closeTestKnex();
}, 60_000);

const storages: Record<'local' | 's3', () => Storage> = {
  local: () => createStorage({ ...baseConfig, storageBackend: 'local', storageDir: diskRoot } as AppConfig),
  s3: () => createStorage({ ...baseConfig, storageBackend: 's3', s3: s3ConfigFor(s3Server!, 'orphans') } as AppConfig),
};

describe.each(['local', 's3'] as const)('orphaned object sweep: %s', (kind) => {
  it('removes old render files, thumbnails and previews that no row refers to, and nothing else', async () => {
    const storage = storages[kind]();
    const knex = testKnex();
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user);
    const file = (ext = 'png') => `${user.id}/${randomUUID()}.${ext}`;
    const thumbOf = (p: string) => `thumbs/${p.replace(/\.[a-z]+$/, '')}.webp`;
    const previewOf = (p: string) => `previews/${p.replace(/\.[a-z]+$/, '')}.webp`;
    const recorded = file();
    const legacy = file('jpg');
    const orphan = file();
    const orphanThumb = thumbOf(file());
    const orphanPreview = previewOf(file());
    const health = `_health/ready-${randomUUID()}`;
    for (const p of [recorded, thumbOf(recorded), previewOf(recorded), legacy, orphan, orphanThumb, orphanPreview, health]) await storage.objects.put('renders', p, Buffer.from(p));
    await knex('renders').insert([
      // its thumbnail and preview were stored but not yet recorded: they belong to the render all the same
      { project_id: project.id, workspace_id: user.id, file_url: `/api/files/renders/${recorded}`, file_name: 'a.png', aspect_ratio: '1:1', storage_bucket: 'renders', storage_path: recorded },
      // written before the storage columns: named by its URL only
      { project_id: project.id, workspace_id: user.id, file_url: `/api/files/renders/${legacy}`, file_name: 'b.jpg', aspect_ratio: '1:1' },
    ]);
    // the clock is the storage's own write times, as the sweep lists them: the young object is written (removed and
    // written anew while S3's whole seconds still give it the same time) until it is listed as written after every one
    // of the first objects, and a day after its time is the sweep's now below, so the cut-off lies between them
    const listedTimes = async () => new Map((await storage.objects.list('renders', '')).map((o) => [o.path, o.modifiedAt.getTime()]));
    const firstTimes = await listedTimes();
    const lastFirstWrite = Math.max(...firstTimes.values());
    expect(firstTimes.size).toBeGreaterThanOrEqual(7);
    let young = '';
    let youngWritten = -Infinity;
    for (const deadline = Date.now() + 10_000; youngWritten <= lastFirstWrite && Date.now() < deadline; ) {
      if (young) {
        await storage.objects.remove('renders', [young]);
        await new Promise((r) => setTimeout(r, 50));
      }
      young = file();
      await storage.objects.put('renders', young, Buffer.from('young'));
      youngWritten = (await listedTimes()).get(young) ?? -Infinity;
    }
    expect(youngWritten).toBeGreaterThan(lastFirstWrite);

    // nothing is a day old yet
    expect((await sweepOrphanedRenderObjects({ knex, storage, logger })).removed).toEqual([]);
    // a day after the young object's write: the first writes are older than a day, the young one is exactly a day old
    // (not older: it stays)
    const swept = await sweepOrphanedRenderObjects({ knex, storage, logger }, { now: youngWritten + ORPHAN_MIN_AGE_MS });
    expect(swept.removed.sort()).toEqual([`renders/${orphan}`, `renders/${orphanThumb}`, `renders/${orphanPreview}`].sort());
    for (const p of [orphan, orphanThumb, orphanPreview]) expect(await storage.objects.stat('renders', p)).toBeNull();
    for (const p of [recorded, thumbOf(recorded), previewOf(recorded), legacy, health, young]) expect(await storage.objects.stat('renders', p)).not.toBeNull();
  }, 60_000);
});
