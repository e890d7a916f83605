import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { gaussianNoise } from '../support/stills';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createRenderThumbnailActivities } from '../../activities/renderThumbnails';
import { createStorageSweepActivities } from '../../activities/storageSweep';
import { renderThumbnailWorkflowId } from '../../domain/workflowContracts/storage';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { ORPHAN_MIN_AGE_MS, sweepOrphanedRenderObjects } from '../../services/content/orphanedObjects';
import { PREVIEW_SIDE, THUMBNAIL_SIDE } from '../../services/content/renderThumbnails';
import { storageMaintenanceWorkflow } from '../../workflows';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { runStorage } from '../support/objectStorage';
import { testClient, uniqueTaskQueue, withWorker } from '../support/temporal';
import { createProject, fetchBytes, newUser, pngBytes, uploadRender } from './fixtures';

/**
 * A render's preview (docs/architecture.md "Originals and derived copies"): the library's item dialog shows a webp of
 * at most 2048 px each way made beside the thumbnail, never the original (up to 150 MB). Made in the request for small
 * uploads, by the worker for large ones, by the storage maintenance for renders stored before previews; listed as
 * `preview_url`; removed with the render. Real PostgreSQL, Temporal and storage.
 */
const queue = uniqueTaskQueue('previews');
let server: TestServer;
let temporal: Awaited<ReturnType<typeof testClient>>;

interface Listed {
  data: { id: string; thumbnail_url: string | null; preview_url: string | null; width: number; height: number };
  signed_url: string;
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

async function listed(user: { token: string }, projectId: string, renderId: string): Promise<Listed> {
  const res = await request<{ content: Listed[] }>(server.baseUrl, `/api/projects/${projectId}/content?refresh=1`, { token: user.token });
  expect(res.status).toBe(200);
  return res.body.content.find((i) => i.data.id === renderId)!;
}

/** The picture behind `link`: a webp whose longest side is `side`, of the original's shape. */
async function expectCopy(link: string, side: number, width: number, height: number): Promise<number> {
  const got = await fetchBytes(server.baseUrl, link);
  expect(got.status).toBe(200);
  const meta = await sharp(got.bytes).metadata();
  expect(meta.format).toBe('webp');
  expect(Math.max(meta.width!, meta.height!)).toBe(side);
  expect(meta.width! / meta.height!).toBeCloseTo(width / height, 2);
  return got.bytes.length;
}

async function stored(path: string): Promise<boolean> {
  return (await runStorage().objects.stat('renders', path)) !== null;
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

it('a 6000x4000 upload gets a 2048 px preview from the worker; the listing carries its URL, not the original; the preview goes with the render', async () => {
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  const bytes = await (await gaussianNoise(6000, 4000, { sigma: 24, background: { r: 150, g: 160, b: 175 } }))
    .jpeg({ quality: 88 })
    .toBuffer();
  const res = await uploadRender(server.baseUrl, user, project.id, { bytes, fileName: 'tower.jpg', type: 'image/jpeg' });
  expect(res.status).toBe(200);
  const renderId = res.body.render!.data.id as string;
  // 24 MP: recorded at once without its copies; the listing has neither yet
  expect(res.body.render!.data).toMatchObject({ thumbnail_url: null, preview_url: null });

  await withWorker({ taskQueue: queue, activities: activities() }, async () => {
    await waitFor('the preview', async () => (await testKnex()('renders').where({ id: renderId }).first())?.preview_path);
    expect(await temporal.client.workflow.getHandle(renderThumbnailWorkflowId(renderId)).result()).toBe('made');
  });
  const row = await testKnex()('renders').where({ id: renderId }).first();
  const stem = row.storage_path.replace(/\.jpg$/, '');
  expect(row).toMatchObject({ preview_path: `previews/${stem}.webp`, thumbnail_path: `thumbs/${stem}.webp` });

  const item = await listed(user, project.id, renderId);
  expect(item.data.preview_url).toEqual(expect.any(String));
  expect(item.data.preview_url).not.toBe(item.signed_url);
  expect(item.data).not.toHaveProperty('preview_path');
  const previewBytes = await expectCopy(item.data.preview_url!, PREVIEW_SIDE, 6000, 4000);
  expect(previewBytes).toBeLessThan(bytes.length / 4);
  await expectCopy(item.data.thumbnail_url!, THUMBNAIL_SIDE, 6000, 4000);
  // the original itself is unchanged (its link still answers its own bytes)
  const original = await fetchBytes(server.baseUrl, item.signed_url);
  expect(original.bytes.equals(bytes)).toBe(true);

  const removed = await request(server.baseUrl, `/api/projects/${project.id}/content/renders/${renderId}`, { method: 'DELETE', token: user.token });
  expect(removed.status).toBe(200);
  expect(await stored(row.storage_path)).toBe(false);
  expect(await stored(row.thumbnail_path)).toBe(false);
  expect(await stored(row.preview_path)).toBe(false);
  expect((await fetchBytes(server.baseUrl, item.data.preview_url!)).status).not.toBe(200);
}, 120_000);

it('a small upload gets its preview in the request (no larger than the image), and deleting its project removes it', async () => {
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  const res = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(1200, 800), fileName: 'small.png', type: 'image/png' });
  expect(res.status).toBe(200);
  const renderId = res.body.render!.data.id as string;
  const preview = res.body.render!.data.preview_url as string;
  expect(preview).toEqual(expect.any(String));
  // never enlarged
  await expectCopy(preview, 1200, 1200, 800);
  const row = await testKnex()('renders').where({ id: renderId }).first();
  expect(row.preview_path).toBe(`previews/${row.storage_path.replace(/\.png$/, '')}.webp`);
  expect(await stored(row.preview_path)).toBe(true);

  expect((await request(server.baseUrl, `/api/projects/${project.id}`, { method: 'DELETE', token: user.token })).status).toBe(200);
  expect(await stored(row.storage_path)).toBe(false);
  expect(await stored(row.preview_path)).toBe(false);
});

/** Uploads a render and makes it look stored before previews existed, a month ago: a thumbnail, no preview. */
async function renderFromBeforePreviews(user: TestUser, projectId: string, width: number, height: number) {
  const res = await uploadRender(server.baseUrl, user, projectId, { bytes: await pngBytes(width, height), fileName: 'old.png', type: 'image/png' });
  const renderId = res.body.render!.data.id as string;
  const before = await testKnex()('renders').where({ id: renderId }).first();
  await runStorage().objects.remove('renders', [before.preview_path]);
  await testKnex()('renders').where({ id: renderId }).update({ preview_path: null, created_at: new Date(Date.now() - 30 * 24 * 60 * 60 * 1000) });
  return { renderId, before };
}

it('a render stored before previews (a thumbnail, no preview) gets its preview from the maintenance run, whatever its age; the thumbnail is kept', async () => {
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  const { renderId, before } = await renderFromBeforePreviews(user, project.id, 3000, 1000);
  expect((await listed(user, project.id, renderId)).data.preview_url).toBeNull();
  // another workspace's render just like it, which a run for this workspace leaves alone
  const neighbour = await newUser(server.baseUrl);
  const neighbourProject = await createProject(server.baseUrl, neighbour);
  const untouched = await renderFromBeforePreviews(neighbour, neighbourProject.id, 600, 200);

  // the maintenance run over this test's workspace only (StorageMaintenanceInput): the shared test database holds the
  // renders of every other test file, which are not this test's business (tests/projects/deferredThumbnails.test.ts
  // runs the schedule's unscoped run)
  const outcome = await withWorker({ taskQueue: queue, activities: activities() }, () =>
    temporal.client.workflow.execute(storageMaintenanceWorkflow, {
      taskQueue: queue,
      workflowId: `storage-maintenance-test-${randomUUID()}`,
      args: [{ workspaceId: before.workspace_id }],
    }),
  );
  // this render's preview made (its thumbnail was there), nothing of the workspace removed
  expect(outcome).toEqual({ thumbnailsMade: 1, orphansRemoved: 0 });
  const after = await testKnex()('renders').where({ id: renderId }).first();
  expect(after).toMatchObject({ thumbnail_path: before.thumbnail_path, preview_path: before.preview_path });
  await expectCopy((await listed(user, project.id, renderId)).data.preview_url!, PREVIEW_SIDE, 3000, 1000);
  const thumbs = createRenderThumbnailActivities({ knex: testKnex(), storage: runStorage(), logger });
  expect(await thumbs.makeRenderThumbnail({ renderId })).toBe('present');
  expect(await testKnex()('renders').where({ id: untouched.renderId }).first('thumbnail_path', 'preview_path')).toEqual({
    thumbnail_path: untouched.before.thumbnail_path,
    preview_path: null,
  });
  const removed = await request(server.baseUrl, `/api/projects/${neighbourProject.id}/content/renders/${untouched.renderId}`, { method: 'DELETE', token: neighbour.token });
  expect(removed.status).toBe(200);
}, 180_000);

it('the orphan sweep for one workspace removes its old files, thumbnails and previews that no row names, and looks at nothing of another workspace', async () => {
  const storage = runStorage();
  const user = await newUser(server.baseUrl);
  const project = await createProject(server.baseUrl, user);
  const res = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(120, 80), fileName: 'kept.png', type: 'image/png' });
  const kept = await testKnex()('renders').where({ id: res.body.render!.data.id }).first();
  const other = await newUser(server.baseUrl);
  const orphansOf = (workspaceId: string) => {
    const stem = `${workspaceId}/${randomUUID()}`;
    return [`${stem}.png`, `thumbs/${workspaceId}/${randomUUID()}.webp`, `previews/${workspaceId}/${randomUUID()}.webp`];
  };
  const own = orphansOf(kept.workspace_id);
  const others = orphansOf(other.id);
  for (const path of [...own, ...others]) await storage.objects.put('renders', path, await pngBytes(8, 8));
  // a day on, when every object here is past the safe age
  const swept = await sweepOrphanedRenderObjects({ knex: testKnex(), storage, logger }, { workspaceId: kept.workspace_id, now: Date.now() + ORPHAN_MIN_AGE_MS + 60_000 });
  expect(swept.removed.sort()).toEqual(own.map((p) => `renders/${p}`).sort());
  // the render, its thumbnail and preview, and the three orphans were looked at; nothing else
  expect(swept.checked).toBe(6);
  for (const path of own) expect(await stored(path)).toBe(false);
  for (const path of [kept.storage_path, kept.thumbnail_path, kept.preview_path, ...others]) expect(await stored(path)).toBe(true);
  await storage.objects.remove('renders', others);
  await expect(sweepOrphanedRenderObjects({ knex: testKnex(), storage, logger }, { workspaceId: '../x' })).rejects.toThrow('not a workspace id');
});
