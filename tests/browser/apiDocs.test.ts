/**
 * The API reference page (/api/docs, Swagger UI from the swagger-ui-dist package) renders every operation of the
 * document in Chromium under the app's strict CSP with zero violations, at a desktop and a phone size.
 */
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';

const RECORD_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__cspViolations.push(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber);
  });
`;

let app: BrowserApp;

jest.setTimeout(180_000);

beforeAll(async () => {
  app = await startBrowserApp();
  await app.context.addInitScript(RECORD_VIOLATIONS);
});

afterAll(async () => {
  await app.close();
  await closeTestKnex();
});

/** What the page's scrolling needs of its window (the tests are typed without the DOM library). */
interface PageWindow {
  innerHeight: number;
  scrollY: number;
  scrollBy(x: number, y: number): void;
  scrollTo(x: number, y: number): void;
  requestAnimationFrame(callback: () => void): number;
  document: { documentElement: { scrollHeight: number } };
}

describe('the API reference page', () => {
  it.each([
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ])('shows every operation with zero CSP violations at %o', async (viewport) => {
    const { body: doc } = await request<{ paths: Record<string, Record<string, unknown>>; webhooks?: Record<string, Record<string, unknown>> }>(app.baseUrl, '/api/openapi.json');
    const count = (items: Record<string, Record<string, unknown>>) => Object.values(items).reduce((n, item) => n + Object.keys(item).length, 0);
    // the page shows each operation and, in its Webhooks section, each webhook the document describes
    const operations = count(doc.paths) + count(doc.webhooks ?? {});
    expect(count(doc.webhooks ?? {})).toBeGreaterThan(0);
    await app.page.setViewportSize(viewport);
    await app.page.goto('/api/docs');
    try {
      await app.page.locator('.opblock').first().waitFor({ timeout: 60_000 });
    } catch (err) {
      throw new Error(`no operation shown: CSP ${JSON.stringify(await app.page.evaluate('window.__cspViolations'))}, page errors ${JSON.stringify(app.pageErrors)}, console ${JSON.stringify(app.consoleErrors)}`, { cause: err });
    }
    await app.page.getByText('Render studio API').first().waitFor();
    // Swagger UI renders a long list only near the viewport (past about 145 operations it unmounts what scrolled
    // away), so the page is read as a user reads it: scrolled through, noting each operation it showed
    const seen = new Set<string>();
    for (let step = 0; step < 500 && seen.size < operations; step += 1) {
      const shown = await app.page
        .locator('.opblock')
        .evaluateAll((blocks) => blocks.map((b) => `${b.id}|${b.querySelector('.opblock-summary-method')?.textContent ?? ''}|${b.querySelector('.opblock-summary-path, .opblock-summary-path__deprecated')?.textContent ?? b.textContent?.slice(0, 120)}`));
      for (const key of shown) seen.add(key);
      const atEnd = await app.page.evaluate(() => {
        const w = globalThis as unknown as PageWindow;
        return w.innerHeight + w.scrollY >= w.document.documentElement.scrollHeight - 2;
      });
      if (atEnd && step > 0 && shown.every((key) => seen.has(key)) && seen.size >= operations) break;
      await app.page.evaluate((dy) => (globalThis as unknown as PageWindow).scrollBy(0, dy), Math.round(viewport.height * 0.7));
      // two frames: the list renders what scrolled into view
      await app.page.evaluate(() => {
        const w = globalThis as unknown as PageWindow;
        return new Promise<void>((resolve) => w.requestAnimationFrame(() => w.requestAnimationFrame(() => resolve())));
      });
    }
    expect(seen.size).toBe(operations);
    await app.page.evaluate(() => (globalThis as unknown as PageWindow).scrollTo(0, 0));

    // a user reads one operation: its parameters and documented answers open
    const signup = app.page.locator('.opblock-post', { hasText: '/api/auth/signup' }).first();
    await signup.locator('.opblock-summary').click();
    await signup.getByText('Responses').first().waitFor();
    await signup.getByText('409').first().waitFor();
    await app.screenshot(`api-docs-${viewport.width}`);

    const violations = await app.page.evaluate('window.__cspViolations');
    expect(violations).toEqual([]);
    expect(app.pageErrors).toEqual([]);
  });
});
