/**
 * Project uploads and the compression rules of 000 sections 5 and 9, in the browser: an image above 4 MB is
 * compressed even when it is under the API route's 4.5 MB, a GIF too (GIFs used to go up as they were), and a
 * file that is still 4.5 MB or more after the browser tried (one it cannot decode) meets the stricter JPG/PNG
 * check and is refused before it is sent.
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { createProject } from '../projects/fixtures';

const TRIGGER = 4 * 1024 * 1024;
const API_ROUTE_LIMIT = 4718592;

let app: BrowserApp;
let user: TestUser;

beforeAll(async () => {
  app = await startBrowserApp({ viewport: { width: 1440, height: 900 } });
  user = await createTestUser(app.baseUrl, { name: 'Comp Ression' });
  await useSession(app, user.token);
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** Random pixels do not compress: a PNG a little over 4 MB (raw 4.14 MB plus PNG overhead) and under 4.5 MB. */
async function pngBetweenTriggerAndRouteLimit(): Promise<Buffer> {
  const width = 1150;
  const height = 1200;
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

/** A greyscale GIF of random pixels, between 4 MB and 4.5 MB. */
async function gifBetweenTriggerAndRouteLimit(): Promise<Buffer> {
  const width = 2000;
  const height = 1700;
  return sharp(randomBytes(width * height), { raw: { width, height, channels: 1 } }).gif({ effort: 1, dither: 0 }).toBuffer();
}

async function openProject(name: string): Promise<void> {
  await app.page.goto('/');
  await app.page.getByRole('button', { name: `Open project ${name}` }).click();
  await app.page.getByRole('heading', { name, level: 1 }).waitFor();
}

describe('project upload compression', () => {
  it('compresses a 4-4.5 MB PNG and a 4-4.5 MB GIF into JPEGs (both used to go up as they were)', async () => {
    const project = await createProject(app.baseUrl, user, 'Compression Court');
    const png = await pngBetweenTriggerAndRouteLimit();
    const gif = await gifBetweenTriggerAndRouteLimit();
    for (const file of [png, gif]) {
      expect(file.length).toBeGreaterThan(TRIGGER);
      expect(file.length).toBeLessThan(API_ROUTE_LIMIT);
    }

    await openProject('Compression Court');
    const sent: number[] = [];
    app.page.on('request', (request) => {
      // one multipart request, or (from 1 MB) the resumable route's PATCH carrying the file (one 8 MB chunk)
      const url = request.url();
      if (url.endsWith('/api/upload/renders') || (request.method() === 'PATCH' && url.includes('/api/uploads/tus/'))) sent.push(request.postDataBuffer()?.length ?? 0);
    });
    await app.page.locator('input[type="file"]').setInputFiles([
      { name: 'between.png', mimeType: 'image/png', buffer: png },
      { name: 'animated.gif', mimeType: 'image/gif', buffer: gif },
    ]);
    await app.page.getByText('2 files uploaded successfully!').waitFor({ timeout: 60_000 });

    const rows = await testKnex()('renders').where({ project_id: project.id }).orderBy('file_name').select('file_name', 'file_size', 'storage_mime');
    expect(rows.map((r: { file_name: string; storage_mime: string }) => [r.file_name, r.storage_mime])).toEqual([
      ['animated.jpg', 'image/jpeg'],
      ['between.jpg', 'image/jpeg'],
    ]);
    for (const row of rows as Array<{ file_size: string }>) expect(Number(row.file_size)).toBeLessThan(API_ROUTE_LIMIT);
    expect(Number((rows as Array<{ file_size: string }>)[1].file_size)).toBeLessThan(png.length);
    expect(sent).toHaveLength(2);
    for (const bytes of sent) expect(bytes).toBeLessThan(API_ROUTE_LIMIT);
  }, 120_000);

  it("refuses a 4.5 MB file the browser cannot compress that is not a JPG or PNG, with the spec's text, before sending it", async () => {
    await createProject(app.baseUrl, user, 'Strict Street');
    // WEBP by name and type, but bytes no browser decodes: it stays as large as it came
    const undecodable = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(5 * 1024 * 1024, 7)]);
    await openProject('Strict Street');
    let sent = 0;
    app.page.on('request', (request) => {
      const url = request.url();
      if (url.endsWith('/api/upload/renders') || url.includes('/api/uploads/tus')) sent += 1;
    });
    await app.page.locator('input[type="file"]').setInputFiles([{ name: 'scan.webp', mimeType: 'image/webp', buffer: undecodable }]);
    await app.page.getByText('Invalid file type: image/webp. Please upload JPG or PNG images.').waitFor();
    await app.page.getByText('1 file failed to upload').waitFor();
    expect(sent).toBe(0);
  });
});
