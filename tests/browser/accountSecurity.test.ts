/**
 * Account security in Chromium at 1440x900 and 390x844, with axe: "Forgot password?" from the sign-in form with the
 * link read from a real SMTP server (aiosmtpd), the unverified banner and its Resend with the link opened, and
 * Account → Security's sessions, ending a second browser's session (which is signed out at once).
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { createTestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';
import { startSmtpServer, type ReceivedMail, type SmtpServer } from '../support/smtpServer';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;
const LANDING_HEADING = 'Turn architectural renders into scroll-stopping video';

describe('account security in the browser', () => {
  let app: BrowserApp;
  let smtp: SmtpServer;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    app = await startBrowserApp({ config: (baseUrl) => ({ publicUrl: baseUrl, smtpUrl: smtp.url }) });
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await app?.close();
    await smtp?.close();
    await closeTestKnex();
  });

  const linkIn = (mail: ReceivedMail): string => (mail.text.match(/http:\/\/127\.0\.0\.1:\d+\/\S+/) ?? [''])[0];

  async function newPage(viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { page, errors };
  }

  for (const size of SIZES) {
    it(`resets a forgotten password from the sign-in form with the e-mailed link (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const { page, errors } = await newPage(size.viewport);
      await page.goto('/?auth=signin');
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      await page.getByRole('heading', { name: 'Reset your password', level: 1 }).waitFor();
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await page.getByRole('form', { name: 'Reset your password' }).getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page.getByRole('status').filter({ hasText: ACCOUNT_SECURITY_MSG.resetRequested }).waitFor();

      const mail = await smtp.next((m) => m.to.includes(user.email) && m.subject === 'Reset your Render Studio password');
      await page.goto(linkIn(mail));
      await page.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
      const newPassword = `New-${randomUUID().slice(0, 8)}-pw-9!`;
      await page.getByRole('textbox', { name: 'New password' }).fill(newPassword);
      await expectAxeClean(page);
      await page.getByRole('button', { name: 'Set new password' }).click();
      await page.getByRole('status').filter({ hasText: ACCOUNT_SECURITY_MSG.passwordResetDone }).waitFor();
      await app.screenshot(`account-reset-${size.name}`, page);

      await page.getByRole('link', { name: 'Sign in' }).click();
      const form = page.getByRole('form', { name: 'Sign in' });
      await form.getByLabel('Email').fill(user.email);
      await form.getByLabel('Password').fill(newPassword);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('aside.sidebar').waitFor({ state: 'attached' });
      expect(errors).toEqual([]);
    });

    it(`shows an unverified account the banner, whose Resend sends a link that verifies (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl, { verified: false });
      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto('/');
      const banner = page.getByRole('region', { name: 'Verify your e-mail address' });
      await banner.getByText(ACCOUNT_SECURITY_MSG.banner).waitFor();
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await banner.getByRole('button', { name: 'Resend' }).click();
      await banner.getByRole('status').filter({ hasText: ACCOUNT_SECURITY_MSG.verificationSent }).waitFor();
      await app.screenshot(`account-verify-banner-${size.name}`, page);

      const subject = 'Verify your e-mail address for Render Studio';
      await smtp.next((m) => m.to.includes(user.email) && m.subject === subject, 10_000, { verification: true });
      const latest = await smtp.next((m) => m.to.includes(user.email) && m.subject === subject, 10_000, { verification: true });
      await page.goto(linkIn(latest));
      await page.getByText(ACCOUNT_SECURITY_MSG.emailVerified).waitFor();
      await expectAxeClean(page);
      await page.getByRole('link', { name: 'Continue to Render Studio' }).click();
      await page.locator('aside.sidebar').waitFor({ state: 'attached' });
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      expect(await page.getByRole('region', { name: 'Verify your e-mail address' }).count()).toBe(0);
      expect(errors).toEqual([]);
    });

    it(`changes the e-mail address through the link sent to the new one (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto('/?view=account&tab=security');
      const form = page.getByRole('form', { name: 'Change e-mail address' });
      const newEmail = `moved-${randomUUID().slice(0, 8)}@example.test`;
      await form.getByLabel('New e-mail address').fill(newEmail);
      await form.getByLabel('Password').fill(user.password);
      await form.getByRole('button', { name: 'Send confirmation link' }).click();
      await form.getByRole('status').filter({ hasText: ACCOUNT_SECURITY_MSG.emailChangeSent(newEmail) }).waitFor();
      await expectAxeClean(page);
      await smtp.next((m) => m.to.includes(user.email) && m.subject === 'Your Render Studio e-mail address is being changed');
      const confirm = await smtp.next((m) => m.to.includes(newEmail) && m.subject === 'Confirm your new e-mail address for Render Studio');
      await page.goto(linkIn(confirm));
      await page.getByText(ACCOUNT_SECURITY_MSG.emailChanged).waitFor();
      expect(errors).toEqual([]);
    });

    it(`lists the sessions and ends another browser's, which is signed out at once (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      // a second browser signs in through the form
      const other = await newPage(size.viewport);
      await other.page.goto('/?auth=signin');
      const form = other.page.getByRole('form', { name: 'Sign in' });
      await form.getByLabel('Email').fill(user.email);
      await form.getByLabel('Password').fill(user.password);
      const streamOpen = other.page.waitForResponse((r) => new URL(r.url()).pathname === '/api/events' && r.status() === 200);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await other.page.locator('aside.sidebar').waitFor({ state: 'attached' });
      await streamOpen;

      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto('/?view=account&tab=security');
      const list = page.getByRole('list', { name: 'Open sessions' });
      await list.getByText('This session').waitFor();
      const items = list.getByRole('listitem');
      await expect(items.count()).resolves.toBe(2);
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`account-sessions-${size.name}`, page);

      const otherItem = items.filter({ hasNotText: 'This session' });
      await otherItem.getByText(/Chrom/).first().waitFor();
      await otherItem.getByRole('button', { name: /^Sign out / }).click();
      await other.page.getByRole('heading', { name: LANDING_HEADING, level: 1 }).waitFor({ timeout: 15_000 });
      await otherItem.waitFor({ state: 'detached' });
      await expect(items.count()).resolves.toBe(1);
      expect(errors).toEqual([]);
      expect(other.errors).toEqual([]);
    });
  }
});
