/**
 * What the library says after an upload, at 1440x900 and 390x844: a file whose bytes are already in the project is
 * reported as already in this project (never as uploaded), with a button that opens the existing item; each refused
 * file is listed with the server's reason; counts take the right number ('1 file', '2 files'). The Upload results
 * panel and the item it opens have no serious axe finding.
 */
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { createTestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

function toasts(page: Page) {
  return page.getByRole('status', { name: 'Notifications' });
}

describe.each(SIZES)('upload feedback at $name size', ({ name, viewport }) => {
  it('reports a duplicate as already in this project with the way to it, and each refused file with its reason', async () => {
    const owner = await createTestUser(app.baseUrl, { name: 'Up Loader' });
    const created = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: owner.token, json: { name: 'Quay Street' } });
    const projectId = created.body.project.id;
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    await useSession({ context, baseUrl: app.baseUrl }, owner.token);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      const facade = await sharp({ create: { width: 640, height: 360, channels: 3, background: '#0f766e' } }).png().toBuffer();
      // a PNG cut after its header: the type is right, the picture cannot be read
      const broken = facade.subarray(0, 120);

      await page.goto(`/?project=${projectId}`);
      await page.getByText('No content yet').waitFor();
      const input = page.locator('input[type="file"]');
      await input.setInputFiles([{ name: 'facade.png', mimeType: 'image/png', buffer: facade }]);
      await toasts(page).getByText('1 file uploaded successfully!').waitFor({ timeout: 30_000 });
      await page.getByText('1 render', { exact: true }).waitFor();
      // everything was added: nothing to keep on screen
      expect(await page.getByRole('region', { name: 'Upload results' }).count()).toBe(0);
      await toasts(page).getByText('1 file uploaded successfully!').waitFor({ state: 'detached', timeout: 10_000 });

      await input.setInputFiles([
        { name: 'facade copy.png', mimeType: 'image/png', buffer: facade },
        { name: 'notes.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('meeting notes, not a picture\n'.repeat(20)) },
        { name: 'broken.png', mimeType: 'image/png', buffer: broken },
      ]);
      await toasts(page).getByText('facade copy.png is already in this project as facade.png').waitFor({ timeout: 30_000 });
      await toasts(page).getByText('2 files failed to upload').waitFor();
      expect(await toasts(page).getByText(/uploaded successfully/).count()).toBe(0);

      const results = page.getByRole('region', { name: 'Upload results' });
      await results.waitFor();
      await results.getByRole('list', { name: 'Already in this project' }).getByText('facade copy.png is already in this project as facade.png.').waitFor();
      const refused = results.getByRole('list', { name: 'Not uploaded' });
      await refused.getByRole('listitem').filter({ hasText: 'notes.jpg' }).getByText('has invalid type', { exact: false }).waitFor();
      await refused.getByRole('listitem').filter({ hasText: 'broken.png' }).getByText('is not a readable image', { exact: false }).waitFor();
      expect(await results.innerText()).not.toMatch(/\(s\)/);
      expect(await testKnex()('renders').where({ project_id: projectId }).count({ n: '*' })).toEqual([{ n: '1' }]);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await app.screenshot(`upload-feedback-${name}`, page);

      // the way to the item that already holds these bytes
      await results.getByRole('button', { name: 'Open facade.png' }).click();
      const dialog = page.getByRole('dialog', { name: 'facade.png' });
      await dialog.waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Close' }).first().click();
      await dialog.waitFor({ state: 'detached' });

      // it stays until dismissed
      await results.getByRole('button', { name: 'Dismiss upload results' }).click();
      await results.waitFor({ state: 'detached' });
      expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
