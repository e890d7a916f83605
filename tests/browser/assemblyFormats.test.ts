/**
 * The format picker on the assembly page (issue 44 item 4): the platform's own format is chosen by default and cannot
 * be left without a format; the user adds 1:1 (kept as the project's, there after a reload) and assembles, and the one
 * assembly gives an item per format in Approvals, named apart; the chat's "also make a 4:5 one" ticks 4:5. At 1280x800 (with the real worker) and 390x844, with axe and no sideways scroll.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../config/env';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { uniqueTaskQueue } from '../support/temporal';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { insertApprovedClips } from '../videoAssembly/clipFixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 800 }, assemble: true },
  { name: 'phone', viewport: { width: 390, height: 844 }, assemble: false },
] as const;

describe('Formats on the assembly page', () => {
  let app: BrowserApp;
  let worker: RunningWorker;
  const taskQueue = uniqueTaskQueue('assembly-formats-browser');
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp({ taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } });
    worker = await startClipWorker(taskQueue);
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await app?.close();
    await worker?.stop();
    await closeTestKnex();
  });

  async function openWithClip(user: TestUser, size: (typeof SIZES)[number]): Promise<{ page: Page; errors: string[]; projectId: string }> {
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
    const projectId = project.body.project.id;
    await insertApprovedClips(testKnex(), createStorage(loadConfig()), { userId: user.id, projectId }, [{ fileName: 'lobby.mp4', orientation: 'landscape', color: '#b45309' }]);
    const { page, errors } = await pageAs(app, user, size.viewport, contexts);
    await page.goto(`/?view=video-assembly&project=${projectId}`);
    await page.getByRole('button', { name: 'Select lobby.mp4' }).click();
    return { page, errors, projectId };
  }

  for (const size of SIZES) {
    it(`picks one or more formats, the platform's own by default (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl, { name: 'Fay Format' });
      const { page, errors } = await openWithClip(user, size);
      const picker = page.getByRole('group', { name: 'Formats' });
      const own = picker.getByLabel('16:9 YouTube (this platform)');
      await own.waitFor();
      // landscape clips: 16:9 alone, and the only chosen format cannot be unticked
      expect(await own.isChecked()).toBe(true);
      expect(await own.isDisabled()).toBe(true);
      for (const label of ['9:16 Reels', '1:1 Square', '4:5 Feed']) expect(await picker.getByLabel(label, { exact: true }).isChecked()).toBe(false);

      const saved = page.waitForResponse((r) => r.url().endsWith('/aesthetic/formats') && r.request().method() === 'PUT');
      await picker.getByLabel('1:1 Square', { exact: true }).check();
      expect(await own.isDisabled()).toBe(false);
      expect(await own.isChecked()).toBe(true);
      // the choice is the project's: kept in its editing config, there after a reload
      expect((await saved).status()).toBe(200);
      await page.reload();
      // the selection comes back by itself (kept in the browser)
      await page.getByRole('button', { name: 'Select lobby.mp4', pressed: true }).waitFor();
      await picker.getByLabel('1:1 Square', { exact: true }).waitFor();
      expect(await picker.getByLabel('1:1 Square', { exact: true }).isChecked()).toBe(true);
      expect(await own.isChecked()).toBe(true);
      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`assembly-formats-${size.name}`, page);

      if (size.assemble) {
        const started = page.waitForResponse((r) => r.url().endsWith('/api/video/assemble') && r.request().method() === 'POST');
        await page.getByRole('button', { name: 'Assemble Video' }).click();
        const { jobId } = (await (await started).json()) as { jobId: string };
        // one job for both formats, in the picker's order
        expect((await testKnex()('assembly_jobs').where({ id: jobId }).first('platform', 'options'))).toMatchObject({ platform: 'youtube', options: { formats: ['1:1', '16:9'] } });
        // on 'completed' the page opens Approvals: an item per format, named apart, each free
        await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor({ timeout: 280_000 });
        for (const name of ['Harbour Villas · 1:1 Square (1 clip).mp4', 'Harbour Villas · 16:9 YouTube (1 clip).mp4']) {
          await page.getByRole('button', { name: `Save Free: ${name}` }).waitFor();
        }
        const items = await testKnex()('pending_approvals').where({ workspace_id: user.id });
        expect(items.map((i) => [i.file_name, i.aspect_ratio, i.cost]).sort()).toEqual([
          ['Harbour Villas · 16:9 YouTube (1 clip).mp4', '16:9', 0],
          ['Harbour Villas · 1:1 Square (1 clip).mp4', '1:1', 0],
        ]);
        await expectAxeClean(page);
      } else {
        // the chat adds a format in words, and the picker follows
        const chat = page.getByRole('region', { name: 'AI editor' });
        await chat.getByLabel('Message to the assistant', { exact: true }).fill('Also make a 4:5 one');
        await chat.getByRole('button', { name: 'Send' }).click();
        await chat.getByText('Also made in Feed (4:5).', { exact: false }).waitFor();
        await page.waitForFunction("document.getElementById('assembly-format-4x5')?.checked === true");
        for (const label of ['1:1 Square', '4:5 Feed']) expect(await picker.getByLabel(label, { exact: true }).isChecked()).toBe(true);
        await expectAxeClean(page);
      }
      expect(errors).toEqual([]);
    }, 330_000);
  }
});
