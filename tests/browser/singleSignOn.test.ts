/**
 * "Sign in with <name>" in Chromium at desktop and phone size, with axe: the sign-in dialog offers the installation's
 * identity provider, and the button signs in through a real OpenID provider (npm's `oidc-provider`,
 * tests/support/oidcProvider.ts): its own login and consent pages, then back to the app's dashboard.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';
import { startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
];

let provider: TestOidcProvider;
let app: BrowserApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  provider = await startOidcProvider();
  app = await startBrowserApp({
    config: (baseUrl) => {
      provider.registerRedirectUri(`${baseUrl}/api/auth/sso/callback`);
      return { publicUrl: baseUrl, sso: { issuerUrl: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, name: 'Acme Identity' } };
    },
  });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await app?.close();
  await provider?.close();
  await closeTestKnex();
});

describe('single sign-on in the browser', () => {
  for (const size of SIZES) {
    it(`signs a new person in with the identity provider at ${size.name} size`, async () => {
      const subject = `browser-${size.name}-${randomUUID()}`;
      const email = `${subject}@acme.example.test`;
      provider.addUser(subject, { email, email_verified: true, name: `Sam ${size.name === 'phone' ? 'Phone' : 'Desk'}` });
      const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: size.viewport });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));

      await page.goto('/?auth=signin');
      const dialog = page.getByRole('dialog', { name: 'Welcome back' });
      const button = dialog.getByRole('link', { name: 'Sign in with Acme Identity' });
      await button.waitFor();
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`sso-signin-${size.name}`, page);
      await button.click();

      // the provider's own pages (oidc-provider's development login and consent)
      await page.locator('input[name="login"]').fill(subject);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();

      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      expect(new URL(page.url()).origin).toBe(app.baseUrl);
      const session = (await page.evaluate(async () => (await fetch('/api/auth/session')).json())) as { user: unknown };
      expect(session.user).toMatchObject({ email, emailVerified: true });
      await expectNoSidewaysScroll(page);
      expect(errors).toEqual([]);
    });
  }
});
