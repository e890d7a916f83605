/**
 * Project uploads keep the original (docs/architecture.md "Originals"), in the browser at desktop and phone sizes: a
 * PNG and a GIF between 4 and 4.5 MB (the specs redrew both as JPEGs) and a 6000x4000 JPEG over 4.5 MB (the specs
 * shrank it to 2048 px and, as it could not pass their 4.5 MB route, it went by their JPG/PNG-only path) are stored
 * with the bytes that were picked, and the item dialog shows each one's real dimensions and size. The dialog's picture
 * is the render's preview (a WebP of at most 2048 px: the small ones' made in the request, the 6000x4000's by the
 * worker), never the original; its Download action gets the original's bytes. The AI editor says that it works on a
 * 2048 px copy of the 6000x4000 render.
 */
import { createHash, randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { gaussianNoise } from '../support/stills';
import { createTestUser, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { downloadedBytes, startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { uniqueTaskQueue, withWorker } from '../support/temporal';
import { logger } from '../../config/logger';
import { createRenderThumbnailActivities } from '../../activities/renderThumbnails';
import { PREVIEW_SIDE } from '../../services/content/renderThumbnails';
import { runStorage } from '../support/objectStorage';
import { createProject } from '../projects/fixtures';
import { download } from '../enhanceRenders/support';

const SPEC_TRIGGER = 4 * 1024 * 1024;
const SPEC_ROUTE_LIMIT = 4718592;

const queue = uniqueTaskQueue('originals');
let app: BrowserApp;
let user: TestUser;
let files: Array<{ name: string; mimeType: string; buffer: Buffer; width: number; height: number }>;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

beforeAll(async () => {
  // the worker that makes the 6000x4000 render's thumbnail and preview polls this queue during each test
  app = await startBrowserApp({ viewport: { width: 1440, height: 900 }, taskQueues: { media: queue } });
  user = await createTestUser(app.baseUrl, { name: 'Orig Inal' });
  await useSession(app, user.token);
  // random pixels do not compress: sizes follow the pixel counts
  const png = await sharp(randomBytes(1150 * 1200 * 3), { raw: { width: 1150, height: 1200, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  const gif = await sharp(randomBytes(2000 * 1700), { raw: { width: 2000, height: 1700, channels: 1 } }).gif({ effort: 1, dither: 0 }).toBuffer();
  const jpeg = await (await gaussianNoise(6000, 4000, { sigma: 20, background: { r: 150, g: 160, b: 175 } }))
    .jpeg({ quality: 85 })
    .toBuffer();
  files = [
    { name: 'between.png', mimeType: 'image/png', buffer: png, width: 1150, height: 1200 },
    { name: 'animated.gif', mimeType: 'image/gif', buffer: gif, width: 2000, height: 1700 },
    { name: 'tower.jpg', mimeType: 'image/jpeg', buffer: jpeg, width: 6000, height: 4000 },
  ];
}, 120_000);

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

describe('project uploads keep the original', () => {
  it('made files the specs would have compressed', () => {
    for (const file of files.slice(0, 2)) {
      expect(file.buffer.length).toBeGreaterThan(SPEC_TRIGGER);
      expect(file.buffer.length).toBeLessThan(SPEC_ROUTE_LIMIT);
    }
    expect(files[2].buffer.length).toBeGreaterThan(SPEC_ROUTE_LIMIT);
  });

  for (const [size, viewport] of [
    ['1440 x 900', { width: 1440, height: 900 }],
    ['390 x 844', { width: 390, height: 844 }],
  ] as const) {
    it(`stores the picked bytes and shows the real size and the preview (not the original) in the item dialog at ${size}`, async () => {
      await withWorker({ taskQueue: queue, activities: createRenderThumbnailActivities({ knex: testKnex(), storage: runStorage(), logger }) }, () => dialogShowsPreviews(viewport));
    }, 150_000);
  }
});

async function dialogShowsPreviews(viewport: { width: number; height: number }): Promise<void> {
  const { page } = app;
  await page.setViewportSize(viewport);
  const projectName = `Originals ${viewport.width}`;
  const project = await createProject(app.baseUrl, user, projectName);
  await page.goto(`/?project=${project.id}`);
  await page.getByRole('heading', { name: projectName, level: 1 }).waitFor();
  await page.locator('input[type="file"]').setInputFiles(files.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));
  await page.getByText('3 files uploaded successfully!').waitFor({ timeout: 90_000 });

  // the worker makes the large render's copies after the upload; the library hears of them through its event stream
  await waitForPreviews(project.id, files.length);
  const rows = (await testKnex()('renders').where({ project_id: project.id }).select('id', 'file_name', 'file_size', 'storage_mime', 'checksum', 'width', 'height', 'preview_path')) as Array<{
    preview_path: string;
    file_name: string;
    file_size: string;
    storage_mime: string;
    checksum: string;
    width: number;
    height: number;
  }>;
  expect(rows).toHaveLength(3);
  for (const file of files) {
    const row = rows.find((r) => r.file_name === file.name);
    expect(row).toMatchObject({ storage_mime: file.mimeType, checksum: sha256(file.buffer), width: file.width, height: file.height });
    expect(Number(row?.file_size)).toBe(file.buffer.length);
  }

  for (const file of files) {
    // its tile has its thumbnail: the library has the item with its copies
    await page.getByRole('button', { name: `Open render ${file.name}` }).locator('img').waitFor();
    await page.getByRole('button', { name: `Open render ${file.name}` }).click();
    const dialog = page.getByRole('dialog', { name: file.name });
    await dialog.getByText(`${file.width} × ${file.height} · ${megabytes(file.buffer.length)}`).waitFor();
    // what the dialog shows is the preview (a 2048 px WebP at most), never the original
    const picture = dialog.getByRole('img', { name: file.name });
    await picture.and(page.locator('[src*="previews"]')).waitFor();
    const shown = (await picture.getAttribute('src')) as string;
    const row = rows.find((r) => r.file_name === file.name)!;
    expect(shown).toContain(row.preview_path);
    const previewBytes = await download(app.baseUrl, shown);
    expect(sha256(previewBytes)).not.toBe(sha256(file.buffer));
    const meta = await sharp(previewBytes).metadata();
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width!, meta.height!)).toBe(Math.min(PREVIEW_SIDE, Math.max(file.width, file.height)));
    if (file.name !== 'tower.jpg') {
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      continue;
    }
    expect(await seriousAxeFindings(page)).toEqual([]);
    await app.screenshot(`upload-originals-dialog-${viewport.width}`);
    // its Download action still gets the original's bytes
    const downloading = page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Download' }).click();
    expect(sha256(await downloadedBytes(await downloading))).toBe(sha256(file.buffer));
    // an AI edit works on a 2048 px copy: the editor says so near its action
    await dialog.getByRole('button', { name: 'Edit with AI' }).click();
    await page.getByRole('heading', { name: 'Enhanced AI Editor', level: 1 }).waitFor();
    await page.getByText('The AI works on a 2048 px copy of this 6000 × 4000 image; your original stays as it is.').waitFor();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await app.screenshot(`upload-originals-editor-${viewport.width}`);
    await page.getByRole('button', { name: 'Back to Project' }).click();
    await page.getByRole('heading', { name: projectName, level: 1 }).waitFor();
  }
  expect(app.pageErrors).toEqual([]);
}

/** Until every render of the project has its preview recorded (the worker's for the 6000x4000 one). */
async function waitForPreviews(projectId: string, count: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const made = await testKnex()('renders').where({ project_id: projectId }).whereNotNull('preview_path').count<{ count: string }[]>('id as count');
    if (Number(made[0].count) === count) return;
    if (Date.now() > until) throw new Error('timed out waiting for the previews');
    await new Promise((r) => setTimeout(r, 200));
  }
}
