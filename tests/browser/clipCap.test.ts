/**
 * A workspace's cap on clips in flight on the Members page (issue 41, item 9): an admin sets it, a wrong value is
 * told at the field, empty clears it; a member does not see the setting. Desktop and phone sizes.
 */
import type { Page } from 'playwright-core';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { createTeamWorkspace, joinWorkspace, type TeamWorkspace } from '../support/workspaces';

const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

describe('Clips at a time, on the Members page', () => {
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp();
  });

  afterAll(async () => {
    await app?.close();
    await closeTestKnex();
  });

  const cap = async (team: TeamWorkspace) =>
    ((await testKnex()('workspaces').where({ id: team.id }).first('max_clips_in_flight')) as { max_clips_in_flight: number | null }).max_clips_in_flight;

  const openMembers = async (page: Page, team: TeamWorkspace) => {
    await page.goto(`/?view=members&workspace=${team.id}`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
  };

  for (const size of SIZES) {
    it(`an admin sets, corrects and clears the cap; a member does not see it (${size.name})`, async () => {
      const team = await createTeamWorkspace(app.baseUrl);
      const admin = await joinWorkspace(app.baseUrl, team, 'admin');
      const member = await joinWorkspace(app.baseUrl, team, 'member');
      const { page } = app;
      await page.setViewportSize(size.viewport);
      await useSession(app, admin.token);
      await openMembers(page, team);

      const panel = page.getByRole('region', { name: 'Clips at a time' });
      const field = panel.getByLabel('Most clips generating at once');
      const save = panel.getByRole('button', { name: 'Save limit' });
      await field.waitFor();
      expect(await field.inputValue()).toBe('');
      expect(await save.isDisabled()).toBe(true);
      await panel.getByText('Each member runs one clip at a time.', { exact: false }).waitFor();

      // a value out of range is told at the field, and cannot be saved
      await field.fill('0');
      await panel.getByText('Enter a whole number from 1 to 100, or leave it empty.').waitFor();
      expect(await save.isDisabled()).toBe(true);
      expect(await field.getAttribute('aria-invalid')).toBe('true');

      await field.fill('3');
      await save.click();
      await page.getByText('At most 3 clips at a time in this workspace.').waitFor();
      expect(await cap(team)).toBe(3);
      await app.screenshot(`clip-cap-${size.name}`);
      expect(await seriousAxeFindings(page)).toEqual([]);
      const box = await panel.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= size.viewport.width).toBe(true);

      // after a reload the saved cap is shown; emptied, it is cleared
      await page.reload();
      await field.waitFor();
      expect(await field.inputValue()).toBe('3');
      await field.fill('');
      await save.click();
      await page.getByText('No workspace limit on clips at a time.').waitFor();
      expect(await cap(team)).toBeNull();

      // a member: no such setting
      await useSession(app, member.token);
      await openMembers(page, team);
      await page.getByRole('list', { name: 'Members' }).waitFor();
      expect(await page.getByRole('region', { name: 'Clips at a time' }).count()).toBe(0);
      expect(app.pageErrors).toEqual([]);
    });
  }
});
