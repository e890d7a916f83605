/**
 * Account -> Security -> Access tokens in the browser (issue 29, item 1), at desktop and phone sizes: a token is
 * created from the form (name, scopes, expiry) with the keyboard, shown once with a warning and copied with its
 * button; the test then uses the copied token against the API (a read works, a write outside its scope is 403 naming
 * the scope), sees the list show its last use, revokes it in the UI after confirming, and the token is refused (401).
 * axe finds nothing serious on the section or the dialog, and nothing overflows the phone's width.
 */
import type { Page } from 'playwright-core';
import { createTestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';

const NO_TOKENS = 'You have no access tokens. Create one above when a script or another tool needs to call the API.';

async function noHorizontalOverflow(page: Page): Promise<void> {
  const widths = await page.locator('html').evaluate((root: { scrollWidth: number; clientWidth: number }) => ({ scroll: root.scrollWidth, client: root.clientWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.client);
}

describe.each([
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
])('access tokens in Account -> Security ($name)', ({ name, viewport }) => {
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp({ viewport });
  });

  afterAll(async () => {
    await app?.close();
    await closeTestKnex();
  });

  it('creates a token, shows it once and copies it; the token reads, is refused outside its scope, and is refused once revoked', async () => {
    const user = await createTestUser(app.baseUrl, { name: `Token ${name}` });
    await useSession(app, user.token);
    const { page } = app;
    await app.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    await page.goto('/?view=account&tab=security');
    const section = page.getByRole('region', { name: 'Access tokens' });
    await section.waitFor();
    await page.getByText(NO_TOKENS).waitFor();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await noHorizontalOverflow(page);

    // the form, with the keyboard: name, scopes (read is ticked already; tick approve), an expiry, then Enter
    const nameField = section.getByLabel('Token name');
    await nameField.focus();
    await page.keyboard.type('Listing site');
    await page.keyboard.press('Tab');
    // focus is on the first scope checkbox (read, ticked); move to approve and tick it with Space
    expect(await page.evaluate('document.activeElement && document.activeElement.value')).toBe('read');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.value')).toBe('approve');
    await page.keyboard.press('Space');
    const expiry = new Date(Date.now() + 30 * 86_400_000);
    const day = `${expiry.getFullYear()}-${String(expiry.getMonth() + 1).padStart(2, '0')}-${String(expiry.getDate()).padStart(2, '0')}`;
    await section.getByLabel('Expires on (optional)').fill(day);
    await section.getByRole('button', { name: 'Create token' }).focus();
    await page.keyboard.press('Enter');

    const shown = section.getByRole('status');
    await shown.getByText('Copy your new token now.').waitFor();
    const token = await shown.getByLabel('Token "Listing site"').inputValue();
    expect(token).toMatch(/^rs_pat_[A-Za-z0-9_-]{43}$/);
    await shown.getByRole('button', { name: 'Copy token' }).click();
    await page.getByText('Copied to clipboard!').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    await app.screenshot(`access-tokens-created-${name}`);
    expect(await seriousAxeFindings(page)).toEqual([]);
    await noHorizontalOverflow(page);

    // the list: name, prefix, scopes, never used yet, the expiry
    const list = page.getByRole('list', { name: 'Access tokens' });
    const row = list.getByRole('listitem').filter({ hasText: 'Listing site' });
    await row.getByText(`${token.slice(0, 12)}…`).waitFor();
    await row.getByText('Never used').waitFor();
    await row.getByText('approve', { exact: true }).waitFor();
    await row.getByText(/^Expires /).waitFor();

    // the copied token against the API, as a script would use it
    const copied = String(await page.evaluate('navigator.clipboard.readText()'));
    const read = await request(app.baseUrl, '/api/projects/list', { token: copied });
    expect(read.status).toBe(200);
    const write = await request(app.baseUrl, '/api/projects', { token: copied, json: { name: 'From a script' } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: 'TOKEN_SCOPE_MISSING', error: 'This token lacks the "generate" scope' });

    // Done hides the token for good; the list now says when and from where it was used
    await shown.getByRole('button', { name: 'Done' }).click();
    await expect(section.getByLabel('Token "Listing site"').count()).resolves.toBe(0);
    await page.reload();
    await row.getByText(/Last used .* from /).waitFor();

    // revoke, with the keyboard, after confirming
    await row.getByRole('button', { name: 'Revoke the token Listing site' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke access token' });
    await dialog.waitFor();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('The token "Listing site" was revoked.').waitFor();
    // the list is empty again, and says so without "yet": the user just had a token
    await page.getByRole('region', { name: 'Your tokens' }).getByText(NO_TOKENS).waitFor();
    expect(await page.getByText(/No access tokens yet/).count()).toBe(0);
    expect(await list.count()).toBe(0);
    await app.screenshot(`access-tokens-revoked-${name}`);

    const refused = await request(app.baseUrl, '/api/projects/list', { token: copied });
    expect(refused.status).toBe(401);
    expect(app.pageErrors).toEqual([]);
  });
});
