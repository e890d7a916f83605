import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';

let app: BrowserApp;
let admin: TestUser;

const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

beforeAll(async () => {
  app = await startBrowserApp();
  admin = await createTestUser(app.baseUrl, { name: 'Ada Admin' });
  await makeAdmin(testKnex(), admin.id);
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page
    .locator('html')
    .evaluate((root: { scrollWidth: number; clientWidth: number }) => ({ scrollWidth: root.scrollWidth, clientWidth: root.clientWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

/** The sidebar's Admin entry; on a phone the slide-in menu is opened first. */
async function openAdminFromSidebar(page: Page, phone: boolean): Promise<void> {
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('complementary', { name: 'Sidebar' }).getByRole('button', { name: 'Admin' }).click();
  await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
}

describe.each(SIZES)('Admin view at $width x $height', ({ name, width, height }) => {
  const phone = width < 768;

  it('lets an admin find a user, add 10 credits with a reason and see the new balance and who made it', async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, admin.token);
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      const target = await createTestUser(app.baseUrl, { name: 'Tess Target', email: `target-${name}-${randomUUID()}@example.test` });

      await page.goto('/');
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await openAdminFromSidebar(page, phone);
      expect(new URL(page.url()).searchParams.get('view')).toBe('admin');
      await page.getByText('No user selected').waitFor();

      const search = page.getByRole('search', { name: 'Find a user' });
      await search.getByRole('button', { name: 'Search' }).click();
      await search.getByText('Enter an e-mail address, or the start of one').waitFor();

      await search.getByLabel('User e-mail').fill(`no-such-user-${randomUUID()}`);
      await search.getByRole('button', { name: 'Search' }).click();
      await page.getByText('No users with an e-mail starting with', { exact: false }).waitFor();

      // the start of the address, in capitals: one match, opened straight away
      await search.getByLabel('User e-mail').fill(target.email.slice(0, 20).toUpperCase());
      await search.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name: new RegExp(`^${target.email}`) }).waitFor();
      const detail = page.getByRole('article', { name: target.email });
      await detail.waitFor();
      await detail.getByText('Tess Target', { exact: false }).first().waitFor();
      const balance = detail.getByTestId('admin-balance');
      expect(await balance.textContent()).toBe('5');
      expect(await detail.getByTestId('admin-reserved').textContent()).toBe('0');
      await detail.getByText('No purchases yet.').waitFor();
      // the starting credits: the new user is the actor of their own bonus row
      await detail.getByRole('list', { name: 'Transactions' }).getByRole('listitem').filter({ hasText: 'Starting credits' }).getByText(`by ${target.email}`).waitFor();
      await noHorizontalScroll(page);
      await app.screenshot(`admin-${name}-detail`, page);

      const form = detail.getByRole('form', { name: 'Adjust credits' });
      const submit = form.getByRole('button', { name: 'Add credits' });
      // the reason is required; nothing is sent without it
      await form.getByLabel('Credits', { exact: true }).fill('10');
      await submit.click();
      await form.getByText('A reason is required').waitFor();
      expect(await balance.textContent()).toBe('5');

      // removing more than is available is refused before it is sent
      await form.getByLabel('Remove credits').check();
      await form.getByLabel('Reason').fill('Too many');
      await form.getByLabel('Credits', { exact: true }).fill('6');
      await form.getByRole('button', { name: 'Remove credits' }).click();
      await form.getByText('Only 5 credits are available to remove. Credits never go below zero.').waitFor();

      await form.getByLabel('Add credits').check();
      await form.getByLabel('Credits', { exact: true }).fill('10');
      await form.getByLabel('Reason').fill('Goodwill for ticket 4711');
      await form.getByText('New balance: 15 (available 15)').waitFor();
      // hold the answer a moment to see the form locked while it saves
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/api/admin/credits/adjust', async (route) => {
        await held;
        await route.continue();
      });
      await submit.click();
      await form.getByRole('button', { name: 'Saving...' }).waitFor();
      expect(await form.getByRole('button', { name: 'Saving...' }).isDisabled()).toBe(true);
      expect(await form.getByLabel('Reason').isDisabled()).toBe(true);
      const answered = page.waitForResponse('**/api/admin/credits/adjust');
      release();
      expect((await answered).status()).toBe(201);
      await page.unroute('**/api/admin/credits/adjust');

      await page.getByRole('status', { name: 'Notifications' }).getByText(`Added 10 credits to ${target.email}. New balance: 15.`).waitFor();
      await detail.getByTestId('admin-balance').getByText('15', { exact: true }).waitFor();
      expect(await detail.getByTestId('admin-available').textContent()).toBe('15');
      const ledger = detail.getByRole('list', { name: 'Transactions' });
      const row = ledger.getByRole('listitem').filter({ hasText: 'Goodwill for ticket 4711' });
      await row.getByText(`by ${admin.email}`).waitFor();
      await row.getByText('+10').waitFor();
      expect(await form.getByLabel('Credits', { exact: true }).inputValue()).toBe('');
      await noHorizontalScroll(page);
      await app.screenshot(`admin-${name}-adjusted`, page);

      // the user's own transactions name the admin
      const own = await request(app.baseUrl, '/api/credits/transactions', { token: target.token });
      expect(own.body.data[0]).toMatchObject({ transactionType: 'admin_adjust', amount: 10, description: 'Goodwill for ticket 4711', createdByEmail: admin.email });
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows the user's workspaces with role, members and balance, and adjusts a team workspace found by its name", async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, admin.token);
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      const target = await createTestUser(app.baseUrl, { name: 'Wes Workspaces', email: `workspaces-${name}-${randomUUID()}@example.test` });
      const studio = await createTeamWorkspace(app.baseUrl, { owner: target, name: `Wes Studio ${randomUUID().slice(0, 6)}` });
      await joinWorkspace(app.baseUrl, studio, 'member');
      const client = await createTeamWorkspace(app.baseUrl, { name: `Client Team ${randomUUID().slice(0, 6)}` });
      await joinWorkspace(app.baseUrl, client, 'viewer', target);

      await page.goto('/?view=admin');
      const search = page.getByRole('search', { name: 'Find a user' });
      await search.getByLabel('User e-mail').fill(target.email);
      await search.getByRole('button', { name: 'Search' }).click();
      const detail = page.getByRole('article', { name: target.email });
      const workspaces = detail.getByRole('list', { name: 'Workspaces' });
      await workspaces.waitFor();
      // personal first, then by name; each with the user's role, the member count and the workspace's balance
      const rows = workspaces.getByRole('listitem');
      expect(await rows.count()).toBe(3);
      expect((await rows.nth(0).innerText()).replace(/\s+/g, ' ')).toBe('Personal Owner · 1 member 5 credits');
      expect((await rows.nth(1).innerText()).replace(/\s+/g, ' ')).toBe(`${client.name} Viewer · 2 members 0 credits`);
      expect((await rows.nth(2).innerText()).replace(/\s+/g, ' ')).toBe(`${studio.name} Owner · 2 members 0 credits`);
      await noHorizontalScroll(page);
      await app.screenshot(`admin-${name}-workspaces`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // a workspace found by its name opens its owner with that workspace chosen for the adjustment
      const byName = page.getByRole('search', { name: 'Find a workspace' });
      await byName.getByLabel('Workspace name').fill(studio.name.toUpperCase());
      await byName.getByRole('button', { name: 'Find workspace' }).click();
      await page.getByRole('button', { name: new RegExp(`^${studio.name}`) }).getByText(`Owner: ${target.email}`).waitFor();
      await page.getByRole('button', { name: new RegExp(`^${studio.name}`) }).click();
      const form = page.getByRole('article', { name: target.email }).getByRole('form', { name: 'Adjust credits' });
      await form.waitFor();
      const select = form.getByLabel('Workspace', { exact: true });
      expect(await select.inputValue()).toBe(studio.id);
      await form.getByText('Balance now: 0 (available 0)').waitFor();
      await form.getByLabel('Credits', { exact: true }).fill('7');
      await form.getByLabel('Reason').fill('Studio launch');
      await form.getByRole('button', { name: 'Add credits' }).click();
      await page.getByRole('status', { name: 'Notifications' }).getByText(`Added 7 credits to the workspace “${studio.name}”. New balance: 7.`).waitFor();
      const again = page.getByRole('article', { name: target.email });
      await again.getByRole('list', { name: 'Workspaces' }).getByRole('listitem').filter({ hasText: studio.name }).getByText('7 credits').waitFor();
      // the personal workspace's numbers are untouched
      expect(await again.getByTestId('admin-balance').textContent()).toBe('5');
      await noHorizontalScroll(page);
      await app.screenshot(`admin-${name}-workspace-adjusted`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);

      const rowsInDb = await testKnex()('credit_transactions').where({ workspace_id: studio.id, transaction_type: 'admin_adjust' }).select('amount', 'created_by');
      expect(rowsInDb).toEqual([{ amount: 7, created_by: admin.id }]);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows the server's refusal and keeps the numbers when an adjustment fails", async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, admin.token);
      const page = await context.newPage();
      const target = await createTestUser(app.baseUrl, { email: `refused-${name}-${randomUUID()}@example.test` });
      await page.goto('/?view=admin');
      // a failed search says so and offers a retry
      await page.route('**/api/admin/users?*', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Something went wrong' } }));
      await page.getByRole('search', { name: 'Find a user' }).getByLabel('User e-mail').fill(target.email);
      await page.getByRole('search', { name: 'Find a user' }).getByRole('button', { name: 'Search' }).click();
      await page.getByRole('alert').getByText('Could not search users: Something went wrong').waitFor();
      await page.unroute('**/api/admin/users?*');
      await page.getByRole('button', { name: 'Retry' }).click();
      const detail = page.getByRole('article', { name: target.email });
      const form = detail.getByRole('form', { name: 'Adjust credits' });
      await form.waitFor();
      // someone else spent credits meanwhile: the server has the last word
      await page.route('**/api/admin/credits/adjust', (route) =>
        route.fulfill({
          status: 400,
          json: { success: false, code: 'INSUFFICIENT_CREDITS', error: 'Cannot remove 5 credits: the user has 1 available. Credits never go below zero.' },
        }),
      );
      await form.getByLabel('Remove credits').check();
      await form.getByLabel('Credits', { exact: true }).fill('5');
      await form.getByLabel('Reason').fill('Account reset');
      await form.getByRole('button', { name: 'Remove credits' }).click();
      await form
        .getByRole('alert')
        .getByText('Could not adjust credits: Cannot remove 5 credits: the user has 1 available. Credits never go below zero.')
        .waitFor();
      expect(await detail.getByTestId('admin-balance').textContent()).toBe('5');
      expect(await form.getByRole('button', { name: 'Remove credits' }).isEnabled()).toBe(true);
      await noHorizontalScroll(page);
      await page.unroute('**/api/admin/credits/adjust');
    } finally {
      await context.close();
    }
  });

  it('shows no Admin entry to a normal user, and ?view=admin gives them the normal dashboard', async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      const user = await createTestUser(app.baseUrl);
      await useSession({ context, baseUrl: app.baseUrl }, user.token);
      const page = await context.newPage();
      const adminCalls: string[] = [];
      page.on('request', (req) => {
        if (new URL(req.url()).pathname.startsWith('/api/admin')) adminCalls.push(req.url());
      });

      await page.goto('/?view=admin');
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      expect(await page.getByRole('heading', { name: 'Admin', level: 1 }).count()).toBe(0);
      expect(new URL(page.url()).searchParams.get('view')).toBeNull();
      if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
      const nav = page.getByRole('complementary', { name: 'Sidebar' }).getByRole('navigation', { name: 'Main' });
      await nav.getByRole('button', { name: 'Account' }).waitFor();
      expect(await nav.getByRole('button', { name: 'Admin' }).count()).toBe(0);
      expect(adminCalls).toEqual([]);
      await noHorizontalScroll(page);
    } finally {
      await context.close();
    }
  });
});
