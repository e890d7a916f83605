/**
 * Enhance Renders' rules in the browser, on a draft prepared through the API: the intro tour on the first visit and
 * with ?intro=1, the upload limits and failures, Remove rolled back when the server refuses, dispatch failures and
 * the network retry (700 ms, then 1400 ms), the vision prompt and its local fallback, a reference attachment and a
 * Sync Images run, 'Restore failed', and Delete after confirmation.
 */
import type { Page } from 'playwright-core';
import type { TestUser } from '../support/accounts';
import { dropImageFile, useSession, type BrowserApp } from '../support/browser';
import { streetStill } from '../support/stills';
import { startEnhanceBrowserApp, type EnhanceBrowserApp } from '../enhanceRenders/browserApp';
import { addImage, createDraft, getDraft, renderPng, unlockedUser, waitForJobs } from '../enhanceRenders/support';

let app: BrowserApp;
let enhance: EnhanceBrowserApp;

beforeAll(async () => {
  enhance = await startEnhanceBrowserApp('browser-enhance-rules', { viewport: { width: 1440, height: 900 } });
  app = enhance.app;
});

afterAll(async () => {
  await enhance?.stop();
});

function toasts(page: Page) {
  return page.getByRole('status', { name: 'Notifications' });
}

describe('Enhance Renders rules in the browser', () => {
  let user: TestUser;
  let draftId: string;
  let imageIds: string[];

  beforeAll(async () => {
    user = await unlockedUser(app.baseUrl);
    await useSession(app, user.token);
    draftId = await createDraft(app.baseUrl, user, 'Rules draft');
    imageIds = [];
    for (const [i, tint] of [{ r: 255, g: 200, b: 200 }, { r: 200, g: 255, b: 200 }, { r: 200, g: 200, b: 255 }].entries()) {
      imageIds.push(await addImage(app.baseUrl, user, draftId, await renderPng(320, 240, tint), `render-${i + 1}.png`));
    }
  });

  it('shows the intro on the first visit and with ?intro=1, and keeps the uploads within the spec limits', async () => {
    const { page } = app;
    await page.goto(`/?view=enhance-set&draft=${draftId}`);
    // the server remembers the unlock for the account: no code asked on this browser
    const intro = page.getByRole('dialog');
    await intro.getByRole('heading', { name: 'Welcome to Enhance Renders' }).waitFor();
    await intro.getByRole('button', { name: 'Skip' }).click();
    await page.getByRole('heading', { name: 'Rules draft', level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Rules draft', level: 1 }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.goto(`/?view=enhance-set&draft=${draftId}&intro=1`);
    await intro.getByRole('heading', { name: 'Welcome to Enhance Renders' }).waitFor();
    await intro.getByRole('button', { name: 'Skip' }).click();
    expect(new URL(page.url()).searchParams.get('intro')).toBeNull();

    await page.getByRole('button', { name: 'Quick start' }).click();
    const quickStart = page.getByRole('dialog');
    await quickStart.getByRole('heading', { name: 'Quick start' }).waitFor();
    await quickStart.getByText('Upload up to 4 renders.').waitFor();
    await quickStart.getByRole('button', { name: 'Got it' }).click();
    await quickStart.waitFor({ state: 'detached' });

    const grid = page.getByRole('list', { name: 'Draft images' });
    await grid.getByRole('listitem', { name: 'render-3.png' }).waitFor();
    const picker = page.getByLabel('Upload renders to this draft');
    const file = (n: number) => ({ name: `extra-${n}.png`, mimeType: 'image/png', buffer: Buffer.from('') });
    const png = await streetStill(480, 270).png().toBuffer();

    // the drop zone takes 5 files at a time
    await picker.setInputFiles([1, 2, 3, 4, 5, 6].map((n) => ({ ...file(n), buffer: png })));
    await toasts(page).getByText('Maximum 5 files allowed').waitFor();

    // a refused upload is counted, and nothing is added
    await page.route('**/api/enhance-set/drafts/upload', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Something went wrong' } }));
    await picker.setInputFiles([{ ...file(7), buffer: png }]);
    await toasts(page).getByText('Upload failed (1 file)').waitFor();
    await page.unroute('**/api/enhance-set/drafts/upload');
    await grid.getByRole('listitem', { name: 'extra-7.png' }).waitFor({ state: 'detached' });

    // 3 images: one more fits, the other is ignored
    await picker.setInputFiles([
      { ...file(8), buffer: png },
      { ...file(9), buffer: png },
    ]);
    await toasts(page).getByText('Only 1 more image allowed. Ignored 1.').waitFor();
    await toasts(page).getByText('Uploaded 1 file').waitFor();
    await grid.getByRole('listitem', { name: 'extra-8.png' }).waitFor();
    expect(await grid.getByRole('listitem').count()).toBe(4);
    await picker.setInputFiles([{ ...file(10), buffer: png }]);
    await toasts(page).getByText('Limit reached: maximum 4 images per draft').waitFor();
    expect((await getDraft(app.baseUrl, user, draftId)).body.images).toHaveLength(4);

    // Remove: gone at once, back when the server refuses; then removed for good
    let releaseRemove: () => void = () => undefined;
    const removeHeld = new Promise<void>((resolve) => (releaseRemove = resolve));
    await page.route('**/api/enhance-set/drafts/remove-image', async (route) => {
      await removeHeld;
      await route.fulfill({ status: 500, json: { success: false, error: 'Something went wrong' } });
    });
    await grid.getByRole('button', { name: 'Remove extra-8.png' }).click();
    await grid.getByRole('listitem', { name: 'extra-8.png' }).waitFor({ state: 'detached' });
    releaseRemove();
    await grid.getByRole('listitem', { name: 'extra-8.png' }).waitFor();
    await toasts(page).getByText('Could not remove extra-8.png').waitFor();
    await page.unroute('**/api/enhance-set/drafts/remove-image');
    // listen before the click: the answer can arrive before the card has left the grid
    const removed = page.waitForResponse('**/api/enhance-set/drafts/remove-image');
    await grid.getByRole('button', { name: 'Remove extra-8.png' }).click();
    await grid.getByRole('listitem', { name: 'extra-8.png' }).waitFor({ state: 'detached' });
    expect((await removed).status()).toBe(200);
    expect((await getDraft(app.baseUrl, user, draftId)).body.images.map((i) => i.name)).toEqual(['render-1.png', 'render-2.png', 'render-3.png']);
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it('tells why jobs did not start, retries a network failure after 700 ms and 1400 ms, and falls back to the local prompt enhancer', async () => {
    const { page } = app;
    const grid = page.getByRole('list', { name: 'Draft images' });
    const bar = page.getByRole('form', { name: 'Prompt bar' });
    const prompt = bar.getByLabel('Prompt', { exact: true });
    await grid.getByLabel('Select render-1.png').check();
    await prompt.fill('warm golden evening light');

    // the first failed result's details, cut to 160 characters
    const details = `This image is still processing ${'x'.repeat(300)}`;
    await page.route('**/api/enhance-set/jobs/dispatch', (route) =>
      route.fulfill({ json: { success: false, dispatched: 0, results: [{ imageId: imageIds[0], ok: false, error: 'Job not started', data: { details } }], error: details } }),
    );
    await bar.getByRole('button', { name: 'Run' }).click();
    await toasts(page).getByText(`Failed to start jobs: ${details.slice(0, 160)}`, { exact: true }).waitFor();
    await page.unroute('**/api/enhance-set/jobs/dispatch');

    // three network failures: 'Failed to start jobs'
    const times: number[] = [];
    await page.route('**/api/enhance-set/jobs/dispatch', (route) => {
      times.push(Date.now());
      return route.abort('failed');
    });
    await bar.getByRole('button', { name: 'Run' }).click();
    await toasts(page).getByText('Failed to start jobs', { exact: true }).waitFor();
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(700);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(1400);
    await page.unroute('**/api/enhance-set/jobs/dispatch');

    // two network failures, then the server: the job starts
    let failures = 0;
    await page.route('**/api/enhance-set/jobs/dispatch', (route) => (failures++ < 2 ? route.abort('failed') : route.continue()));
    await bar.getByRole('button', { name: 'Run' }).click();
    await toasts(page).getByText('Started 1 job').waitFor({ timeout: 15_000 });
    expect(failures).toBe(3);
    await page.unroute('**/api/enhance-set/jobs/dispatch');
    await grid.getByRole('button', { name: 'Redo render-1.png' }).waitFor({ timeout: 60_000 });

    // 'Restore failed' when the server refuses the undo
    await page.route('**/api/enhance-set/drafts/restore-version', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Something went wrong' } }));
    await grid.getByRole('button', { name: 'Redo render-1.png' }).click();
    await toasts(page).getByText('Restore failed').waitFor();
    await page.unroute('**/api/enhance-set/drafts/restore-version');

    // the history dialog restores the version it previews; Download saves the current one
    await grid.getByRole('button', { name: 'View history of render-1.png' }).click();
    const history = page.getByRole('dialog');
    await history.getByRole('button', { name: 'Preview Previous' }).click();
    await history.getByRole('button', { name: 'Restore Previous' }).click();
    await history.waitFor({ state: 'detached' });
    const restored = await getDraft(app.baseUrl, user, draftId);
    expect(restored.body.images.find((i) => i.id === imageIds[0])!.metadata.history.map((v) => v.source)).toEqual(['upload', 'edit_render']);
    const download = page.waitForEvent('download');
    await grid.getByRole('button', { name: 'Download render-1.png' }).click();
    expect((await download).suggestedFilename()).toBe('render-1.png');

    // the vision prompt: the server's answer, or the browser's own enhancer when it fails
    await prompt.fill('snowy night');
    const vision = page.waitForResponse('**/api/ai-enhance-prompt/vision');
    await bar.getByRole('button', { name: 'Enhance prompt' }).click();
    expect((await vision).status()).toBe(200);
    await page.waitForFunction(
      () => ((globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document.querySelector('#enhance-prompt')?.value ?? '') !== 'snowy night',
    );
    const served = await prompt.inputValue();
    expect(served.length).toBeGreaterThan('snowy night'.length);

    await page.route('**/api/ai-enhance-prompt/vision', (route) => route.fulfill({ status: 502, json: { success: false, error: 'Prompt enhancement failed' } }));
    await prompt.fill('snowy night');
    await bar.getByRole('button', { name: 'Enhance prompt' }).click();
    await page.waitForFunction(
      () => ((globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document.querySelector('#enhance-prompt')?.value ?? '').includes("Keep the building's"),
    );
    const local = await prompt.inputValue();
    expect(local.startsWith('Snowy night.')).toBe(true);
    expect(local).toContain('Fresh snow on roofs and ground');
    await page.unroute('**/api/ai-enhance-prompt/vision');
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it('sends a dropped reference with a Nano Banana edit, runs Sync Images with the pinned image, and deletes the draft after confirmation', async () => {
    const { page } = app;
    const grid = page.getByRole('list', { name: 'Draft images' });
    const bar = page.getByRole('form', { name: 'Prompt bar' });
    const prompt = bar.getByLabel('Prompt', { exact: true });

    // a dropped image file becomes an attachment (uploaded as a reference) and goes with the run
    await dropImageFile(page, 'form.prompt-bar', 'palette.png', await renderPng(200, 150, { r: 255, g: 160, b: 60 }));
    await bar.getByRole('button', { name: 'Reference palette.png', exact: true }).waitFor();
    await prompt.fill('match the palette of the reference');
    const sentBodies: Array<Record<string, unknown>> = [];
    await page.route('**/api/enhance-set/jobs/dispatch', (route) => {
      sentBodies.push(JSON.parse(route.request().postData() ?? '{}') as Record<string, unknown>);
      return route.continue();
    });
    await bar.getByRole('button', { name: 'Run' }).click();
    await toasts(page).getByText('Started 1 job').waitFor();
    const body = sentBodies[0] as { references: string[]; mode: string; modelId: string };
    expect(body.mode).toBe('edit_render');
    expect(body.references).toHaveLength(1);
    expect(body.references[0]).toContain('/references/');
    await waitForJobs(app.baseUrl, user, draftId);

    // Sync Images: render-3 pinned as the style, render-1 (selected) takes it; no attachments then
    await bar.getByRole('button', { name: 'Sync Images' }).click();
    await grid.getByRole('button', { name: 'Pin style render-3.png' }).click();
    await grid.getByLabel('Select render-2.png').check();
    await prompt.fill('');
    await bar.getByRole('button', { name: 'Run' }).click();
    await toasts(page).getByText('Started 2 jobs').waitFor();
    const syncBody = sentBodies[1];
    expect(syncBody).toMatchObject({ mode: 'style_sync', modelId: 'nano-banana-edit', syncImageId: imageIds[2], references: [] });
    expect((syncBody.imageIds as string[]).sort()).toEqual([imageIds[0], imageIds[1]].sort());
    await page.unroute('**/api/enhance-set/jobs/dispatch');
    const images = await waitForJobs(app.baseUrl, user, draftId);
    expect(images.find((i) => i.id === imageIds[1])!.metadata.history[0].source).toBe('style_sync');
    await bar.getByRole('button', { name: 'Cancel' }).click();

    // Delete asks first; Cancel keeps the draft
    await page.getByRole('button', { name: 'Back to Draft Projects' }).click();
    const drafts = page.getByRole('list', { name: 'Draft Projects' });
    await drafts.getByRole('button', { name: 'Delete Rules draft' }).click();
    const confirm = page.getByRole('dialog');
    await confirm.getByRole('heading', { name: 'Delete draft?' }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await drafts.getByRole('heading', { name: 'Rules draft' }).waitFor();
    await drafts.getByRole('button', { name: 'Open Draft Rules draft' }).click();
    await page.getByRole('heading', { name: 'Rules draft', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('draft')).toBe(draftId);
    await page.goBack();
    await drafts.getByRole('heading', { name: 'Rules draft' }).waitFor();
    await drafts.getByRole('button', { name: 'Delete Rules draft' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No drafts yet').waitFor();
    expect((await getDraft(app.baseUrl, user, draftId)).status).toBe(404);
    expect(app.pageErrors).toEqual([]);
  }, 150_000);
});
