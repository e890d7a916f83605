/**
 * Enhance Renders says why nothing happened, where the user looks (issue 41, items 4.2 and 4.4), at desktop and phone
 * sizes:
 * - the access code: the spec has a wrong code do nothing and show no message (001 section 5), so the hint under
 *   the field says beforehand what an unchanged page means; an attempt the server did not check (too many guesses, no
 *   answer) is said beside the field as an alert, and a server with no code configured says so instead of a field;
 * - Style Transfer: Run stays disabled until a reference is used for the look, with the reason beside Run (not a
 *   4-second toast over it); a Run refused for another reason (no image selected) is said there too.
 */
import type { Page } from 'playwright-core';
import { ENHANCE_MSG } from '../../domain/enhanceRenders';
import { createTestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { dropImageFile, useSession, type BrowserApp } from '../support/browser';
import { startEnhanceBrowserApp, type EnhanceBrowserApp } from '../enhanceRenders/browserApp';
import { ACCESS_CODE, addImage, createDraft, renderPng, unlockedUser, waitForJobs } from '../enhanceRenders/support';

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

const ACCESS_HINT = 'The tool opens as soon as the code is accepted. A code that is not accepted leaves this page as it is: check the code you were given and try again.';

let app: BrowserApp;
let enhance: EnhanceBrowserApp;

beforeAll(async () => {
  enhance = await startEnhanceBrowserApp('browser-enhance-hints');
  app = enhance.app;
});

afterAll(async () => {
  await enhance?.stop();
});

function toasts(page: Page) {
  return page.getByRole('status', { name: 'Notifications' });
}

async function box(locator: ReturnType<Page['locator']>): Promise<{ x: number; y: number; width: number; height: number }> {
  const found = await locator.boundingBox();
  if (!found) throw new Error('expected the element to be laid out');
  return found;
}

describe.each(SIZES)('Enhance Renders at $width x $height', ({ name, width, height }) => {
  it('explains the access code under its field, says an unchecked attempt beside it, and keeps a wrong code silent', async () => {
    const user = await createTestUser(app.baseUrl);
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, user.token);
      const page = await context.newPage();
      const lock = page.getByRole('form', { name: 'Unlock Enhance Renders' });
      const field = lock.getByLabel('Access code');

      // a server with no access code configured says so, and takes no guesses
      await page.route('**/api/enhance-set/access', (route) => route.fulfill({ json: { success: true, configured: false, unlocked: false } }));
      await page.goto('/?view=enhance-set');
      await lock.getByRole('status').getByText(ENHANCE_MSG.notConfigured).waitFor();
      expect(await field.isDisabled()).toBe(true);
      expect(await lock.getByRole('button', { name: 'Unlock' }).isDisabled()).toBe(true);
      await page.unroute('**/api/enhance-set/access');

      await page.reload();
      await lock.getByRole('heading', { name: 'Enter your access code' }).waitFor();
      await field.waitFor();
      expect(await field.isDisabled()).toBe(false);
      // said before any attempt, and read with the field
      const hint = lock.getByText(ACCESS_HINT);
      await hint.waitFor();
      expect(await field.getAttribute('aria-describedby')).toContain((await hint.getAttribute('id')) ?? 'no id');
      await app.screenshot(`enhance-hints-${name}-locked`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // a wrong code: refused by the server, and as the spec has it no message (the hint above stays)
      await field.fill('not-the-code');
      const refused = page.waitForResponse('**/api/enhance-set/access/unlock');
      await field.press('Enter');
      expect((await refused).status()).toBe(403);
      await lock.getByRole('button', { name: 'Unlock' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await hint.isVisible()).toBe(true);

      // too many guesses: the code was not checked, and the server's words are said beside the field
      const tooMany = ENHANCE_MSG.tooManyGuesses('59 minutes');
      await page.route('**/api/enhance-set/access/unlock', (route) =>
        route.fulfill({ status: 429, headers: { 'Retry-After': '3540' }, json: { success: false, error: tooMany, code: 'RATE_LIMITED' } }),
      );
      await lock.getByRole('button', { name: 'Unlock' }).click();
      const alert = lock.getByRole('alert');
      await alert.getByText(tooMany).waitFor();
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      // right under the field, inside the form
      const fieldBox = await box(field);
      const alertBox = await box(alert);
      expect(alertBox.y).toBeGreaterThanOrEqual(fieldBox.y + fieldBox.height);
      expect(alertBox.y - (fieldBox.y + fieldBox.height)).toBeLessThan(120);
      await app.screenshot(`enhance-hints-${name}-too-many`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await page.unroute('**/api/enhance-set/access/unlock');

      // no answer at all
      await page.route('**/api/enhance-set/access/unlock', (route) => route.abort('failed'));
      await lock.getByRole('button', { name: 'Unlock' }).click();
      await alert.getByText('Something went wrong. Please try again.').waitFor();
      await page.unroute('**/api/enhance-set/access/unlock');

      // the right code opens the tool
      await field.fill(ACCESS_CODE);
      await lock.getByRole('button', { name: 'Unlock' }).click();
      await page.getByRole('dialog').getByRole('heading', { name: 'Welcome to Enhance Renders' }).waitFor();
      expect(await lock.count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('holds a Style Transfer run until a reference is used for the look, said beside Run with no toast over it', async () => {
    const user = await unlockedUser(app.baseUrl);
    const draftId = await createDraft(app.baseUrl, user, `Style ${name}`);
    await addImage(app.baseUrl, user, draftId, await renderPng(320, 240), 'render-1.png');
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, user.token);
      const page = await context.newPage();
      const dispatches: Array<Record<string, unknown>> = [];
      await page.route('**/api/enhance-set/jobs/dispatch', (route) => {
        dispatches.push(JSON.parse(route.request().postData() ?? '{}') as Record<string, unknown>);
        return route.continue();
      });
      await page.goto(`/?view=enhance-set&draft=${draftId}`);
      await page.getByRole('dialog').getByRole('button', { name: 'Skip' }).click();
      await page.getByRole('heading', { name: `Style ${name}`, level: 1 }).waitFor();
      const grid = page.getByRole('list', { name: 'Draft images' });
      const bar = page.getByRole('form', { name: 'Prompt bar' });
      const run = bar.getByRole('button', { name: 'Run' });
      await grid.getByRole('listitem', { name: 'render-1.png' }).waitFor();

      // Style Transfer with no reference: Run waits, and says why beside it
      await bar.getByLabel('Mode', { exact: true }).selectOption('style_transfer');
      const note = bar.getByRole('status').filter({ hasText: ENHANCE_MSG.styleNeedsReference });
      await note.waitFor();
      expect(await run.isDisabled()).toBe(true);
      expect(await run.getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
      const runBox = await box(run);
      const noteBox = await box(note);
      expect(noteBox.y).toBeGreaterThanOrEqual(runBox.y + runBox.height);
      expect(noteBox.y - (runBox.y + runBox.height)).toBeLessThan(80);
      // Enter in the prompt does not start it either
      await bar.getByLabel('Prompt', { exact: true }).press('Enter');
      await app.screenshot(`enhance-hints-${name}-style-needs-reference`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // a reference dropped on the bar: Run is free; unticked "Use for look", it waits again
      await dropImageFile(page, 'form.prompt-bar', 'palette.png', await renderPng(200, 150, { r: 255, g: 160, b: 60 }));
      await bar.getByRole('button', { name: 'Reference palette.png', exact: true }).waitFor();
      await note.waitFor({ state: 'detached' });
      expect(await run.isDisabled()).toBe(false);
      await bar.getByLabel('Use for look').uncheck();
      await bar.getByRole('status').filter({ hasText: 'Tick “Use for look” on a reference image for Style Transfer' }).waitFor();
      expect(await run.isDisabled()).toBe(true);
      await bar.getByLabel('Use for look').check();
      expect(await run.isDisabled()).toBe(false);

      // no image selected: the refusal is said beside Run, not in a toast, until the selection changes
      await run.click();
      const refusal = bar.getByRole('alert');
      await refusal.getByText(ENHANCE_MSG.selectImage).waitFor();
      expect(await toasts(page).getByText(ENHANCE_MSG.selectImage).count()).toBe(0);
      await app.screenshot(`enhance-hints-${name}-select-image`, page);
      await grid.getByLabel('Select render-1.png').check();
      await refusal.waitFor({ state: 'detached' });
      expect(dispatches).toEqual([]);

      // with its reference, the transfer starts
      await run.click();
      await toasts(page).getByText('Started 1 job').waitFor();
      expect(dispatches).toHaveLength(1);
      expect(dispatches[0]).toMatchObject({ mode: 'style_transfer', modelId: 'style-transfer' });
      expect(dispatches[0].references).toHaveLength(1);
      const [image] = await waitForJobs(app.baseUrl, user, draftId);
      expect(image.metadata.history[0].source).toBe('style_transfer');
    } finally {
      await context.close();
    }
  }, 120_000);
});
