import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { gaussianNoise } from '../support/stills';

let app: BrowserApp;
let user: TestUser;
let dir: string;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A noise PNG of about 1.5-3 MB: over the 1 MB resumable threshold, under the compression threshold. */
async function render(file: string, width: number, mean: number): Promise<Buffer> {
  const bytes = await (await gaussianNoise(width, 700, { mean, sigma: 45, background: { r: 0, g: 0, b: 0 } }))
    .png()
    .toBuffer();
  fs.writeFileSync(file, bytes);
  return bytes;
}

beforeAll(async () => {
  app = await startBrowserApp();
  user = await createTestUser(app.baseUrl, { name: 'Res Umer' });
  await useSession(app, user.token);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-resumable-'));
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function newProject(name: string): Promise<string> {
  const res = await request(app.baseUrl, '/api/projects', { token: user.token, json: { name } });
  return res.body.project.id as string;
}

describe.each([
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
])('resumable uploads in the library at $width x $height', (viewport) => {
  it('a dropped connection shows "Resuming…" and the percentage, then the render arrives byte-identical', async () => {
    const { page } = app;
    await page.setViewportSize(viewport);
    const projectId = await newProject(`Resume ${viewport.width}`);
    const file = path.join(dir, `tower-${viewport.width}.png`);
    const bytes = await render(file, 1100, 120 + (viewport.width % 7));
    expect(bytes.length).toBeGreaterThan(1024 * 1024);

    let patches = 0;
    await page.route('**/api/uploads/tus/*', async (route) => {
      if (route.request().method() === 'PATCH' && patches++ === 0) return route.abort('connectionreset');
      return route.continue();
    });
    await page.goto(`/?project=${projectId}`);
    await page.getByText('No content yet').waitFor();
    await page.locator('input[type="file"]').setInputFiles(file);
    await page.getByText(/Resuming… 0\/1/).waitFor();
    await page.getByText(/^\d+%$/).first().waitFor();
    await page.getByText('1 file uploaded successfully!').waitFor({ timeout: 30_000 });
    await page.unroute('**/api/uploads/tus/*');
    expect(patches).toBeGreaterThanOrEqual(2);

    const [row] = await testKnex()('renders').where({ project_id: projectId });
    expect(row).toMatchObject({ file_name: path.basename(file), checksum: sha256(bytes), storage_size: String(bytes.length) });
    await page.getByRole('heading', { name: path.basename(file) }).or(page.getByText(path.basename(file)).first()).first().waitFor();
    const overflow = await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');
    expect(overflow).toBe(false);
  });

  it('after a reload mid-upload, choosing the same file again continues the same upload', async () => {
    const { page } = app;
    await page.setViewportSize(viewport);
    const projectId = await newProject(`Reload ${viewport.width}`);
    const file = path.join(dir, `plaza-${viewport.width}.png`);
    const bytes = await render(file, 1000, 90 + (viewport.width % 5));

    const creations: string[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url().endsWith('/api/uploads/tus')) creations.push(req.url());
    });
    // the first attempt never gets its bytes through (every PATCH fails until the page is reloaded)
    await page.route('**/api/uploads/tus/*', (route) => (route.request().method() === 'PATCH' ? route.abort('connectionreset') : route.continue()));
    await page.goto(`/?project=${projectId}`);
    await page.getByText('No content yet').waitFor();
    const created = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith('/api/uploads/tus'));
    const tried = page.waitForRequest((req) => req.method() === 'PATCH' && req.url().includes('/api/uploads/tus/'));
    await page.locator('input[type="file"]').setInputFiles(file);
    expect((await created).status()).toBe(201);
    await tried;
    expect(creations).toHaveLength(1);
    await page.reload();
    await page.getByText('No content yet').waitFor();
    await page.unroute('**/api/uploads/tus/*');
    // the project says what stopped: the file, how far it got, and the ways on
    const unfinished = page.getByRole('region', { name: 'Unfinished uploads' });
    await unfinished.getByText(path.basename(file)).waitFor();
    await unfinished.getByText(/of \d+(\.\d)? MB \(\d+ %\), started/).waitFor();
    await unfinished.getByRole('button', { name: 'Cancel upload' }).waitFor();
    const overflowed = await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');
    expect(overflowed).toBe(false);
    const resumed = page.waitForRequest((req) => req.method() === 'HEAD' && req.url().includes('/api/uploads/tus/'));
    // Resume opens the file picker: picking the same file continues it
    const chooser = page.waitForEvent('filechooser');
    await unfinished.getByRole('button', { name: 'Resume' }).click();
    await (await chooser).setFiles(file);
    await resumed;
    await page.getByText('1 file uploaded successfully!').waitFor({ timeout: 30_000 });
    await unfinished.waitFor({ state: 'detached' });
    // the upload the browser remembered was resumed: no second creation
    expect(creations).toHaveLength(1);
    const uploads = await testKnex()('resumable_uploads').where({ project_id: projectId });
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatchObject({ status: 'completed' });
    const [row] = await testKnex()('renders').where({ project_id: projectId });
    expect(row.checksum).toBe(sha256(bytes));
  });
  it('an unfinished upload can be cancelled from the list: it leaves the list and frees its slot', async () => {
    const { page } = app;
    await page.setViewportSize(viewport);
    const projectId = await newProject(`Cancel ${viewport.width}`);
    const file = path.join(dir, `quay-${viewport.width}.png`);
    await render(file, 1000, 60 + (viewport.width % 3));
    await page.route('**/api/uploads/tus/*', (route) => (route.request().method() === 'PATCH' ? route.abort('connectionreset') : route.continue()));
    await page.goto(`/?project=${projectId}`);
    await page.getByText('No content yet').waitFor();
    const tried = page.waitForRequest((req) => req.method() === 'PATCH' && req.url().includes('/api/uploads/tus/'));
    await page.locator('input[type="file"]').setInputFiles(file);
    await tried;
    await page.reload();
    await page.unroute('**/api/uploads/tus/*');
    const unfinished = page.getByRole('region', { name: 'Unfinished uploads' });
    const row = unfinished.getByRole('listitem').filter({ hasText: path.basename(file) });
    await row.getByRole('button', { name: 'Cancel upload' }).click();
    await page.getByText(`Cancelled the upload of ${path.basename(file)}`).waitFor();
    await row.waitFor({ state: 'detached' });
    expect(await testKnex()('resumable_uploads').where({ project_id: projectId }).select('status')).toEqual([{ status: 'cancelled' }]);
  });
});
