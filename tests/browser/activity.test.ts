/**
 * The Activity view in Chromium, at desktop and phone sizes: a running clip with its progress, cancelled from the
 * view with its credits given back; an admin's "All users" list with links to the Temporal UI.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createProviders } from '../../providers';
import { makeAdmin } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { uniqueTaskQueue } from '../support/temporal';
import { clipTestConfig, clipUser, creditState, expectLedgerOk, startClip, startClipWorker, type RunningWorker } from '../clips/fixtures';

const KEY = 'activity-key';
const SLOW_MODEL = 'fake/video-slow';
const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page
    .locator('html')
    .evaluate((root: { scrollWidth: number; clientWidth: number }) => ({ scrollWidth: root.scrollWidth, clientWidth: root.clientWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

async function openActivity(page: Page, phone: boolean): Promise<void> {
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('complementary', { name: 'Sidebar' }).getByRole('button', { name: 'Activity' }).click();
  await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
  expect(new URL(page.url()).searchParams.get('view')).toBe('activity');
}

/** The sidebar's credit box shows `text` (on a phone the slide-in menu is opened for it, then closed). */
async function creditsShow(page: Page, phone: boolean, text: string): Promise<void> {
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  const credits = page.getByRole('region', { name: 'Credits' });
  await credits.getByText(text, { exact: false }).waitFor({ timeout: 10_000 });
  if (text.endsWith('credits')) expect(await credits.getByText('reserved', { exact: false }).count()).toBe(0);
  if (phone) await page.getByRole('button', { name: 'Close menu' }).click();
}

describe('Activity view in the browser', () => {
  let app: BrowserApp;
  let worker: RunningWorker;
  let fal: FakeFal;
  let workDir: string;
  const taskQueue = uniqueTaskQueue('activity-browser');

  beforeAll(async () => {
    fal = await startFakeFal({ apiKey: KEY, models: { [SLOW_MODEL]: { kind: 'video', behaviour: 'never-complete', queuedPolls: 1 } } });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'activity-browser-'));
    app = await startBrowserApp({ taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } });
    // a hosted video job that runs until cancelled: the clip stays running while the view is looked at
    const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: SLOW_MODEL });
    worker = await startClipWorker(taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100, expectedVideoRunMs: 60_000 }) });
  });

  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await fal?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await closeTestKnex();
  });

  describe.each(SIZES)('at $width x $height', ({ name, width, height }) => {
    const phone = width < 768;

    it('shows a running clip with its progress, cancels it after confirmation and gives the credits back', async () => {
      const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
      try {
        const user = await clipUser(app.baseUrl);
        await useSession({ context, baseUrl: app.baseUrl }, user.token);
        const page = await context.newPage();
        const pageErrors: string[] = [];
        page.on('pageerror', (err) => pageErrors.push(err.message));

        await page.goto('/');
        await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
        await openActivity(page, phone);
        await page.getByText('No activity yet').waitFor();

        const started = await startClip(app.baseUrl, user, { movement: 'Zoom In', platform: 'YouTube' });
        expect(started.status).toBe(200);
        // the empty list is read again on the next visit
        await page.reload();
        const card = page.getByRole('listitem', { name: 'Video clip: Zoom In, YouTube 16:9 from harbour-view.jpg' });
        await card.waitFor();
        await card.getByText('running', { exact: true }).waitFor();
        await card.getByText('Harbour View').waitFor();
        await card.getByText('4 credits reserved').waitFor();
        const bar = card.getByRole('progressbar', { name: 'Progress' });
        // refreshed every few seconds while it runs: the provider's progress shows up without a reload
        const deadline = Date.now() + 20_000;
        while (Number(await bar.getAttribute('aria-valuenow')) <= 10 && Date.now() < deadline) await page.waitForTimeout(250);
        expect(Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThan(10);
        await creditsShow(page, phone, '4 reserved');
        await noHorizontalScroll(page);
        await app.screenshot(`activity-running-${name}`, page);

        await card.getByRole('button', { name: 'Cancel' }).click();
        const dialog = page.getByRole('dialog', { name: 'Cancel this job?' });
        await dialog.getByText('its 4 reserved credits are released').waitFor();
        await dialog.getByRole('button', { name: 'Cancel job' }).click();
        await dialog.waitFor({ state: 'detached', timeout: 20_000 });
        await card.getByText('cancelled', { exact: true }).waitFor({ timeout: 15_000 });
        await card.getByText('4 credits, given back').waitFor();
        await card.getByRole('button', { name: 'Retry' }).waitFor();
        expect(await card.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
        expect(await card.getByRole('progressbar').count()).toBe(0);
        await creditsShow(page, phone, '5 credits');
        await noHorizontalScroll(page);
        await app.screenshot(`activity-cancelled-${name}`, page);

        expect(await testKnex()('video_generation_jobs').where({ id: started.body.jobId }).first('status')).toEqual({ status: 'cancelled' });
        expect(await creditState(testKnex(), user.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
        await expectLedgerOk(testKnex(), user.id);
        expect(pageErrors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it("lets an admin list every user's jobs, each with a link to its run in the Temporal UI", async () => {
      const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
      try {
        const owner = await clipUser(app.baseUrl);
        const admin = await clipUser(app.baseUrl);
        await makeAdmin(testKnex(), admin.id);
        const started = await startClip(app.baseUrl, owner);
        expect(started.status).toBe(200);
        await useSession({ context, baseUrl: app.baseUrl }, admin.token);
        const page = await context.newPage();
        await page.goto('/?view=activity');
        await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
        await page.getByText('No activity yet').waitFor();

        await page.getByRole('checkbox', { name: 'All users' }).check();
        const card = page.getByRole('listitem').filter({ hasText: owner.email });
        await card.first().waitFor();
        const link = card.first().getByRole('link', { name: /Open in Temporal UI/ });
        expect(await link.getAttribute('href')).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/clip-${started.body.jobId}`);
        await noHorizontalScroll(page);
        await app.screenshot(`activity-admin-${name}`, page);

        // an admin cancels another user's clip from here
        await card.first().getByRole('button', { name: 'Cancel' }).click();
        await page.getByRole('dialog', { name: 'Cancel this job?' }).getByRole('button', { name: 'Cancel job' }).click();
        await card.first().getByText('cancelled', { exact: true }).waitFor({ timeout: 20_000 });
        expect(await creditState(testKnex(), owner.id)).toEqual({ credits: 5, reserved: 0, available: 5 });
        await expectLedgerOk(testKnex(), owner.id);
      } finally {
        await context.close();
      }
    });
  });
});
