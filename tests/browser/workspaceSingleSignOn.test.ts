/**
 * A workspace's single sign-on in Chromium at desktop and phone size, with axe: an owner sets it up in the
 * workspace's settings (the issuer is a real OpenID provider, npm's `oidc-provider`, tests/support/oidcProvider.ts),
 * requires it for the team's domain, then a person signs in with "Sign in with SSO" and their work address through
 * the provider's own pages, and a password sign-in for that domain is refused with the message that says why.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { WORKSPACE_SSO_MSG } from '../../domain/singleSignOn';
import { createTestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';
import { createTeamWorkspace } from '../support/workspaces';

jest.setTimeout(120_000);

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
      return { publicUrl: baseUrl, sso: null };
    },
  });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await app?.close();
  await provider?.close();
  await closeTestKnex();
});

describe('workspace single sign-on in the browser', () => {
  for (const size of SIZES) {
    it(`sets it up, requires it, and signs a person in with their work address at ${size.name} size`, async () => {
      const domain = `acme-${randomUUID().slice(0, 8)}.test`;
      const owner = await createTestUser(app.baseUrl, { email: `owner@${domain}`, name: 'Olivia Owner' });
      const team = await createTeamWorkspace(app.baseUrl, { owner, name: `Acme ${size.name}` });
      const passwordPerson = await createTestUser(app.baseUrl, { email: `pat@${domain}`, name: 'Pat Password' });

      const { page, errors } = await pageAs(app, owner, size.viewport, contexts);
      await page.goto(`/?workspace=${team.id}&view=members`);
      const form = page.getByRole('form', { name: 'Single sign-on' });
      await form.waitFor();
      await expectAxeClean(page);
      await form.getByLabel('Issuer URL').fill(provider.issuer);
      await form.getByLabel('Client ID').fill(provider.clientId);
      await form.getByLabel('Client secret').fill(provider.clientSecret);
      await form.getByLabel('Button name').fill('Acme Identity');
      await form.getByLabel('E-mail domains').fill(domain);
      await form.getByLabel('Require single sign-on for these domains').check();
      await form.getByRole('button', { name: 'Save single sign-on' }).click();
      await page.getByText('Single sign-on saved.').waitFor();
      // saved: the secret is write-only from now on
      await form.getByPlaceholder('Set: leave empty to keep it').waitFor();
      expect(await form.getByLabel('Client secret').inputValue()).toBe('');
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`workspace-sso-settings-${size.name}`, page);
      const row = await testKnex()('workspace_sso_providers').where({ workspace_id: team.id }).first('sso_required');
      expect(row.sso_required).toBe(true);
      expect(errors).toEqual([]);

      // a password for the domain is refused with the reason
      const signedOut = await app.browser.newContext({ baseURL: app.baseUrl, viewport: size.viewport });
      contexts.push(signedOut);
      const visitor = await signedOut.newPage();
      const visitorErrors: string[] = [];
      visitor.on('pageerror', (err) => visitorErrors.push(err.message));
      await visitor.goto('/?auth=signin');
      const dialog = visitor.getByRole('dialog', { name: 'Welcome back' });
      const passwordForm = dialog.getByRole('form', { name: 'Sign in' });
      await passwordForm.getByLabel('Email').fill(passwordPerson.email);
      await passwordForm.getByLabel('Password').fill(passwordPerson.password);
      await passwordForm.getByRole('button', { name: 'Sign in' }).click();
      await passwordForm.getByRole('alert').filter({ hasText: WORKSPACE_SSO_MSG.ssoRequired(team.name, 'Acme Identity') }).waitFor();
      await expectAxeClean(visitor);

      // "Sign in with SSO" with a work address goes through the workspace's provider
      const subject = `sso-${size.name}-${randomUUID()}`;
      const email = `sam-${size.name}@${domain}`;
      provider.addUser(subject, { email, email_verified: true, name: 'Sam Single' });
      await dialog.getByRole('button', { name: 'Sign in with SSO' }).click();
      const ssoForm = dialog.getByRole('form', { name: 'Sign in with SSO' });
      await ssoForm.getByLabel('Work email').fill(`nobody@elsewhere-${randomUUID().slice(0, 6)}.test`);
      await ssoForm.getByRole('button', { name: 'Continue with SSO' }).click();
      await ssoForm.getByRole('alert').filter({ hasText: WORKSPACE_SSO_MSG.noProviderForEmail }).waitFor();
      await expectAxeClean(visitor);
      await expectNoSidewaysScroll(visitor);
      await app.screenshot(`workspace-sso-signin-${size.name}`, visitor);
      await ssoForm.getByLabel('Work email').fill(email);
      await ssoForm.getByRole('button', { name: 'Continue with SSO' }).click();

      // the provider's own pages (oidc-provider's development login and consent)
      await visitor.locator('input[name="login"]').fill(subject);
      await visitor.locator('input[name="password"]').fill('any password');
      await visitor.getByRole('button', { name: 'Sign-in' }).click();
      await visitor.getByRole('button', { name: 'Continue' }).click();

      await visitor.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      expect(new URL(visitor.url()).origin).toBe(app.baseUrl);
      const session = (await visitor.evaluate(async () => (await fetch('/api/auth/session')).json())) as { user: unknown };
      expect(session.user).toMatchObject({ email, emailVerified: true });
      const attempt = await testKnex()('sso_sign_in_attempts').where({ workspace_id: team.id }).whereNotNull('used_at').first('workspace_id');
      expect(attempt?.workspace_id).toBe(team.id);
      await expectNoSidewaysScroll(visitor);
      expect(visitorErrors).toEqual([]);
    });
  }
});
