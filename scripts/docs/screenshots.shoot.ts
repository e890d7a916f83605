/**
 * The README's screenshots, taken by `npm run docs:screenshots` (scripts/docs/screenshots.ts runs this file with
 * jest, so the app starts exactly as in the browser tests: real PostgreSQL, Temporal, a worker, the built front
 * end). It goes through the flows of tests/browser/allViews.test.ts: a project with two renders and an approved
 * clip, an assembled video, and an AI image waiting for approval; then saves each view at 1440x900 as WebP under
 * docs/images/ (each under 200 KB).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { clipUser, startClip, startClipWorker, waitForJob, type ClipUser, type RunningWorker } from '../../tests/clips/fixtures';
import { startBrowserApp, useSession, type BrowserApp } from '../../tests/support/browser';
import { closeTestKnex, testKnex } from '../../tests/support/db';
import { request } from '../../tests/support/http';
import { houseStill } from '../../tests/support/stills';
import { uniqueTaskQueue } from '../../tests/support/temporal';

const IMAGES = path.resolve(__dirname, '..', '..', 'docs', 'images');
const MAX_BYTES = 200 * 1024;
const WIDTH = 1280;

let app: BrowserApp;
let worker: RunningWorker;
let user: ClipUser;
const taskQueue = uniqueTaskQueue('docs-screenshots');

jest.setTimeout(300_000);

beforeAll(async () => {
  app = await startBrowserApp({
    viewport: { width: 1440, height: 900 },
    taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue },
    config: () => ({ videoPreset: 'ultrafast' }),
  });
  worker = await startClipWorker(taskQueue);
  user = await clipUser(app.baseUrl, { extraCredits: 20 });

  // a second render in the project
  const form = new FormData();
  form.append('projectId', user.projectId);
  form.append('file', new Blob([new Uint8Array(await houseStill(960, 540).jpeg({ quality: 90 }).toBuffer())], { type: 'image/jpeg' }), 'garden-house.jpg');
  const upload = await request(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect([200, 201]).toContain(upload.status);

  // an approved clip in the library
  const started = await startClip(app.baseUrl, user, { movement: 'Zoom In', platform: 'YouTube' });
  const { job } = await waitForJob(app.baseUrl, user, started.body.jobId!);
  expect(job.status).toBe('completed');
  const approved = await request(app.baseUrl, '/api/approvals/approve', { token: user.token, json: { approvalId: job.result!.approvalId } });
  expect(approved.status).toBe(200);

  // an assembled video made of it, as tests/browser/allViews.test.ts records one
  const clip = await testKnex()('clips').where({ project_id: user.projectId }).first();
  await testKnex()('compiled_videos').insert({
    project_id: user.projectId,
    workspace_id: user.id,
    file_url: clip.file_url,
    file_name: 'Harbour View - YouTube assembly.mp4',
    duration: 5,
    clip_ids: [clip.id],
    editing_data: { status: 'approved', platform: 'youtube', aspect_ratio: '16:9' },
    storage_bucket: clip.storage_bucket,
    storage_path: clip.storage_path,
    storage_mime: clip.storage_mime,
    storage_size: clip.storage_size,
  });

  // an AI image and a second clip waiting in Approvals
  const image = await request(app.baseUrl, '/api/ai-image-simple', {
    token: user.token,
    json: {
      workflow: 'ENHANCED_IMAGE_EDITING',
      context: { projectId: user.projectId, userId: user.id, userIntent: 'dusk', platform: 'web' },
      parameters: { prompt: 'a warm dusk with lights in every window', baseImage: user.renderId },
    },
  });
  expect(image.status).toBe(200);
  const second = await startClip(app.baseUrl, user, { movement: 'Pan Right', platform: 'Instagram' });
  await waitForJob(app.baseUrl, user, second.body.jobId!);

  // a name a person would have, in the sidebar
  await testKnex()('profiles').where({ id: user.id }).update({ name: 'Maya Chen', email: 'maya@harbour-studio.example' });
  await testKnex()('users').where({ id: user.id }).update({ email: 'maya@harbour-studio.example' });
  await useSession(app, user.token);
}, 300_000);

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await closeTestKnex();
});

/** The page as it shows now, at most WIDTH wide, as WebP small enough for the README. */
async function save(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load');
  // images decoded, transitions over
  await page.waitForTimeout(1200);
  const png = await page.screenshot({ type: 'png' });
  fs.mkdirSync(IMAGES, { recursive: true });
  for (const quality of [75, 65, 55, 45]) {
    const webp = await sharp(png).resize({ width: WIDTH, withoutEnlargement: true }).webp({ quality, effort: 6 }).toBuffer();
    if (webp.length <= MAX_BYTES) {
      fs.writeFileSync(path.join(IMAGES, `${name}.webp`), webp);
      return;
    }
  }
  throw new Error(`${name}: no WebP under ${MAX_BYTES} bytes`);
}

test('a project with its renders, clip and video', async () => {
  await app.page.goto(`/?view=overview&project=${user.projectId}`);
  await app.page.locator('li.library-item[data-type="clip"]').first().waitFor();
  await app.page.getByRole('button', { name: /^Open video / }).first().waitFor();
  await save(app.page, 'project');
});

test('the approval queue', async () => {
  await app.page.goto('/?view=approvals');
  await app.page.locator('.approval-card').nth(1).waitFor();
  await save(app.page, 'approvals');
});

test('video assembly', async () => {
  await app.page.goto('/?view=video-assembly');
  await app.page.getByRole('heading', { name: 'Your clips' }).waitFor();
  // one clip chosen and a project to save into: the dry run's timeline shows
  await app.page.getByRole('button', { name: /^Select harbour-view/ }).first().click();
  await app.page.getByLabel('Save to project').selectOption({ label: 'Harbour View' });
  await app.page.locator('.timeline-clip').first().waitFor();
  await save(app.page, 'video-assembly');
});
