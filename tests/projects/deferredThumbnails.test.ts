import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createRenderThumbnailActivities } from '../../activities/renderThumbnails';
import { createStorageSweepActivities } from '../../activities/storageSweep';
import { renderThumbnailWorkflowId, type StorageMaintenanceResult } from '../../domain/workflowContracts/storage';
import { createContentServices } from '../../services/content/contentServices';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { INLINE_THUMBNAIL_MAX_PIXELS, rendersMissingThumbnails, THUMBNAIL_SIDE } from '../../services/content/renderThumbnails';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { runStorage } from '../support/objectStorage';
import { testClient, uniqueTaskQueue, withWorker } from '../support/temporal';
import { createProject, fetchBytes, newUser, uploadRender } from './fixtures';

/**
 * Large uploads are recorded without their thumbnail; a worker adds it (workflow `render-thumbnail-<renderId>`), and
 * the hourly storage maintenance makes the ones a crash left missing. Real PostgreSQL, Temporal and storage.
 */
const queue = uniqueTaskQueue('thumbnails');
let server: TestServer;
let temporal: Awaited<ReturnType<typeof testClient>>;

/** Few bytes, many pixels: over INLINE_THUMBNAIL_MAX_PIXELS, so its thumbnail is deferred whatever its size. */
async function bigFlatPng(): Promise<{ bytes: Buffer; width: number; height: number }> {
  const width = 4800;
  const height = Math.ceil(INLINE_THUMBNAIL_MAX_PIXELS / width) + 200;
  const bytes = await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: Math.floor(Math.random() * 255) } } }).png().toBuffer();
  return { bytes, width, height };
}

const activities = () => ({
  ...createRenderThumbnailActivities({ knex: testKnex(), storage: runStorage(), logger }),
  ...createStorageSweepActivities({ knex: testKnex(), storage: runStorage(), logger }),
});

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function checkThumbnail(link: string, width: number, height: number): Promise<void> {
  const thumb = await fetchBytes(server.baseUrl, link);
  expect(thumb.status).toBe(200);
  const meta = await sharp(thumb.bytes).metadata();
  expect(meta.format).toBe('webp');
  expect(Math.max(meta.width!, meta.height!)).toBe(THUMBNAIL_SIDE);
  expect(meta.width! / meta.height!).toBeCloseTo(width / height, 1);
}

beforeAll(async () => {
  temporal = await testClient();
  server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, taskQueues: { media: queue } }));
});

afterAll(async () => {
  await server.close();
  await temporal.close();
  await closeTemporalClient();
  await closeTestKnex();
});

it('records a large upload at once with its real dimensions, and a worker adds the thumbnail and tells the browser', async () => {
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  const { bytes, width, height } = await bigFlatPng();
  const res = await uploadRender(server.baseUrl, user, project.id, { bytes, fileName: 'large.png', type: 'image/png' });
  expect(res.status).toBe(200);
  expect(res.body.processingInfo).toMatchObject({ width, height, thumbnailUrl: null });
  const renderId = res.body.render!.data.id as string;
  const row = await testKnex()('renders').where({ id: renderId }).first();
  expect(row).toMatchObject({ width, height, thumbnail_path: null });

  await withWorker({ taskQueue: queue, activities: activities() }, async () => {
    // the API starts the workflow after answering
    await waitFor('the thumbnail', async () => (await testKnex()('renders').where({ id: renderId }).first())?.thumbnail_path);
    expect(await temporal.client.workflow.getHandle(renderThumbnailWorkflowId(renderId)).result()).toBe('made');
  });
  const after = await testKnex()('renders').where({ id: renderId }).first();
  expect(after.thumbnail_path).toBe(`thumbs/${row.storage_path.replace(/\.png$/, '')}.webp`);
  // the library shows it, and the browser was told
  const listing = await request<{ content: Array<{ data: { id: string; thumbnail_url: string | null } }> }>(server.baseUrl, `/api/projects/${project.id}/content?refresh=1`, { token: user.token });
  const item = listing.body.content.find((i) => i.data.id === renderId)!;
  await checkThumbnail(item.data.thumbnail_url!, width, height);
  const events = await testKnex()('user_events').where({ workspace_id: user.id });
  expect(events.map((e) => e.payload)).toContainEqual(expect.objectContaining({ kind: 'content', change: 'updated', contentKind: 'render', itemId: renderId }));
}, 120_000);

it('a render left without a thumbnail (the process died before the workflow started) gets it from the maintenance run; and a second try leaves it as it is', async () => {
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  // an upload service that cannot start workflows: the row is written, the thumbnail is not started
  const services = createContentServices({ config: loadConfig(), logger });
  const { bytes, width, height } = await bigFlatPng();
  const staged = await services.uploads.stage(user.id, { stream: Readable.from([bytes]), fileName: 'crash.png', declaredMime: 'image/png' });
  const result = await services.uploads.complete(user.id, project.id, staged);
  const renderId = result.render.data.id as string;
  expect(result.processingInfo.thumbnailUrl).toBeNull();
  // past the grace period in which its own workflow would be on it
  await testKnex()('renders').where({ id: renderId }).update({ created_at: new Date(Date.now() - 10 * 60 * 1000) });

  const outcome = await withWorker({ taskQueue: queue, activities: activities() }, () =>
    // for this workspace: unscoped, the run would make thumbnails and previews for every test file's renders in the
    // shared database (its unscoped listing is checked below, without making anything)
    temporal.client.workflow.execute('storageMaintenanceWorkflow', {
      taskQueue: queue,
      workflowId: `storage-maintenance-test-${randomUUID()}`,
      args: [{ workspaceId: user.id }],
    }),
  ) as StorageMaintenanceResult;
  expect(outcome.thumbnailsMade).toBe(1);
  const row = await testKnex()('renders').where({ id: renderId }).first();
  expect(row.thumbnail_path).toBe(`thumbs/${row.storage_path.replace(/\.png$/, '')}.webp`);
  await checkThumbnail(runStorage().urls.sign('renders', row.thumbnail_path), width, height);

  // once made it is not made again, and a render that is gone is left alone
  const thumbs = createRenderThumbnailActivities({ knex: testKnex(), storage: runStorage(), logger });
  expect(await thumbs.makeRenderThumbnail({ renderId })).toBe('present');
  expect(await thumbs.makeRenderThumbnail({ renderId: randomUUID() })).toBe('gone');
}, 180_000);

it("the hourly run's listing (no workspace) takes renders without a thumbnail from every workspace", async () => {
  const services = createContentServices({ config: loadConfig(), logger });
  const { bytes } = await bigFlatPng();
  const renderIds: string[] = [];
  for (const name of ['first', 'second']) {
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user);
    const staged = await services.uploads.stage(user.id, { stream: Readable.from([bytes]), fileName: `${name}.png`, declaredMime: 'image/png' });
    renderIds.push((await services.uploads.complete(user.id, project.id, staged)).render.data.id as string);
  }
  await testKnex()('renders').whereIn('id', renderIds).update({ created_at: new Date(Date.now() - 10 * 60 * 1000) });
  const listed = await rendersMissingThumbnails(testKnex(), { limit: 1_000_000 });
  expect(renderIds.filter((id) => listed.includes(id))).toEqual(renderIds);
  await testKnex()('renders').whereIn('id', renderIds).delete();
});
