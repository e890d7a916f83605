/**
 * Two-factor sign-in in Chromium at 1440x900 and 390x844, with axe (issue 45 item 3): Account → Security's passkeys,
 * registered with Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain) and used as a second step
 * and as a sign-in on their own; an authenticator app set up from its QR code with codes made here by otplib; and a
 * workspace whose owner requires two-factor sign-in, whose member without it is prompted to set it up.
 *
 * WebAuthn needs a secure origin whose host is a domain: these pages open the app as http://localhost:<port> (a secure
 * context), with PUBLIC_URL saying the same, so the relying party is `localhost`.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { generate } from 'otplib';
import { TWO_FACTOR_MSG } from '../../domain/twoFactor';
import { createTestUser, type TestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

/**
 * A code the server takes now: for the step after the last one it accepted (it never takes a step twice), or the
 * current step when that is later. The server accepts one step either side of its own, so a code made for the next
 * step is good whichever side of a step boundary the request lands.
 */
async function freshCode(secret: string, userId: string): Promise<string> {
  const row = (await testKnex()('totp_factors').where({ user_id: userId }).first('last_used_step')) as { last_used_step: string | null } | undefined;
  const last = row?.last_used_step == null ? -1 : Number(row.last_used_step);
  const step = Math.max(last + 1, Math.floor(Date.now() / 30_000));
  return generate({ secret, epoch: step * 30 });
}

describe('two-factor sign-in in the browser', () => {
  let app: BrowserApp;
  let localUrl: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp({ config: (baseUrl) => ({ publicUrl: baseUrl.replace('127.0.0.1', 'localhost') }) });
    localUrl = app.baseUrl.replace('127.0.0.1', 'localhost');
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await app?.close();
    await closeTestKnex();
  });

  async function localPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await app.browser.newContext({ baseURL: localUrl, viewport });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { context, page, errors };
  }

  /**
   * An authenticator with user verification that always answers yes: a platform one (`internal`, a laptop's
   * fingerprint reader; Chromium keeps one per browser) or a security key (`usb`).
   */
  async function addAuthenticator(cdp: CDPSession, transport: 'internal' | 'usb' = 'internal'): Promise<string> {
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport, hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return authenticatorId;
  }

  async function signInWithPassword(page: Page, user: TestUser): Promise<void> {
    await page.goto('/?auth=signin');
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.getByLabel('Email').fill(user.email);
    await form.getByLabel('Password').fill(user.password);
    await form.getByRole('button', { name: 'Sign in' }).click();
  }

  const dashboard = (page: Page) => page.locator('aside.sidebar').waitFor({ state: 'attached' });

  async function openSecurity(page: Page): Promise<void> {
    await page.goto('/?view=account&tab=security');
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 2 }).waitFor();
  }

  for (const size of SIZES) {
    it(`registers passkeys with a virtual authenticator, then signs in with one as the second step and on its own (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const { context, page, errors } = await localPage(size.viewport);
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const laptop = await addAuthenticator(cdp);

      await signInWithPassword(page, user);
      await dashboard(page);
      await openSecurity(page);
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);

      const add = page.getByRole('form', { name: 'Add a passkey' });
      await add.getByLabel('Passkey name').fill('Laptop');
      await add.getByRole('button', { name: 'Add a passkey' }).click();
      // the account's first factor brings its recovery codes, shown once
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`two-factor-recovery-codes-${size.name}`, page);
      await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();

      // a second passkey on another authenticator (a security key)
      await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: laptop, enabled: false });
      const key = await addAuthenticator(cdp, 'usb');
      await add.getByLabel('Passkey name').fill('Security key');
      await add.getByRole('button', { name: 'Add a passkey' }).click();
      const passkeys = page.getByRole('list', { name: 'Passkeys' });
      await passkeys.getByText('Security key').waitFor();
      expect(await passkeys.getByRole('listitem').count()).toBe(2);
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: key });
      await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: laptop, enabled: true });

      // removing one asks "Confirm it's you": the laptop's passkey confirms
      await page.getByRole('button', { name: 'Remove passkey Security key' }).click();
      const confirm = page.getByRole('dialog', { name: "Confirm it's you" });
      await confirm.waitFor();
      await expectAxeClean(page);
      await confirm.getByRole('button', { name: 'Use a passkey' }).click();
      await confirm.waitFor({ state: 'detached' });
      await passkeys.getByText('Security key').waitFor({ state: 'detached' });
      expect(await passkeys.getByRole('listitem').count()).toBe(1);

      // signed out: the password now asks for the second step, which the passkey answers
      await context.clearCookies();
      await signInWithPassword(page, user);
      const second = page.getByRole('form', { name: 'Two-factor sign-in' });
      await second.waitFor();
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`two-factor-second-step-${size.name}`, page);
      await second.getByRole('button', { name: 'Use a passkey' }).click();
      await dashboard(page);

      // and "Use a passkey" on the sign-in form needs no e-mail or password at all
      await context.clearCookies();
      await page.goto('/?auth=signin');
      await page.getByRole('form', { name: 'Sign in' }).getByRole('button', { name: 'Use a passkey' }).click();
      await dashboard(page);
      const me = await page.evaluate(async () => (await (await fetch('/api/auth/session')).json()) as { user: { email: string } | null });
      expect(me.user?.email).toBe(user.email);
      const sessions = (await testKnex()('sessions').where({ user_id: user.id }).select('authenticated_with')) as Array<{ authenticated_with: string }>;
      expect(sessions.map((s) => s.authenticated_with)).toEqual(expect.arrayContaining(['two_factor', 'passkey']));
      expect(errors).toEqual([]);
    });

    it(`sets up an authenticator app from its QR code and signs in with a code, then a recovery code (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const { context, page, errors } = await localPage(size.viewport);
      await signInWithPassword(page, user);
      await dashboard(page);
      await openSecurity(page);

      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const setup = page.getByRole('form', { name: 'Set up an authenticator app' });
      const qr = setup.getByRole('img', { name: 'QR code for your authenticator app' });
      await qr.waitFor();
      expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await app.screenshot(`two-factor-totp-setup-${size.name}`, page);
      const secret = (await setup.locator('.totp-secret').textContent())!.trim();
      await setup.getByLabel('Code from the app').fill(await freshCode(secret, user.id));
      await setup.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      const codes = await page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
      expect(codes).toHaveLength(10);
      await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
      await page.getByRole('button', { name: 'Remove authenticator app' }).waitFor();

      await context.clearCookies();
      await signInWithPassword(page, user);
      const second = page.getByRole('form', { name: 'Two-factor sign-in' });
      await second.getByLabel('Authentication code').fill('000000' === (await freshCode(secret, user.id)) ? '111111' : '000000');
      await second.getByRole('button', { name: 'Verify' }).click();
      await second.getByRole('alert').filter({ hasText: TWO_FACTOR_MSG.invalidCode }).waitFor();
      await second.getByLabel('Authentication code').fill(await freshCode(secret, user.id));
      await second.getByRole('button', { name: 'Verify' }).click();
      await dashboard(page);

      await context.clearCookies();
      await signInWithPassword(page, user);
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByRole('form', { name: 'Two-factor sign-in' }).getByLabel('Recovery code').fill(codes[0]);
      await expectAxeClean(page);
      await page.getByRole('button', { name: 'Verify' }).click();
      await dashboard(page);
      expect(errors).toEqual([]);
    });

    it(`lets an owner require two-factor sign-in, and prompts a member without it to set it up (${size.name})`, async () => {
      const owner = await createTestUser(app.baseUrl, { name: 'Olivia Owner' });
      const begun = await request<{ secret: string }>(app.baseUrl, '/api/account/two-factor/totp', { token: owner.token, json: {} });
      const on = await request(app.baseUrl, '/api/account/two-factor/totp/confirm', { token: owner.token, json: { code: await freshCode(begun.body.secret, owner.id) } });
      expect(on.status).toBe(200);
      const team = await createTeamWorkspace(app.baseUrl, { owner });
      const member = await joinWorkspace(app.baseUrl, team, 'member');

      const { page } = await pageAs(app, owner, size.viewport, contexts);
      await page.goto(`/?workspace=${team.id}&view=members`);
      const policy = page.getByRole('form', { name: 'Two-factor sign-in for members' });
      await policy.waitFor();
      await expectAxeClean(page);
      await expectNoSidewaysScroll(page);
      await policy.getByLabel('Require two-factor sign-in for every member').check();
      await policy.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Members now need two-factor sign-in.').waitFor();
      await app.screenshot(`two-factor-policy-${size.name}`, page);
      expect((await testKnex()('workspaces').where({ id: team.id }).first('two_factor_required')).two_factor_required).toBe(true);

      const { page: memberPage, errors } = await pageAs(app, member, size.viewport, contexts);
      await memberPage.goto(`/?workspace=${team.id}&view=projects`);
      const notice = memberPage.getByRole('region', { name: 'Two-factor sign-in required' });
      await notice.getByText(TWO_FACTOR_MSG.required(team.name)).waitFor();
      await expectAxeClean(memberPage);
      await expectNoSidewaysScroll(memberPage);
      await app.screenshot(`two-factor-required-${size.name}`, memberPage);
      await notice.getByRole('link', { name: 'Set up two-factor sign-in' }).click();
      await memberPage.getByRole('button', { name: 'Set up an authenticator app' }).waitFor();
      expect(errors).toEqual([]);
    });
  }
});
