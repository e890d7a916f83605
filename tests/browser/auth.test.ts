import { randomUUID } from 'node:crypto';
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

describe('accounts in the browser', () => {
  const email = `browser-${randomUUID()}@example.test`;
  const password = 'render-Studio-42';

  it('signs up from /?auth=signup and shows the dashboard with 5 credits in the sidebar', async () => {
    const { page } = app;
    await page.goto('/?auth=signup');

    const dialog = page.getByRole('dialog', { name: 'Create your account' });
    await dialog.waitFor();
    expect(await dialog.getByRole('tab', { name: 'Sign up' }).getAttribute('aria-selected')).toBe('true');
    await dialog.getByLabel('Full name').fill('Ada Lovelace');
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Password').fill(password);
    await dialog.getByRole('button', { name: 'Create account' }).click();

    const sidebar = page.getByRole('complementary', { name: 'Sidebar' });
    await sidebar.getByRole('region', { name: 'Credits' }).getByText('5 credits', { exact: true }).waitFor();
    await sidebar.getByText('Ada Lovelace', { exact: true }).waitFor();
    expect(await sidebar.getByText(email, { exact: true }).isVisible()).toBe(true);
    expect(await sidebar.getByText('AL', { exact: true }).isVisible()).toBe(true);
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('auth')).toBeNull();
    await app.screenshot('dashboard-after-signup');
  });

  it('signs out back to the landing page', async () => {
    const { page } = app;
    await page.getByRole('button', { name: 'Sign Out' }).click();
    await page.getByRole('heading', { name: 'Turn architectural renders into scroll-stopping video', level: 1 }).waitFor();
    expect(await page.getByRole('complementary', { name: 'Sidebar' }).count()).toBe(0);
    expect(await page.getByText('Free starting credits, no card required.').isVisible()).toBe(true);
    await app.screenshot('landing-after-signout');
  });

  it('shows the server error inline for a wrong password', async () => {
    const { page } = app;
    await page.getByRole('button', { name: 'Sign in' }).click();
    const dialog = page.getByRole('dialog', { name: 'Welcome back' });
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Password').fill('not-the-password-1');
    await dialog.getByRole('button', { name: 'Sign in', exact: true }).click();
    await dialog.getByRole('alert').getByText('Invalid email or password').waitFor();
    await app.screenshot('signin-error');
  });

  it('signs in again and sees the dashboard', async () => {
    const { page } = app;
    const dialog = page.getByRole('dialog', { name: 'Welcome back' });
    await dialog.getByLabel('Password').fill(password);
    await dialog.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    const sidebar = page.getByRole('complementary', { name: 'Sidebar' });
    await sidebar.getByRole('region', { name: 'Credits' }).getByText('5 credits', { exact: true }).waitFor();
    await sidebar.getByText('Ada Lovelace', { exact: true }).waitFor();
    expect(app.pageErrors).toEqual([]);
  });
});
