import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';

let app: BrowserApp;
let user: TestUser;

beforeAll(async () => {
  app = await startBrowserApp();
  user = await createTestUser(app.baseUrl, { name: 'Grace Hopper' });
  await useSession(app, user.token);
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

function viewParam(url: string): string | null {
  return new URL(url).searchParams.get('view');
}

describe('dashboard navigation', () => {
  it('keeps the view in the URL so reload and Back work', async () => {
    const { page } = app;
    await page.goto('/');
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.getByText('No projects yet').waitFor();

    await page.getByRole('button', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    expect(viewParam(page.url())).toBe('approvals');
    await page.getByText('No pending approvals').waitFor();
    await page.getByText('All your generated content has been reviewed.').waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Approvals' }).getAttribute('aria-current')).toBe('page');

    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account Settings', level: 1 }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(viewParam(page.url())).toBeNull();
  });

  it('shows the pending-approval count as a badge when the stats answer, and no badge when they fail', async () => {
    const { page } = app;
    await page.route('**/api/approvals/stats', (route) =>
      route.fulfill({ json: { success: true, data: { pending_count: 3, limit: 5, total_pending_cost: 7 } } }),
    );
    await page.goto('/?view=approvals');
    await page.getByRole('button', { name: 'Approvals 3 pending' }).waitFor();
    await page.getByText('3 pending', { exact: true }).first().waitFor();
    await page.unroute('**/api/approvals/stats');

    await page.route('**/api/approvals/stats', (route) => route.fulfill({ status: 404, json: { success: false, error: 'Not found' } }));
    await page.reload();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await page.getByText('No pending approvals').waitFor();
    expect(await page.locator('.nav-badge').count()).toBe(0);
    await page.unroute('**/api/approvals/stats');
  });

  it("says 'Unable to load credits' when the credit summary fails", async () => {
    const { page } = app;
    await page.route('**/api/credits/summary', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Internal server error' } }));
    await page.goto('/');
    await page.getByRole('region', { name: 'Credits' }).getByText('Unable to load credits').waitFor();
    await page.unroute('**/api/credits/summary');
  });
});

describe('Account Settings', () => {
  it('saves the profile name and shows it in the sidebar', async () => {
    const { page } = app;
    await page.goto('/?view=account');
    const panel = page.getByRole('tabpanel', { name: 'Profile' });
    const name = panel.getByLabel('Full Name');
    await name.waitFor();
    expect(await name.inputValue()).toBe('Grace Hopper');
    expect(await panel.getByLabel('Email').isEditable()).toBe(false);
    await panel.getByText('Contact support to change your email address').waitFor();
    await panel.getByText('Verified').waitFor();
    await panel.getByText('Member since').waitFor();

    await name.fill('   ');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await panel.getByText('Name cannot be empty').waitFor();

    await name.fill('Grace B. Hopper');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status', { name: 'Notifications' }).getByText('Saved successfully!').waitFor();
    await page.getByRole('complementary', { name: 'Sidebar' }).getByText('Grace B. Hopper', { exact: true }).waitFor();
    await app.screenshot('account-profile');
  });

  it('changes the password only when the new one matches and passes the check', async () => {
    const { page } = app;
    await page.getByRole('tab', { name: 'Security' }).click();
    expect(new URL(page.url()).searchParams.get('tab')).toBe('security');
    const panel = page.getByRole('tabpanel', { name: 'Security' });
    const submit = panel.getByRole('button', { name: 'Update password' });

    await panel.getByLabel('Current password').fill('wrong-current-1');
    await panel.getByLabel('New password', { exact: true }).fill('short1');
    await panel.getByLabel('Confirm new password').fill('short1');
    await panel.getByText('Please fix the password requirements').waitFor();
    expect(await submit.isDisabled()).toBe(true);

    await panel.getByLabel('New password', { exact: true }).fill('longer-password-2');
    await panel.getByLabel('Confirm new password').fill('longer-password-3');
    await panel.getByText('Passwords do not match').waitFor();
    expect(await submit.isDisabled()).toBe(true);

    await panel.getByLabel('Confirm new password').fill('longer-password-2');
    expect(await submit.isEnabled()).toBe(true);
    await submit.click();
    await panel.getByRole('alert').getByText('Failed to update password: Current password is incorrect').waitFor();
    await app.screenshot('account-security-error');

    await panel.getByLabel('Current password').fill(user.password);
    await submit.click();
    await page.getByRole('status', { name: 'Notifications' }).getByText('Password updated').waitFor();
    expect(await panel.getByLabel('Current password').inputValue()).toBe('');
  });

  it('explains credits and lists the three packages in Billing', async () => {
    const { page } = app;
    await page.getByRole('tab', { name: 'Billing' }).click();
    const panel = page.getByRole('tabpanel', { name: 'Billing' });
    await panel.getByRole('heading', { name: 'Credit Balance' }).waitFor();
    await panel.getByText('5', { exact: true }).waitFor();
    await panel.getByRole('heading', { name: 'How Do Credits Work?' }).waitFor();
    await panel.getByText('Running low on credits?', { exact: false }).waitFor();
    for (const [name, price] of [['Small Project', '287.50'], ['Medium Project', '746.35'], ['Large Project', '1,374.25']]) {
      const card = panel.getByRole('article', { name });
      await card.getByText(price, { exact: false }).waitFor();
    }
    await panel.getByRole('article', { name: 'Medium Project' }).getByText('Most Popular').waitFor();
    await app.screenshot('account-billing');
  });

  it('asks for the e-mail before Delete Account, and Cancel deletes nothing', async () => {
    const { page } = app;
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Delete Account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Account' });
    const confirm = dialog.getByRole('button', { name: 'Permanently delete account' });
    await dialog.getByLabel('Type your e-mail address to confirm').fill('someone-else@example.test');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    const me = await page.request.get('/api/auth/me');
    expect(me.status()).toBe(200);
  });
});

describe('small screens', () => {
  it('turns the sidebar into a slide-in menu with a toggle button', async () => {
    const { page } = app;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/');
    const sidebar = page.getByRole('complementary', { name: 'Sidebar' });
    const toggle = page.getByRole('button', { name: 'Open menu' });
    await toggle.waitFor();
    expect(await sidebar.isVisible()).toBe(false);
    await app.screenshot('mobile-closed');

    await toggle.click();
    await sidebar.getByText('5 credits', { exact: true }).waitFor();
    // let the slide-in finish before the screenshot
    await sidebar.evaluate((el: { getAnimations(): { finished: Promise<unknown> }[] }) => Promise.all(el.getAnimations().map((a) => a.finished)));
    expect(await page.getByRole('button', { name: 'Close menu' }).getAttribute('aria-expanded')).toBe('true');
    await app.screenshot('mobile-open');

    await sidebar.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account Settings', level: 1 }).waitFor();
    await sidebar.waitFor({ state: 'hidden' });
    await app.screenshot('mobile-account');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('opens the sign-in tab from /?auth=signin for a visitor', async () => {
    const visitor = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 390, height: 844 } });
    try {
      const page = await visitor.newPage();
      await page.goto('/?auth=signin');
      const dialog = page.getByRole('dialog', { name: 'Welcome back' });
      await dialog.waitFor();
      expect(await dialog.getByRole('tab', { name: 'Sign in' }).getAttribute('aria-selected')).toBe('true');
      await app.screenshot('mobile-signin', page);
    } finally {
      await visitor.close();
    }
  });
});
