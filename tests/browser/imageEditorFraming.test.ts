/**
 * The AI editor says what a format makes of the render before anything is made (issue 32, item 4), at desktop and
 * phone sizes: the result's real size, and for a format that crops, how much is cut and how to keep all of it. It
 * starts on "Keep original framing" for a 3:2 render (issue 41: Square had cut a third of a 6000 × 4000 render by
 * default), with no crop note and a size that keeps the render's aspect; the item made is named by the prompt and its
 * approval card shows the prompt. No serious or critical axe findings.
 */
import { createActivities } from '../../activities';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { renderBytes, startWorkers, uniqueQueues, type RunningWorkers } from '../imageEdit/harness';

let app: BrowserApp;
let workers: RunningWorkers;
const queues = uniqueQueues('browser-framing');

beforeAll(async () => {
  const config = loadConfig();
  workers = await startWorkers(queues, createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers: createProviders(config) }));
  app = await startBrowserApp({ taskQueues: queues });
});

afterAll(async () => {
  await app?.close();
  await workers?.stop();
  await closeTestKnex();
});

describe.each([
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
])('the editor at $width x $height', ({ width, height }) => {
  it('starts a 3:2 render on its own framing, and notes the crop of a cropping format and the true result size', async () => {
    const user = await createTestUser(app.baseUrl);
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Framing' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    form.append('file', new Blob([new Uint8Array(await renderBytes(1200, 800))], { type: 'image/png' }), 'mid-a.png');
    expect((await request(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token })).status).toBe(200);

    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width, height } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, user.token);
      const page = await context.newPage();
      await page.goto(`/?project=${project.body.project.id}`);
      await page.getByRole('button', { name: 'Open render mid-a.png' }).click();
      await page.getByRole('button', { name: 'Edit with AI' }).click();
      await page.getByRole('heading', { name: 'Enhanced AI Editor', level: 1 }).waitFor();

      // a 3:2 render starts on its own framing: nothing cut, the result keeps 3:2
      const format = page.getByLabel('Format');
      expect(await format.inputValue()).toBe('original');
      expect(await format.locator('option:checked').textContent()).toBe('Keep original framing');
      await page.getByText('Result: 2048 × 1365 px (made at 1024 px on the long side, upscaled 2×).', { exact: false }).waitFor();
      const note = page.getByRole('note');
      expect(await note.count()).toBe(0);
      await app.screenshot(`image-editor-framing-original-${width}`, page);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // Square crops this 3:2 render: said before Generate, with how much
      await format.selectOption('square');
      await page.getByText('Result: 1600 × 1600 px (made at 800 px on the long side, upscaled 2×).', { exact: false }).waitFor();
      await note.getByText('This format crops the 1200 × 800 render to its centre 800 × 800: 33% of its width is cut.', { exact: false }).waitFor();
      await app.screenshot(`image-editor-framing-square-${width}`, page);

      await format.selectOption('landscape');
      await note.getByText('crops the 1200 × 800 render to its centre 1200 × 675: 16% of its height is cut', { exact: false }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);

      // made with the render's own framing: named by the prompt, the prompt on the approval card, the size as said
      await format.selectOption('original');
      expect(await note.count()).toBe(0);
      await page.getByLabel('Describe how you want to transform the image').fill('Warm dusk light over the harbour');
      await page.getByRole('button', { name: 'Generate Preview' }).click();
      await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor({ timeout: 60_000 });
      const card = page.locator('.approval-card');
      await card.getByText('mid-a — warm dusk light over the harbour.jpg').waitFor();
      await card.locator('.approval-card-prompt').getByText('“Warm dusk light over the harbour”').waitFor();
      const [row] = await testKnex()('pending_approvals').where({ workspace_id: user.id }).select('metadata');
      expect([row.metadata.width, row.metadata.height]).toEqual([2048, 1365]);
      expect(await seriousAxeFindings(page)).toEqual([]);
      const { scrollWidth, clientWidth } = await page
        .locator('html')
        .evaluate((root: { scrollWidth: number; clientWidth: number }) => ({ scrollWidth: root.scrollWidth, clientWidth: root.clientWidth }));
      expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    } finally {
      await context.close();
    }
  }, 120_000);
});
