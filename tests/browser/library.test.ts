import { createTestUser, type TestUser } from '../support/accounts';
import { downloadedBytes, startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { storedObjectExists } from '../support/objectStorage';
import { gaussianNoise } from '../support/stills';

let app: BrowserApp;
let user: TestUser;

/** The specs compressed uploads from this size; originals are kept instead (docs/architecture.md). */
const SPEC_COMPRESSION_THRESHOLD = 4718592;

function noise(width: number, height: number, mean = 128) {
  return gaussianNoise(width, height, { mean, sigma: 45, background: { r: 0, g: 0, b: 0 } });
}

beforeAll(async () => {
  app = await startBrowserApp();
  user = await createTestUser(app.baseUrl, { name: 'Lib Rarian' });
  await useSession(app, user.token);
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

interface RenderRow {
  id: string;
  file_name: string;
  file_size: string;
  storage_mime: string;
  storage_path: string;
  aspect_ratio: string;
  width: number;
  height: number;
}

async function rendersOf(projectId: string): Promise<RenderRow[]> {
  return testKnex()('renders').where({ project_id: projectId }).orderBy('created_at');
}

describe('content library in the browser', () => {
  it('creates a project, uploads three renders (a large one kept as it is), renames, deletes and downloads', async () => {
    const { page } = app;
    const small = await (await noise(800, 450)).png().toBuffer(); // 16:9
    const portrait = await (await noise(640, 800, 110)).jpeg({ quality: 85 }).toBuffer(); // 4:5
    const large = await (await noise(2400, 1800, 140)).png().toBuffer(); // 4:3, well above the specs' 4.5 MB compression threshold
    expect(large.length).toBeGreaterThan(SPEC_COMPRESSION_THRESHOLD);

    await page.goto('/');
    await page.getByText('No projects yet').waitFor();
    await page.getByRole('button', { name: 'New Project' }).first().click();
    await page.getByLabel('Project name').fill('Harbour View');
    await page.getByLabel('Address (optional)').fill('1 Quay Street');
    await page.getByRole('button', { name: 'Create Project' }).click();

    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Back to Projects' }).waitFor();
    await page.getByText('No content yet').waitFor();
    const projectId = new URL(page.url()).searchParams.get('project') as string;
    expect(projectId).toMatch(/^[0-9a-f-]{36}$/);

    // the uploads are held until the progress bar and its count have been seen
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/upload/renders', async (route) => {
      await released;
      await route.continue();
    });
    await page.locator('input[type="file"]').setInputFiles([
      { name: 'facade.png', mimeType: 'image/png', buffer: small },
      { name: 'portrait.jpg', mimeType: 'image/jpeg', buffer: portrait },
      { name: 'aerial.png', mimeType: 'image/png', buffer: large },
    ]);
    const bar = page.getByRole('progressbar', { name: 'Upload progress' });
    await bar.waitFor();
    await page.getByText(/^Uploading \d\/3/).waitFor();
    release();
    await page.getByText('3 files uploaded successfully!').waitFor({ timeout: 30_000 });
    await bar.waitFor({ state: 'detached' });
    await page.unroute('**/api/upload/renders');

    const grid = page.getByRole('list', { name: 'Content' });
    await waitForCount(grid.getByRole('listitem'), 3);
    await page.getByText('3 renders').waitFor();

    const rows = await rendersOf(projectId);
    expect(rows).toHaveLength(3);
    const aerial = rows.find((r) => r.file_name.startsWith('aerial')) as RenderRow;
    // the large PNG arrived as it was picked (the specs compressed it; originals are kept): same bytes, full size
    expect(aerial.file_name).toBe('aerial.png');
    expect(aerial.storage_mime).toBe('image/png');
    expect(Number(aerial.file_size)).toBe(large.length);
    expect([aerial.width, aerial.height]).toEqual([2400, 1800]);
    expect(aerial.aspect_ratio).toBe('4:3');
    const facade = rows.find((r) => r.file_name === 'facade.png') as RenderRow;
    expect(Number(facade.file_size)).toBe(small.length);

    // badges: type and aspect ratio on each tile
    for (const [name, ratio] of [['facade.png', '16:9'], ['portrait.jpg', '4:5'], ['aerial.png', '4:3']]) {
      const tile = grid.getByRole('listitem').filter({ has: page.getByRole('button', { name: `Rename ${name}` }) });
      await tile.getByText('Render', { exact: true }).waitFor();
      await tile.getByText(ratio, { exact: true }).waitFor();
    }
    await app.screenshot('library-after-upload');
    // first tiles load eagerly
    expect(await grid.locator('img').first().getAttribute('loading')).toBe('eager');

    // rename: Escape cancels, Enter saves
    await page.getByRole('button', { name: 'Rename portrait.jpg' }).click();
    await page.getByRole('textbox', { name: 'Rename portrait.jpg' }).fill('Not this');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Rename portrait.jpg' }).waitFor();
    await page.getByRole('button', { name: 'Rename portrait.jpg' }).click();
    await page.getByRole('textbox', { name: 'Rename portrait.jpg' }).fill('Lobby at dusk');
    await page.keyboard.press('Enter');
    await page.getByText('Saved successfully!').waitFor();
    await page.getByRole('button', { name: 'Rename Lobby at dusk' }).waitFor();
    expect((await rendersOf(projectId)).map((r) => r.file_name).sort()).toEqual(['Lobby at dusk', 'aerial.png', 'facade.png']);

    // download: the file arrives under the item's name with the stored bytes
    const downloadPromise = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download facade.png' }).click();
    const download = await downloadPromise;
    await page.getByText('Download started').waitFor();
    expect(download.suggestedFilename()).toBe('facade.png');
    expect((await downloadedBytes(download)).equals(small)).toBe(true);

    // delete after the confirmation text; the file leaves storage
    expect(await storedObjectExists('renders', aerial.storage_path)).toBe(true);
    await page.getByRole('button', { name: 'Delete aerial.png' }).click();
    await page.getByText('Are you sure you want to delete this render? This action cannot be undone.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Render deleted successfully').waitFor();
    await waitForCount(grid.getByRole('listitem'), 2);
    await page.getByText('2 renders').waitFor();
    expect(await rendersOf(projectId)).toHaveLength(2);
    expect(await storedObjectExists('renders', aerial.storage_path)).toBe(false);

    // tabs: Upload Images only on All and Renders; an empty state per tab
    await page.getByRole('tab', { name: 'Clips' }).click();
    await page.getByText('No clips yet').waitFor();
    expect(await page.getByRole('button', { name: 'Upload Images' }).count()).toBe(0);
    await page.getByRole('tab', { name: 'Renders' }).click();
    await page.getByRole('button', { name: 'Upload Images' }).waitFor();

    // ?bust= reloads and leaves the address
    await page.goto(`/?project=${projectId}&bust=${Date.now()}`);
    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    await waitForCount(grid.getByRole('listitem'), 2);
    expect(new URL(page.url()).searchParams.has('bust')).toBe(false);

    // back on the list, the card shows the oldest render as its thumbnail
    await page.getByRole('button', { name: 'Back to Projects' }).click();
    const card = page.getByRole('button', { name: 'Open project Harbour View' });
    await card.waitFor();
    const thumb = card.locator('img');
    await thumb.waitFor();
    expect(await thumb.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
    await page.getByText('1 Quay Street').waitFor();
    await app.screenshot('projects-list');

    expect(app.pageErrors).toEqual([]);
  });

  it('refuses files in the drop zone with the red banner', async () => {
    const { page } = app;
    await page.goto('/');
    await page.getByRole('button', { name: 'Open project Harbour View' }).click();
    await page.locator('input[type="file"]').setInputFiles([{ name: 'tour.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7') }]);
    await page.getByRole('alert').filter({ hasText: 'File "tour.pdf" has invalid type. Accepted types: JPEG, JPG, PNG, GIF, WEBP' }).waitFor();
  });
});

describe('projects list in the browser', () => {
  it('renames a project inline, bulk-deletes in Edit Projects mode, and recovers from a failed load with Retry', async () => {
    const { page } = app;
    const other = await createTestUser(app.baseUrl, { name: 'List Keeper' });
    await app.context.clearCookies();
    await useSession(app, other.token);
    try {
      for (const name of ['North Wing', 'South Wing', 'Keep Me']) {
        const res = await fetch(`${app.baseUrl}/api/projects`, {
          method: 'POST',
          headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        });
        if (res.status !== 201) throw new Error(`create ${name}: ${res.status}`);
      }

      await page.route('**/api/projects/list', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Something went wrong. Please try again.' } }));
      await page.goto('/');
      await page.getByText("We couldn't load your projects. Please try again.").waitFor();
      await page.getByText('Failed to load projects').waitFor();
      await page.unroute('**/api/projects/list');
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByRole('button', { name: 'Open project Keep Me' }).waitFor();

      await page.getByRole('button', { name: 'Rename project Keep Me' }).click();
      await page.getByRole('textbox', { name: 'Rename project Keep Me' }).fill('Kept');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Open project Kept' }).waitFor();

      await page.getByRole('button', { name: 'Edit Projects' }).click();
      await page.getByRole('button', { name: 'Select project North Wing' }).click();
      await page.getByRole('button', { name: 'Select project South Wing' }).click();
      await page.getByText('2 selected').waitFor();
      await page.getByRole('button', { name: 'Delete Selected' }).click();
      await page.getByRole('dialog').getByText('Are you sure you want to delete these 2 projects?', { exact: false }).waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await waitForCount(page.getByRole('list', { name: 'Projects' }).getByRole('listitem'), 1);
      await page.getByRole('button', { name: 'Open project Kept' }).waitFor();

      const left = await testKnex()('projects').where({ workspace_id: other.id }).select('name');
      expect(left.map((p: { name: string }) => p.name)).toEqual(['Kept']);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.context.clearCookies();
      await useSession(app, user.token);
    }
  });
});

/** Waits until the locator matches `n` elements (10 s). */
async function waitForCount(locator: { count: () => Promise<number> }, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let last = -1;
  while (Date.now() < deadline) {
    last = await locator.count();
    if (last === n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected ${n} elements, found ${last}`);
}
