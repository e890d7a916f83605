/**
 * The built front end as Chromium loads it from the API with NODE_ENV=production: the landing page loads its
 * own chunk and no dashboard code (every network request recorded), under 100 KB of gzip-compressed script;
 * the dashboard's chunks arrive only after sign-in, one view at a time. Scripts and styles come compressed
 * (Content-Encoding), hashed assets cache for a year, index.html never, and no source map is served.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Response } from 'playwright-core';
import { createTestUser } from '../support/accounts';
import { FRONTEND_DIST, startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';

interface ManifestChunk {
  file: string;
  name?: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  css?: string[];
}

const manifest = JSON.parse(fs.readFileSync(path.join(FRONTEND_DIST, '.vite', 'manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
const entryKey = Object.keys(manifest).find((key) => manifest[key].isEntry)!;

/**
 * The chunk a source module's dynamic import loads. Vite keys it by the source path, or (when other chunks
 * import from it too) by its file name, with the module's name as `name`.
 */
function chunkOf(source: string): string {
  const name = path.basename(source, path.extname(source));
  const chunk = manifest[source] ?? Object.values(manifest).find((c) => c.isDynamicEntry && c.name === name);
  if (!chunk?.isDynamicEntry) throw new Error(`${source} is not loaded on demand in this build: ${Object.keys(manifest).join(', ')}`);
  return `/${chunk.file}`;
}

/** The entry and every chunk it imports statically: what the first page load needs. */
function initialScripts(): string[] {
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const imported of manifest[key].imports ?? []) visit(imported);
  };
  visit(entryKey);
  return [...seen].map((key) => `/${manifest[key].file}`);
}

const DASHBOARD_SOURCES = [
  'src/views/Dashboard/DashboardShell.tsx',
  'src/views/Projects/ProjectsView.tsx',
  'src/views/Approvals/ApprovalsView.tsx',
  'src/views/Account/AccountView.tsx',
  'src/views/ClipGeneration/ClipGenerationView.tsx',
  'src/views/ImageEditor/EnhancedEditorView.tsx',
  'src/views/Admin/AdminView.tsx',
  'src/views/Activity/ActivityView.tsx',
];

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp({ config: () => ({ nodeEnv: 'production' }) });
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** Every response the page gets while `action` runs, by path. */
async function recordResponses(page: Page, action: () => Promise<void>): Promise<Map<string, Response>> {
  const responses = new Map<string, Response>();
  const onResponse = (response: Response) => {
    const url = new URL(response.url());
    if (url.origin === app.baseUrl) responses.set(url.pathname, response);
  };
  page.on('response', onResponse);
  try {
    await action();
  } finally {
    page.off('response', onResponse);
  }
  return responses;
}

describe('landing bundle', () => {
  it('loads no dashboard chunk on the landing page, and the dashboard view by view after sign-in', async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    try {
      const landing = await recordResponses(page, async () => {
        await page.goto('/');
        await page.getByRole('heading', { name: 'Turn architectural renders into scroll-stopping video', level: 1 }).waitFor();
        // scroll to the bottom, so anything loaded late would be seen too
        await page.getByRole('navigation', { name: 'Render Studio on social media' }).scrollIntoViewIfNeeded();
        await page.waitForTimeout(500);
      });
      const scripts = [...landing.keys()].filter((p) => p.endsWith('.js'));
      expect(scripts.sort()).toEqual(initialScripts().sort());
      for (const source of DASHBOARD_SOURCES) expect(landing.has(chunkOf(source))).toBe(false);

      // signed in, the shell and the Projects view arrive on demand; Approvals only when opened; Admin never
      const user = await createTestUser(app.baseUrl);
      await useSession({ context, baseUrl: app.baseUrl }, user.token);
      const dashboard = await recordResponses(page, async () => {
        await page.goto('/');
        await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      });
      expect(dashboard.has(chunkOf('src/views/Dashboard/DashboardShell.tsx'))).toBe(true);
      expect(dashboard.has(chunkOf('src/views/Projects/ProjectsView.tsx'))).toBe(true);
      expect(dashboard.has(chunkOf('src/views/Approvals/ApprovalsView.tsx'))).toBe(false);
      const approvals = await recordResponses(page, async () => {
        await page.getByRole('button', { name: /^Approvals/ }).click();
        await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
      });
      expect(approvals.has(chunkOf('src/views/Approvals/ApprovalsView.tsx'))).toBe(true);
      expect(approvals.has(chunkOf('src/views/Admin/AdminView.tsx'))).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('keeps the landing page under 100 KB of gzip-compressed script', () => {
    const gzipBytes = initialScripts().reduce((sum, file) => sum + fs.statSync(path.join(FRONTEND_DIST, `${file}.gz`)).size, 0);
    expect(gzipBytes).toBeGreaterThan(0);
    expect(gzipBytes).toBeLessThan(100 * 1024);
  });

  it('serves scripts and styles compressed, hashed assets cached for a year, index.html never cached', async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl });
    const page = await context.newPage();
    try {
      const responses = await recordResponses(page, async () => {
        const video = page.waitForResponse((r) => r.url().endsWith('.mp4'));
        await page.goto('/');
        await page.getByRole('heading', { name: 'Turn architectural renders into scroll-stopping video', level: 1 }).waitFor();
        // the videos start loading after the page shows
        await video;
      });
      const document = responses.get('/')!;
      expect(await document.allHeaders()).toMatchObject({ 'cache-control': 'no-cache', 'content-encoding': 'br', vary: expect.stringMatching(/Accept-Encoding/i) });
      const assets = [...responses.entries()].filter(([p]) => /^\/assets\/.+\.(js|css)$/.test(p));
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const [, response] of assets) {
        expect(response.status()).toBe(200);
        expect(await response.allHeaders()).toMatchObject({ 'cache-control': 'max-age=31536000,immutable', 'content-encoding': 'br' });
      }
      const videos = [...responses.entries()].filter(([p]) => p.endsWith('.mp4'));
      expect(videos.length).toBeGreaterThanOrEqual(1);
      for (const [, response] of videos) {
        const headers = await response.allHeaders();
        expect(headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(headers['content-encoding']).toBeUndefined();
      }
      // a client that takes gzip only gets gzip
      const gz = await page.request.get(initialScripts()[0], { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers()['content-encoding']).toBe('gzip');
    } finally {
      await context.close();
    }
  });

  it('serves no source map in production', async () => {
    // the production build emits none; a map copied in by hand is refused all the same
    expect(fs.readdirSync(path.join(FRONTEND_DIST, 'assets')).filter((f) => f.endsWith('.map'))).toEqual([]);
    const entry = initialScripts()[0];
    const planted = path.join(FRONTEND_DIST, `${entry}.map`);
    fs.writeFileSync(planted, '{"version":3,"sources":[]}');
    try {
      const res = await fetch(`${app.baseUrl}${entry}.map`);
      expect(res.status).toBe(404);
    } finally {
      fs.rmSync(planted, { force: true });
    }
    const script = await (await fetch(`${app.baseUrl}${entry}`)).text();
    expect(script).not.toMatch(/sourceMappingURL/);
  });
});
