/**
 * The try-it flow in the browser: a visitor picks an image, an effect and a platform on the landing page, signs up
 * (or signs in), the onboarding workflow makes the first project (a real worker on this file's own queue), the
 * saved image goes up as its first render, the project opens with the welcome dialog.
 */
import sharp from 'sharp';
import { createOnboardingActivities, onboardingProjectId } from '../../activities/onboarding';
import { quietRuntime } from '../imageEdit/harness';
import { createTestUser } from '../support/accounts';
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { uniqueTaskQueue, withWorker } from '../support/temporal';

const taskQueue = uniqueTaskQueue('tryit-browser');
const workerOptions = () => ({ taskQueue, activities: createOnboardingActivities({ knex: testKnex() }) });

let app: BrowserApp;

beforeAll(async () => {
  quietRuntime();
  app = await startBrowserApp({ taskQueues: { onboarding: taskQueue } });
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

async function smallPng(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360"><rect width="640" height="240" fill="#6fa8dc"/>
    <rect y="240" width="640" height="120" fill="#6aa84f"/><rect x="380" y="110" width="160" height="150" fill="#990000"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Noise does not compress: a PNG of several MB, which must be redrawn smaller to fit localStorage. */
async function largeNoisePng(): Promise<Buffer> {
  return sharp({ create: { width: 1600, height: 1000, channels: 3, background: { r: 120, g: 130, b: 140 }, noise: { type: 'gaussian', mean: 128, sigma: 50 } } })
    .png()
    .toBuffer();
}

/** The page's localStorage entry, parsed (the root tsconfig has no DOM types, so the page script is a string). */
async function storedJson(page: BrowserApp['page'], key: string): Promise<unknown> {
  const text = await page.evaluate<string | null>(`window.localStorage.getItem(${JSON.stringify(key)})`);
  return text === null ? null : (JSON.parse(text) as unknown);
}

async function rendersOf(userId: string): Promise<Array<{ project_id: string; file_name: string }>> {
  return testKnex()('renders').join('projects', 'projects.id', 'renders.project_id').where('projects.workspace_id', userId).select('renders.project_id', 'renders.file_name');
}

describe('try-it flow in the browser', () => {
  it('picks a file, an effect and a platform, signs up, welcomes in the new project and opens Generate Clip preset', async () => {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    try {
      await page.goto('/');
      const area = page.locator('#try-it');
      await area.getByRole('heading', { name: 'Try it with your own render' }).waitFor();
      await area.getByText('JPG, PNG, WEBP up to 150MB').waitFor();
      const cta = area.getByRole('button', { name: 'Sign up to create your video' });
      expect(await cta.isDisabled()).toBe(true);
      expect(await area.getByLabel('Try-it image').getAttribute('accept')).toBe('image/*');

      await area.getByLabel('Try-it image').setInputFiles({ name: 'harbour-view.png', mimeType: 'image/png', buffer: await smallPng() });
      await area.getByAltText('Preview of harbour-view.png').waitFor();
      await area.getByText('Drone Shot', { exact: true }).click();
      await area.getByText('TikTok', { exact: true }).click();
      expect(await area.getByText('Square 1:1', { exact: true }).isVisible()).toBe(true);
      expect(await storedJson(page, 'tryit_selection')).toEqual({ selectedPlatform: 'TikTok', selectedEffect: 'Drone Shot', timestamp: expect.any(Number) });
      const images = (await storedJson(page, 'tryit_images')) as Array<{ name: string; type: string; size: number; data: string }>;
      expect(images).toHaveLength(1);
      expect(images[0]).toMatchObject({ name: 'harbour-view.png', type: 'image/png' });
      expect(images[0].data.startsWith('data:image/png;base64,')).toBe(true);

      // a reload keeps the choices
      await page.reload();
      await area.getByAltText('Preview of harbour-view.png').waitFor();
      expect(await area.getByRole('radio', { name: /^Drone Shot/ }).isChecked()).toBe(true);
      await app.screenshot('try-it-landing', page);

      // the onboarding call is held until the setup text has been seen
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/api/onboarding/try-it', async (route) => {
        await released;
        await route.continue();
      });
      const email = `tryit-${Date.now()}@example.test`;
      await withWorker(workerOptions(), async () => {
        await cta.click();
        const dialog = page.getByRole('dialog', { name: 'Create your account' });
        await dialog.getByLabel('Full name').fill('Grace Hopper');
        await dialog.getByLabel('Email').fill(email);
        await dialog.getByLabel('Password').fill('harbour-view-42');
        await dialog.getByRole('button', { name: 'Create account' }).click();
        await page.getByText('Setting up your project...').waitFor();
        release();
        await page.getByRole('dialog', { name: 'Welcome to harbour view!' }).waitFor({ timeout: 30_000 });
      });

      const user = await testKnex()('users').where({ email }).first<{ id: string }>('id');
      const projectId = onboardingProjectId(user.id);
      expect(new URL(page.url()).searchParams.get('project')).toBe(projectId);
      await page.getByRole('heading', { name: 'harbour view', level: 1 }).waitFor();

      const welcome = page.getByRole('dialog', { name: 'Welcome to harbour view!' });
      const facts = welcome.getByLabel('Your try-it choices');
      await facts.getByText('harbour-view.png').waitFor();
      await facts.getByText(/KB$/).waitFor();
      await facts.getByText('TikTok (9:16)').waitFor();
      await facts.getByText('Drone Shot').waitFor();
      await welcome.getByText('Creating this video will use 4 creation credits', { exact: false }).waitFor();
      await welcome.getByRole('button', { name: 'Skip for now' }).waitFor();
      await app.screenshot('try-it-welcome', page);

      // the image went up as the first render; its data left localStorage, the selection stayed for the dialog
      expect(await rendersOf(user.id)).toEqual([{ project_id: projectId, file_name: 'harbour-view.png' }]);
      expect(await storedJson(page, 'tryit_images')).toBeNull();
      expect(await storedJson(page, 'tryit_selection')).toMatchObject({ selectedPlatform: 'TikTok', selectedEffect: 'Drone Shot' });

      await welcome.getByRole('button', { name: 'Create 9:16 Drone Shot video' }).click();
      await page.getByRole('heading', { name: 'Generate Clip', level: 1 }).waitFor();
      await page.getByRole('complementary', { name: 'Source image' }).getByText('harbour-view.png').waitFor();
      expect(await page.getByRole('radio', { name: /^Drone Shot/ }).isChecked()).toBe(true);
      expect(await page.getByRole('radio', { name: /^TikTok/ }).isChecked()).toBe(true);
      const summary = page.getByLabel('Summary');
      await summary.getByText('Drone Shot').waitFor();
      await summary.getByText('TikTok').waitFor();
      await summary.getByText('9:16').waitFor();

      await page.getByRole('button', { name: 'Back to Project' }).first().click();
      await page.getByRole('heading', { name: 'harbour view', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Open render harbour-view.png' }).waitFor();
      await page.reload();
      await page.getByRole('button', { name: 'Open render harbour-view.png' }).waitFor();
      expect(await page.getByRole('dialog', { name: /^Welcome to/ }).count()).toBe(0);
      expect(await storedJson(page, 'tryit_welcome')).toBeNull();
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('compresses a large image to fit, signs in an existing user, and Skip for now leaves the render in the library', async () => {
    const user = await createTestUser(app.baseUrl, { name: 'Katherine Johnson' });
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    try {
      await page.goto('/');
      const area = page.locator('#try-it');
      const big = await largeNoisePng();
      expect(big.length).toBeGreaterThan(2 * 1024 * 1024);
      await area.getByLabel('Try-it image').setInputFiles({ name: 'skyline-render.png', mimeType: 'image/png', buffer: big });
      // redrawn as a JPEG under 1 MB by the upload compression
      await area.getByAltText('Preview of skyline-render.jpg').waitFor({ timeout: 30_000 });
      const images = (await storedJson(page, 'tryit_images')) as Array<{ name: string; type: string; size: number }>;
      expect(images).toEqual([expect.objectContaining({ name: 'skyline-render.jpg', type: 'image/jpeg' })]);
      expect(images[0].size).toBeLessThan(1_048_576);

      // a video is refused with the spec's text, and the stored image stays
      await area.getByLabel('Try-it image').setInputFiles({ name: 'walkthrough.mp4', mimeType: 'video/mp4', buffer: Buffer.from('not really a video') });
      await area.getByRole('alert').getByText('Video uploads are not supported. Please upload images only.').waitFor();
      await area.getByAltText('Preview of skyline-render.jpg').waitFor();

      await area.getByText('Zoom In', { exact: true }).click();
      await area.getByText('Square 1:1', { exact: true }).click();

      await withWorker(workerOptions(), async () => {
        await page.getByRole('button', { name: 'Sign in' }).first().click();
        const dialog = page.getByRole('dialog', { name: 'Welcome back' });
        await dialog.getByLabel('Email').fill(user.email);
        await dialog.getByLabel('Password').fill(user.password);
        await dialog.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('dialog', { name: 'Welcome to skyline render!' }).waitFor({ timeout: 30_000 });
      });

      const welcome = page.getByRole('dialog', { name: 'Welcome to skyline render!' });
      const facts = welcome.getByLabel('Your try-it choices');
      await facts.getByText('skyline-render.jpg').waitFor();
      await facts.getByText('Square (1:1)').waitFor();
      await facts.getByText('Zoom In').waitFor();
      await welcome.getByRole('button', { name: 'Create 1:1 Zoom In video' }).waitFor();
      await welcome.getByRole('button', { name: 'Skip for now' }).click();
      await welcome.waitFor({ state: 'detached' });

      await page.getByRole('button', { name: 'Open render skyline-render.jpg' }).waitFor();
      await page.getByText('1 render', { exact: true }).waitFor();
      expect(await rendersOf(user.id)).toEqual([{ project_id: onboardingProjectId(user.id), file_name: 'skyline-render.jpg' }]);
      expect(await storedJson(page, 'tryit_welcome')).toBeNull();
      expect(await storedJson(page, 'tryit_selection')).toBeNull();
      expect(await storedJson(page, 'tryit_images')).toBeNull();
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
