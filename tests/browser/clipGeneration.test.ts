import type { Page } from 'playwright-core';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { fileRefOfLink } from '../support/objectStorage';
import { uniqueTaskQueue } from '../support/temporal';
import { renderJpeg, startClipWorker, type RunningWorker } from '../clips/fixtures';

/** aria-valuenow of the progress bar, or null when none is shown. */
async function progressValue(page: Page): Promise<number | null> {
  const bar = page.getByRole('progressbar', { name: 'Video generation progress' });
  if ((await bar.count()) === 0) return null;
  const value = await bar.first().getAttribute('aria-valuenow');
  return value === null ? null : Number(value);
}

describe('Generate Clip in the browser', () => {
  let app: BrowserApp;
  let worker: RunningWorker;
  let user: TestUser;
  let projectId: string;
  const taskQueue = uniqueTaskQueue('clip-browser');

  beforeAll(async () => {
    app = await startBrowserApp({ taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } });
    // a slower encode keeps the job running long enough to reload and to watch from a second browser
    worker = await startClipWorker(taskQueue, { providerOptions: { videoPreset: 'slow' } });
    user = await createTestUser(app.baseUrl, { name: 'Ada Lovelace' });
    await useSession(app, user.token);
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
    projectId = project.body.project.id;
  });

  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await closeTestKnex();
  });

  it('uploads a render, generates a clip with live progress, and after approval plays it in the library', async () => {
    const { page } = app;
    await page.goto(`/?project=${projectId}`);
    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    await page.locator('input[type="file"]').first().setInputFiles({ name: 'harbour-view.jpg', mimeType: 'image/jpeg', buffer: await renderJpeg() });
    await page.getByRole('button', { name: 'Open render harbour-view.jpg' }).click();
    await page.getByRole('button', { name: 'Generate Clip' }).click();

    await page.getByRole('heading', { name: 'Generate Clip', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('view')).toBe('clip-generation');
    await page.getByRole('complementary', { name: 'Source image' }).getByText('harbour-view.jpg').waitFor();
    await page.getByText('Choose Video Effect').waitFor();
    await page.getByText('Target Platform').waitFor();
    await page.getByText('Generate Your Video').waitFor();
    const generate = page.getByRole('button', { name: 'Generate Video' });
    expect(await generate.isDisabled()).toBe(true);

    await page.getByText('Drone Shot', { exact: true }).click();
    await page.getByText('Instagram', { exact: true }).click();
    const summary = page.getByLabel('Summary');
    await summary.getByText('Drone Shot').waitFor();
    await summary.getByText('Instagram').waitFor();
    await summary.getByText('9:16').waitFor();
    await app.screenshot('clip-generation-choices');
    await generate.click();

    await page.getByRole('progressbar', { name: 'Video generation progress' }).waitFor();
    // 000 section 7: the start's options carried the originalPrompt (the chosen effect in words), kept with the job
    const job = await testKnex()('video_generation_jobs').where({ workspace_id: user.id }).first('options');
    expect(job.options).toMatchObject({ effect: 'Drone Shot', platform: 'Instagram', prompt: 'Drone Shot: An aerial pull-back that reveals the building' });
    await page.getByText('Please wait for current generation to complete').waitFor();
    await app.screenshot('clip-generation-progress');

    // a second browser (another context with the same session) finds the same job and its progress
    const second = await app.browser.newContext({ baseURL: app.baseUrl });
    await second.addCookies([{ name: 'rs_session', value: user.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
    const other = await second.newPage();
    await other.goto(page.url());
    await other.getByRole('progressbar', { name: 'Video generation progress' }).waitFor();
    await other.getByText('Drone Shot · Instagram · 9:16').waitFor();
    await second.close();

    // so does a reload
    await page.reload();
    await page.getByRole('progressbar', { name: 'Video generation progress' }).waitFor({ timeout: 15_000 });

    const values: number[] = [];
    const deadline = Date.now() + 240_000;
    while (Date.now() < deadline) {
      const value = await progressValue(page);
      if (value !== null) values.push(value);
      if (await page.getByRole('heading', { name: 'Your clip is ready for approval' }).isVisible()) break;
      await page.waitForTimeout(300);
    }
    await page.getByRole('heading', { name: 'Your clip is ready for approval' }).waitFor();
    expect(await progressValue(page)).toBe(100);
    for (let i = 1; i < values.length; i += 1) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1]);
    expect(values.some((v) => v > 10 && v < 100)).toBe(true);
    // credits are re-read a second after the end: 4 of the 5 are now held for the approval
    await page.getByRole('region', { name: 'Credits' }).getByText('4 reserved for pending approvals').waitFor({ timeout: 10_000 });

    // approve it in the Approvals view: the watermarked preview is there, Save charges the 4 credits
    await page.getByRole('button', { name: 'Open Approvals' }).click();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    const fileName = 'harbour-view - Drone Shot (9x16).mp4';
    await page.getByRole('button', { name: `Save 4 credits: ${fileName}` }).click();
    await page.getByText('Saved successfully!').waitFor({ timeout: 30_000 });
    const approval = await testKnex()('pending_approvals').where({ workspace_id: user.id, content_type: 'clip' }).first('status');
    expect(approval.status).toBe('approved');
    // the saved clip keeps the prompt it was started with
    const clip = await testKnex()('clips').where({ project_id: projectId }).first('prompt_used');
    expect(clip.prompt_used).toBe('Drone Shot: An aerial pull-back that reveals the building');
    await page.getByRole('region', { name: 'Credits' }).getByText('1 credit', { exact: false }).waitFor({ timeout: 10_000 });

    await page.goto(`/?project=${projectId}`);
    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    await page.getByRole('tab', { name: 'Clips' }).click();
    const card = page.locator('li.library-item[data-type="clip"]');
    await card.waitFor({ timeout: 15_000 });
    await card.getByText('9:16', { exact: true }).waitFor();
    await card.getByText('0:05', { exact: true }).waitFor();
    expect(fileRefOfLink((await card.locator('img').getAttribute('src')) as string)?.bucket).toBe('clips');
    expect(await card.locator('img').evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0)).toBe(true);

    await card.getByRole('button', { name: /^Open clip/ }).click();
    const video = page.locator('dialog video');
    await video.waitFor();
    interface VideoElement {
      muted: boolean;
      play(): Promise<void>;
      readyState: number;
      currentTime: number;
      duration: number;
      videoWidth: number;
      videoHeight: number;
    }
    const played = await video.evaluate(async (el: VideoElement) => {
      el.muted = true;
      await el.play();
      const started = Date.now();
      while (el.currentTime < 0.5 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 100));
      return { readyState: el.readyState, currentTime: el.currentTime, duration: el.duration, width: el.videoWidth, height: el.videoHeight };
    });
    expect(played.currentTime).toBeGreaterThan(0.5);
    expect(played.readyState).toBeGreaterThanOrEqual(2);
    expect(Math.abs(played.duration - 5)).toBeLessThan(0.1);
    expect({ width: played.width, height: played.height }).toEqual({ width: 720, height: 1280 });
    expect(app.pageErrors).toEqual([]);
    await app.screenshot('clip-generation-library');
  }, 300_000);

  it('shows the pending-cap overlay and the no-source message', async () => {
    const { page } = app;
    const capped = await createTestUser(app.baseUrl);
    const second = await app.browser.newContext({ baseURL: app.baseUrl });
    await second.addCookies([{ name: 'rs_session', value: capped.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
    const other = await second.newPage();
    // the check is held until the test has seen its loading text (a fixed delay raced a slow first render)
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    await other.route('**/api/credits/can-create?type=clip', async (route) => {
      await released;
      await route.fulfill({ json: { success: true, data: { canCreate: false, reason: 'pending_limit', cost: 4, available: 1, limit: 1, pendingCount: 1, pendingCost: 4 } } });
    });
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: capped.token, json: { name: 'Capped' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    form.append('file', new Blob([new Uint8Array(await renderJpeg(320, 180))], { type: 'image/jpeg' }), 'small.jpg');
    const upload = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: capped.token });
    await other.goto(`/?view=clip-generation&project=${project.body.project.id}&render=${upload.body.render.data.id}`);
    await other.getByText('Checking credit availability...').waitFor();
    release();
    const overlay = other.getByRole('alertdialog', { name: 'Pending approvals limit reached' });
    await overlay.waitFor();
    await overlay.getByText('You already have 1 pending approval. The maximum is 1.', { exact: false }).waitFor();
    await overlay.getByRole('button', { name: 'Open Approvals' }).waitFor();
    await overlay.getByRole('button', { name: 'Back to Project' }).click();
    await other.getByRole('heading', { name: 'Capped', level: 1 }).waitFor();

    await page.goto(`/?view=clip-generation&project=${projectId}`);
    await page.getByText('No content selected for video generation.').waitFor();
    await second.close();
  });
});
