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
    expect(await app.page.locator('.opblock').count()).toBe(operations);

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
