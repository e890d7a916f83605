/**
 * Every link of README.md, CHANGELOG.md and docs/*.md that points into the app or its API (`/api/docs`,
 * `http://127.0.0.1:3000/?view=approvals`) is opened in Chromium against the running app, signed in as an admin,
 * and fails on a 404 (or a server error other than 503), or on the app's "Page not found" view.
 */
import type { Page } from 'playwright-core';
import { createTestUser, makeAdmin } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { appPathOf, documentationFiles, linksOf } from '../docs/markdown';

let app: BrowserApp;

jest.setTimeout(180_000);

beforeAll(async () => {
  app = await startBrowserApp({ viewport: { width: 1440, height: 900 } });
  const admin = await createTestUser(app.baseUrl, { name: 'Docs Reader' });
  await makeAdmin(testKnex(), admin.id);
  await useSession(app, admin.token);
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** The app's pages are `/` with `?view=`; anything else (API, health, files) is answered by the server itself. */
function isAppPage(appPath: string): boolean {
  return new URL(appPath, 'http://app').pathname === '/';
}

/** Why the link does not open, or null when it does. */
async function problemOpening(page: Page, appPath: string): Promise<string | null> {
  const response = await page.goto(appPath, { waitUntil: 'domcontentloaded' });
  if (!response) return 'no response';
  // 503 is an answer (/health/ready on a machine where a check is slow), not a broken link
  if (response.status() === 404 || (response.status() >= 500 && response.status() !== 503)) return `HTTP ${response.status()}`;
  if (isAppPage(appPath)) {
    await page.locator('h1').first().waitFor({ timeout: 30_000 });
    if (await page.getByRole('heading', { level: 1, name: 'Page not found' }).isVisible()) return 'the app shows "Page not found"';
  }
  return null;
}

const appLinks = documentationFiles()
  .flatMap(linksOf)
  .flatMap((link) => {
    const appPath = appPathOf(link.target);
    return appPath ? [{ ...link, appPath }] : [];
  });

describe('links from the docs into the app', () => {
  test('the docs link into the app and its API', () => {
    const paths = new Set(appLinks.map((l) => new URL(l.appPath, 'http://app').pathname));
    expect(paths).toContain('/api/docs');
    expect([...paths].some((p) => p.startsWith('/health/'))).toBe(true);
    expect(appLinks.some((l) => isAppPage(l.appPath) && l.appPath.includes('view='))).toBe(true);
  });

  test('every one opens', async () => {
    const problems: string[] = [];
    for (const appPath of [...new Set(appLinks.map((l) => l.appPath))]) {
      const problem = await problemOpening(app.page, appPath);
      if (problem) {
        const where = appLinks.filter((l) => l.appPath === appPath).map((l) => `${l.file}:${l.line}`);
        problems.push(`${appPath} (${problem}) in ${where.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('a missing API path or app view is caught', async () => {
    expect(await problemOpening(app.page, '/api/no-such-thing')).toBe('HTTP 404');
    expect(await problemOpening(app.page, '/?view=no-such-view')).toBe('the app shows "Page not found"');
    expect(await problemOpening(app.page, '/?view=approvals')).toBeNull();
  });
});
