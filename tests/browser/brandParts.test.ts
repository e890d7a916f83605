/**
 * Brand parts on the assembly page (issue 44, acceptance 1 and 7): with a saved brand kit every part is on for a new
 * assembly; the user switches the title card and end card off, moves the logo and sets the title, the choice is
 * stored with the project's editing config and the edit preview follows. Without a kit the panel says so and links to
 * the Brand kit page. At 1440x900 and 390x844, with axe and no sideways scroll.
 */
import sharp from 'sharp';
import type { BrowserContext } from 'playwright-core';
import { loadConfig } from '../../config/env';
import { DEFAULT_BRAND_PARTS } from '../../domain/brandVideo';
import { createStorage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { insertApprovedClips } from '../videoAssembly/clipFixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

describe('Brand parts on the assembly page', () => {
  let app: BrowserApp;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await app?.close();
    await closeTestKnex();
  });

  for (const size of SIZES) {
    it(`parts are on by default with a kit, and each can be switched off (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl, { name: 'Bea Brand' });
      const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const projectId = project.body.project.id;
      await insertApprovedClips(testKnex(), createStorage(loadConfig()), { userId: user.id, projectId }, [{ fileName: 'lobby.mp4', orientation: 'landscape', color: '#b45309' }]);

      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto(`/?view=video-assembly&project=${projectId}`);
      const panel = page.getByRole('region', { name: 'Brand parts' });
      await panel.getByRole('status').getByText('No brand kit yet: the video has no brand parts').waitFor();
      await panel.getByRole('button', { name: 'Set up the brand kit' }).waitFor();
      await expectAxeClean(page);

      // the workspace saves a kit with a logo: a new assembly uses all of it
      const kit = await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit`, {
        method: 'PUT',
        token: user.token,
        json: { primaryColor: '#0A5C8A', secondaryColor: '#F2B134', font: 'Inter', contact: { company: 'Harbour Estates', phone: '', website: '' }, callToAction: 'Book a viewing' },
      });
      expect(kit.status).toBe(200);
      const logo = await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 10, g: 92, b: 138, alpha: 1 } } }).png().toBuffer();
      expect((await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit/logo`, { method: 'PUT', token: user.token, body: logo, headers: { 'content-type': 'image/png' } })).status).toBe(200);
      await page.reload();
      await page.getByRole('button', { name: 'Select lobby.mp4' }).click();
      await panel.getByRole('status').getByText('Brand parts: title card, brand captions, logo, end card').waitFor();
      for (const label of ['Title card', 'Captions in brand style', 'Logo watermark', 'End card']) expect(await panel.getByLabel(label, { exact: true }).isChecked()).toBe(true);
      await page.locator('.timeline-end-card').first().waitFor();

      await panel.getByLabel('Title card', { exact: true }).uncheck();
      await panel.getByLabel('End card', { exact: true }).uncheck();
      expect(await panel.getByLabel('Title (empty: the project\'s name)').count()).toBe(0);
      await panel.getByLabel('Logo corner').selectOption({ label: 'Bottom left' });
      await panel.getByRole('button', { name: 'Use these brand parts' }).click();
      await panel.getByRole('status').getByText('Brand parts: brand captions, logo').waitFor();
      const chat = await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config');
      expect(chat.editing_config.brand).toEqual({ ...DEFAULT_BRAND_PARTS, title_card: false, end_card: false, logo_corner: 'bottom-left' });
      // the edit preview has no end card any more
      await page.locator('.timeline-end-card').waitFor({ state: 'detached' });

      await panel.getByLabel('Title card', { exact: true }).check();
      await panel.getByLabel("Title (empty: the project's name)").fill('Βίλες του Λιμανιού');
      await panel.getByRole('button', { name: 'Use these brand parts' }).click();
      await panel.getByRole('status').getByText('Brand parts: title card, brand captions, logo').waitFor();
      expect((await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config')).editing_config.brand.title_text).toBe('Βίλες του Λιμανιού');

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`brand-parts-${size.name}`, page);
      expect(errors).toEqual([]);
    });
  }
});
