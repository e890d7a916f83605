/**
 * A session ended elsewhere signs the open app out, as its own Sign Out would (issue 31, item 1): the event stream
 * says so (signed out in another tab, revoked), or, when the stream is down, its refused reconnect makes the app
 * check its session. At desktop and phone sizes, with no serious axe findings on the page it lands on.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { sessionIdForToken } from '../../services/accounts/sessions';
import { seriousAxeFindings } from '../support/axe';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

const LANDING_HEADING = 'Turn architectural renders into scroll-stopping video';
const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

describe('a session ended elsewhere signs the open app out', () => {
  let app: BrowserApp;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await app?.close();
    await closeTestKnex();
  });

  /** The user's dashboard in a browser of its own, once its event stream is open; a marker a reload would wipe. */
  async function openDashboard(user: TestUser, viewport: { width: number; height: number }, streamDown = false): Promise<Page> {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    contexts.push(context);
    await context.addCookies([{ name: 'rs_session', value: user.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    (page as Page & { errors?: string[] }).errors = errors;
    if (streamDown) await page.route('**/api/events*', (route) => route.abort());
    const streamOpen = streamDown ? null : page.waitForResponse((r) => new URL(r.url()).pathname === '/api/events' && r.status() === 200);
    await page.goto('/?view=approvals');
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await streamOpen;
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    return page;
  }

  async function expectSignedOut(page: Page, withinMs: number): Promise<void> {
    await page.getByRole('heading', { name: LANDING_HEADING, level: 1 }).waitFor({ timeout: withinMs });
    expect(await page.getByRole('complementary', { name: 'Sidebar' }).count()).toBe(0);
    // as after Sign Out: the view is back to the default, without a reload
    expect(new URL(page.url()).searchParams.get('view')).toBeNull();
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await seriousAxeFindings(page)).toEqual([]);
    expect((page as Page & { errors?: string[] }).errors).toEqual([]);
  }

  for (const size of SIZES) {
    it(`signed out in another tab: the open app goes to the landing page within seconds (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const page = await openDashboard(user, size.viewport);
      expect((await request(app.baseUrl, '/api/auth/signout', { method: 'POST', token: user.token })).status).toBe(200);
      await expectSignedOut(page, 10_000);
      await app.screenshot(`session-ended-signout-${size.name}`, page);
    });

    it(`revoked while the stream is down: the refused reconnect signs the app out (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl);
      const page = await openDashboard(user, size.viewport, true);
      await testKnex()('sessions').where({ id: sessionIdForToken(user.token) }).delete();
      // the next attempt (backoff of 1 s, 2 s, ...) is refused and the session check finds it gone
      await expectSignedOut(page, 15_000);
    });
  }

  it('keeps the app signed in when the stream fails but the session is valid', async () => {
    const user = await createTestUser(app.baseUrl);
    const page = await openDashboard(user, SIZES[0].viewport, true);
    const attempts: string[] = [];
    page.on('requestfailed', (r) => {
      if (new URL(r.url()).pathname === '/api/events') attempts.push(r.url());
    });
    // two more refused attempts (about 1 s and 2 s apart), each followed by a session check that finds it valid
    while (attempts.length < 2) await page.waitForTimeout(100);
    await page.waitForTimeout(500);
    expect(await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).isVisible()).toBe(true);
    expect((page as Page & { errors?: string[] }).errors).toEqual([]);
  });
});
