/**
 * The Brand kit page (issue 44, acceptance 1 and 7): an admin uploads a logo, picks colours and a font and fills the
 * contact lines, and the live preview follows as they type; a viewer reads the kit without controls. At 1440x900 and
 * 390x844, with axe and no sideways scroll.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { BrowserContext } from 'playwright-core';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

describe('Brand kit page', () => {
  let app: BrowserApp;
  const contexts: BrowserContext[] = [];
  let logoFile: string;

  beforeAll(async () => {
    app = await startBrowserApp();
    logoFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'brand-logo-')), 'logo.png');
    await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 10, g: 92, b: 138, alpha: 1 } } }).png().toFile(logoFile);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await app?.close();
    await closeTestKnex();
  });

  for (const size of SIZES) {
    it(`an admin edits the kit with a live preview; a viewer only reads it (${size.name})`, async () => {
      const team = await createTeamWorkspace(app.baseUrl);
      const admin = await joinWorkspace(app.baseUrl, team, 'admin');
      const viewer = await joinWorkspace(app.baseUrl, team, 'viewer');
      const { page, errors } = await pageAs(app, admin, size.viewport, contexts);
      await page.goto(`/?view=brand-kit&workspace=${team.id}`);
      await page.getByRole('heading', { name: 'Brand kit', level: 1 }).waitFor();

      const preview = page.getByRole('group', { name: 'Preview of a video with this brand kit' });
      await page.getByLabel('Company').fill('Harbour Estates Ltd');
      await page.getByLabel('Call to action').fill('Book your viewing today');
      // the preview follows before anything is saved
      await preview.getByText('Harbour Estates Ltd').first().waitFor();
      await preview.getByText('Book your viewing today').waitFor();
      await page.getByLabel('Font').selectOption('Roboto');
      expect(await preview.locator('.brand-frame').first().evaluate((el) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { fontFamily: string } }).getComputedStyle(el).fontFamily)).toContain('Roboto');
      await page.getByLabel('Main colour').fill('#0a5c8a');
      expect(await preview.locator('.brand-frame').first().evaluate((el) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { backgroundColor: string } }).getComputedStyle(el).backgroundColor)).toBe('rgb(10, 92, 138)');

      await page.locator('#brand-logo-file').setInputFiles(logoFile);
      await page.getByText('Logo saved.').waitFor();
      await page.getByRole('img', { name: 'Current logo' }).waitFor();
      // the upload leaves what was typed and not saved yet as it is
      expect(await page.getByLabel('Company').inputValue()).toBe('Harbour Estates Ltd');
      await page.getByRole('button', { name: 'Save brand kit' }).click();
      await page.getByText('Brand kit saved.').waitFor();
      const row = await testKnex()('brand_kits').where({ workspace_id: team.id }).first();
      expect(row).toMatchObject({ font: 'Roboto', company: 'Harbour Estates Ltd', updated_by: admin.id });
      expect(row.logo_key).toMatch(/^brand\//);

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`brand-kit-admin-${size.name}`, page);
      expect(errors).toEqual([]);

      const asViewer = await pageAs(app, viewer, size.viewport, contexts);
      await asViewer.page.goto(`/?view=brand-kit&workspace=${team.id}`);
      await asViewer.page.getByRole('heading', { name: 'Brand kit', level: 1 }).waitFor();
      await asViewer.page.getByText('but not change the brand kit', { exact: false }).waitFor();
      expect(await asViewer.page.getByRole('button', { name: 'Save brand kit' }).count()).toBe(0);
      expect(await asViewer.page.getByLabel('Company').isDisabled()).toBe(true);
      expect(await asViewer.page.getByLabel('Company').inputValue()).toBe('Harbour Estates Ltd');
      await asViewer.page.getByRole('group', { name: 'Preview of a video with this brand kit' }).getByText('Harbour Estates Ltd').first().waitFor();
      await expectNoSidewaysScroll(asViewer.page);
      await expectAxeClean(asViewer.page);
      expect(asViewer.errors).toEqual([]);
    });
  }
});
