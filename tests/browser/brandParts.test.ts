/**
 * Brand parts on the assembly page (issue 44, acceptance 1 and 7): with a saved brand kit every part is on for a new
 * assembly; the user switches the title card and end card off, moves the logo and sets the title, the choice is
 * stored with the project's editing config and the edit preview follows. Without a kit the panel says so and links to
 * the Brand kit page. At 1440x900 and 390x844, with axe and no sideways scroll. Then the lengths and the logo (at
 * 1280x800 and 390x844): the user sets the title card's and end card's lengths and the logo's size (by pointer) and
 * opacity (by keyboard); a length out of range is refused in words, at the field, and nothing is stored; the edit
 * preview and the stored editing config follow the accepted values.
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

  const LENGTH_SIZES = [
    { name: 'laptop', viewport: { width: 1280, height: 800 } },
    { name: 'phone', viewport: { width: 390, height: 844 } },
  ] as const;

  for (const size of LENGTH_SIZES) {
    it(`sets the title and end card lengths and the logo's size and opacity, and the edit follows (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl, { name: 'Len Length' });
      const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const projectId = project.body.project.id;
      await insertApprovedClips(testKnex(), createStorage(loadConfig()), { userId: user.id, projectId }, [{ fileName: 'lobby.mp4', orientation: 'landscape', color: '#b45309' }]);
      const kit = await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit`, {
        method: 'PUT',
        token: user.token,
        json: { primaryColor: '#0A5C8A', secondaryColor: '#F2B134', font: 'Inter', contact: { company: 'Harbour Estates', phone: '', website: '' }, callToAction: 'Book a viewing' },
      });
      expect(kit.status).toBe(200);
      const logo = await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 10, g: 92, b: 138, alpha: 1 } } }).png().toBuffer();
      expect((await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit/logo`, { method: 'PUT', token: user.token, body: logo, headers: { 'content-type': 'image/png' } })).status).toBe(200);

      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto(`/?view=video-assembly&project=${projectId}`);
      await page.getByRole('button', { name: 'Select lobby.mp4' }).click();
      const panel = page.getByRole('region', { name: 'Brand parts' });
      await panel.getByRole('status').getByText('Brand parts: title card, brand captions, logo, end card').waitFor();
      /** The preview's clip of a brand part once its description has `text` (the preview follows the saved parts). */
      const labelWith = async (part: string, text: string) => {
        const clip = page.locator(`.timeline-${part}[aria-label*="${text}"]`);
        await clip.waitFor();
        return clip.getAttribute('aria-label');
      };
      // the defaults, as the edit has them: the output is 1920 x 1080, the logo's longer side 14% of 1080 (151 px)
      expect(await labelWith('title-card', 'length 2.5 s')).toBe('Title card: Harbour Villas, starts at 0 s, length 2.5 s');
      expect(await labelWith('logo', '85% opacity')).toMatch(/^Logo: top right, 151 × 76 px, 85% opacity,/);
      expect(await labelWith('end-card', 'length 3 s')).toMatch(/^End card, starts at [\d.]+ s, length 3 s$/);
      expect(await panel.getByLabel('Title length (seconds)').inputValue()).toBe('2.5');
      expect(await panel.getByLabel('End card length (seconds)').inputValue()).toBe('3');
      await expectAxeClean(page);

      await panel.getByLabel('Title length (seconds)').fill('1.8');
      await panel.getByLabel('Logo size', { exact: false }).fill('20');
      await panel.getByText('Logo size: 20%').waitFor();
      // the opacity by keyboard: five steps of 5% down from 85%
      await panel.getByLabel('Logo opacity', { exact: false }).focus();
      for (let i = 0; i < 5; i += 1) await page.keyboard.press('ArrowLeft');
      await panel.getByText('Logo opacity: 60%').waitFor();
      expect(await panel.getByLabel('Logo opacity', { exact: false }).getAttribute('aria-valuetext')).toBe('60%');

      // an end card of 7 s is refused in words, at the field, and nothing is stored
      const storedBrand = async () => ((await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config')) as { editing_config: { brand?: unknown } } | undefined)?.editing_config.brand ?? null;
      const before = await storedBrand();
      const endLength = panel.getByLabel('End card length (seconds)');
      await endLength.fill('7');
      await panel.getByRole('button', { name: 'Use these brand parts' }).click();
      await panel.getByRole('alert').getByText('The end card lasts 2 to 6 seconds').waitFor();
      expect(await endLength.getAttribute('aria-invalid')).toBe('true');
      expect(await endLength.evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
      expect(await endLength.getAttribute('aria-describedby')).toContain('brand-parts-error');
      expect(await storedBrand()).toEqual(before);
      expect(await labelWith('end-card', 'length 3 s')).toMatch(/length 3 s$/);
      await expectAxeClean(page);

      // typed by keyboard this time: 4.5 s, then Enter submits the form
      await endLength.fill('');
      await endLength.pressSequentially('4.5');
      await endLength.press('Enter');
      expect(await labelWith('end-card', 'length 4.5 s')).toMatch(/length 4\.5 s$/);
      expect(await labelWith('title-card', 'length 1.8 s')).toBe('Title card: Harbour Villas, starts at 0 s, length 1.8 s');
      // 20% of 1080 is 216 px on the logo's longer side, its 2:1 aspect kept
      expect(await labelWith('logo', '60% opacity')).toMatch(/^Logo: top right, 216 × 108 px, 60% opacity,/);
      expect(await panel.getByRole('alert').count()).toBe(0);
      expect(await endLength.getAttribute('aria-invalid')).toBeNull();
      const chat = await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config');
      expect(chat.editing_config.brand).toEqual({ ...DEFAULT_BRAND_PARTS, title_seconds: 1.8, logo_size: 0.2, logo_opacity: 0.6, end_card_seconds: 4.5 });
      // the form shows what was stored
      expect(await panel.getByLabel('Title length (seconds)').inputValue()).toBe('1.8');
      expect(await panel.getByLabel('Logo size', { exact: false }).inputValue()).toBe('20');

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`brand-parts-lengths-${size.name}`, page);
      expect(errors).toEqual([]);
    });
  }
});
