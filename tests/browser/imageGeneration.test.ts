/**
 * The core loop in the browser: a render uploaded to a project, edited with AI, sent to Approvals, saved there
 * (a rejection without a purchase is refused on the way), found in the library, and 1 credit charged.
 */
import { createActivities } from '../../activities';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { MSG } from '../../domain/messages';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, watchForText, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { renderBytes, startWorkers, uniqueQueues, type RunningWorkers } from '../imageEdit/harness';

let app: BrowserApp;
let user: TestUser;
let workers: RunningWorkers;
const queues = uniqueQueues('browser-image');

beforeAll(async () => {
  const config = loadConfig();
  workers = await startWorkers(queues, createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers: createProviders(config) }));
  app = await startBrowserApp({ taskQueues: queues });
  user = await createTestUser(app.baseUrl, { name: 'Ada Lovelace' });
  await useSession(app, user.token);
});

afterAll(async () => {
  await app?.close();
  await workers?.stop();
  await closeTestKnex();
});

async function credits(): Promise<{ credits: number; reserved_credits: number }> {
  return testKnex()('profiles').where({ id: user.id }).first('credits', 'reserved_credits');
}

describe('image generation in the browser', () => {
  it('edits an uploaded render, shows it in Approvals, saves it into the library and charges 1 credit', async () => {
    const { page } = app;
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    form.append('file', new Blob([new Uint8Array(await renderBytes(800, 600))], { type: 'image/png' }), 'harbour-render.png');
    const upload = await request(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
    expect(upload.status).toBe(200);

    await page.goto(`/?project=${project.body.project.id}`);
    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    await page.getByText('5 credits').waitFor();
    await page.getByRole('button', { name: 'Open render harbour-render.png' }).click();
    await page.getByRole('button', { name: 'Edit with AI' }).click();

    await page.getByRole('heading', { name: 'Enhanced AI Editor', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('view')).toBe('image-generation');
    await page.getByText(/^\d+\.\d{2} MB · 800 × 600$/).waitFor();
    await page.getByRole('button', { name: 'Generate Preview' }).click();
    await page.getByText(MSG.promptRequired).waitFor();
    await app.screenshot('image-editor');

    await page.getByLabel('Describe how you want to transform the image').fill('a snowy winter evening with warm windows');
    // shown for a moment before the screen moves on: watched for from before the click
    const sent = await watchForText(page, 'Your image was sent for approval.');
    await page.getByRole('button', { name: 'Generate Preview' }).click();
    await sent();

    // on to Approvals by itself
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    const card = page.locator('.approval-card');
    await card.waitFor();
    expect(await card.count()).toBe(1);
    await card.getByText('AI Generated Image').waitFor();
    await card.getByText('7 days left').waitFor();
    await card.getByRole('button', { name: /^Save/ }).getByText('1 credit').waitFor();
    await page.getByRole('button', { name: 'Approvals 1 pending' }).waitFor();
    await page.getByText('1 reserved for pending approvals').waitFor();
    expect(await credits()).toEqual({ credits: 5, reserved_credits: 1 });
    await app.screenshot('approvals-pending');

    await card.getByRole('button', { name: /^Expand/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByAltText(/^Preview of /).waitFor();
    await dialog.getByText('“a snowy winter evening with warm windows”').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();

    // no credit package bought: Reject is disabled, and the screen says why (the spec's text, its '...' said in full)
    expect(await card.getByRole('button', { name: /^Reject/ }).isDisabled()).toBe(true);
    await page.getByText(MSG.rejectionRequiresPurchase.replace(/\.\.\.$/, '.'), { exact: false }).first().waitFor();

    await page.locator('.approval-card .approval-card-prompt').getByText('“a snowy winter evening with warm windows”').waitFor();
    await page.locator('.approval-card').getByRole('button', { name: /^Save/ }).click();
    await page.getByText('Saved successfully!').waitFor({ timeout: 30_000 });
    await page.getByText('No pending approvals').waitFor();
    await page.getByText('All your generated content has been reviewed.').waitFor();
    await page.getByText('4 credits').waitFor();
    await page.getByRole('button', { name: 'Approvals 1 pending' }).waitFor({ state: 'detached' });
    expect(await credits()).toEqual({ credits: 4, reserved_credits: 0 });

    // the library of the project shows the saved image
    await page.getByRole('button', { name: 'Projects' }).click();
    await page.getByRole('button', { name: 'Open project Harbour View' }).click();
    await page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
    // named by what was asked, with the prompt on the card
    const saved = page.getByRole('button', { name: 'Open ai image harbour-render — a snowy winter evening with warm.jpg' });
    await saved.waitFor();
    await page.locator('.library-item-prompt').getByText('“a snowy winter evening with warm windows”').waitFor();
    await page.getByText('1 image', { exact: true }).waitFor();
    await app.screenshot('library-with-ai-image');
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it('covers the editor with the pending-cap overlay at the limit, and says when no content was chosen', async () => {
    const { page } = app;
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Cap Test' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    form.append('file', new Blob([new Uint8Array(await renderBytes(400, 300))], { type: 'image/png' }), 'cap-render.png');
    const upload = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });

    await page.route('**/api/approvals/stats', (route) => route.fulfill({ json: { success: true, data: { pending_count: 4, limit: 4, total_pending_cost: 4 } } }));
    await page.goto(`/?view=image-generation&project=${project.body.project.id}&render=${upload.body.render.data.id}`);
    const overlay = page.getByRole('alertdialog', { name: 'Pending approvals limit reached' });
    await overlay.waitFor();
    await overlay.getByText('You already have 4 pending approvals. The maximum is 4.', { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: 'Generate Preview' }).isDisabled()).toBe(true);
    await app.screenshot('image-editor-cap');
    await overlay.getByRole('button', { name: 'Open Approvals' }).click();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await page.unroute('**/api/approvals/stats');

    await page.goto('/?view=image-generation');
    await page.getByText('No content selected for image generation.').waitFor();
    await page.getByRole('button', { name: 'Back to Project' }).last().click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(app.pageErrors).toEqual([]);
  });
});
