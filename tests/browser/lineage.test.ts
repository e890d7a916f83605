import sharp from 'sharp';
import type { ApprovalMetadata } from '../../domain/approvals';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

async function approved(user: TestUser, projectId: string, metadata: ApprovalMetadata, fileName: string, jobId: string): Promise<string> {
  return (await storeGeneratedItem({ workspaceId: user.id, projectId, metadata, fileName, sourceJobId: jobId })).contentId as string;
}

describe.each([
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
])('version chain in the item dialog at $width x $height', (viewport) => {
  it('shows render -> AI image -> clip, opens a step, and marks a deleted step', async () => {
    const { page } = app;
    await page.setViewportSize(viewport);
    const user = await createTestUser(app.baseUrl);
    await useSession(app, user.token);
    const project = (await request(app.baseUrl, '/api/projects', { token: user.token, json: { name: `Chain ${viewport.width}` } })).body.project.id as string;
    const form = new FormData();
    form.append('projectId', project);
    form.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 320, height: 180, channels: 3, background: { r: 200, g: 180, b: 150 } } }).png().toBuffer())], { type: 'image/png' }), 'facade.png');
    const upload = await request(app.baseUrl, '/api/upload/renders', { token: user.token, body: form });
    const renderUrl = (await testKnex()('renders').where({ id: upload.body.render.data.id }).first()).file_url as string;
    const imageId = await approved(user, project, { kind: 'image', originalPrompt: 'dusk', refinedPrompt: 'Dusk.', baseImageUrl: renderUrl, format: 'square', width: 160, height: 90, fileSize: 10, mime: 'image/png', upscaled: false }, 'dusk.png', 'ui-image');
    await approved(user, project, { kind: 'clip', renderId: null, imageId, effect: 'zoom_in', platform: 'youtube', aspectRatio: '16:9', durationSeconds: 5, fileSize: 10, mime: 'video/mp4', promptUsed: null }, 'dusk-clip.mp4', 'ui-clip');

    await page.goto(`/?project=${project}`);
    await page.getByRole('button', { name: 'Open clip dusk-clip.mp4' }).click();
    const dialog = page.getByRole('dialog');
    const strip = dialog.getByRole('navigation', { name: 'Version history' });
    await strip.waitFor();
    await strip.getByRole('listitem').nth(2).waitFor();
    expect(await strip.getByRole('listitem').count()).toBe(3);
    const texts = await strip.getByRole('listitem').allInnerTexts();
    expect(texts.map((t) => t.split('\n')[0])).toEqual(['Render', 'AI image', 'Clip']);
    expect(await strip.locator('[aria-current="true"]').innerText()).toContain('Clip');
    const fits = await dialog.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(fits).toBe(true);

    // a step opens that item's dialog
    await strip.getByRole('button', { name: /^AI image/ }).click();
    await dialog.getByRole('heading', { name: 'dusk.png' }).waitFor();
    await dialog.getByRole('navigation', { name: 'Version history' }).locator('[aria-current="true"]', { hasText: 'AI image' }).waitFor();
    expect(await dialog.getByRole('navigation', { name: 'Version history' }).locator('[aria-current="true"]').innerText()).toContain('AI image');

    // deleting the AI image leaves the clip its chain, with the gap marked
    await request(app.baseUrl, `/api/projects/${project}/content/images/${imageId}`, { method: 'DELETE', token: user.token });
    await page.goto(`/?project=${project}`);
    await page.getByRole('button', { name: 'Open clip dusk-clip.mp4' }).click();
    const after = page.getByRole('dialog').getByRole('navigation', { name: 'Version history' });
    await after.getByText('AI image (deleted)').waitFor();
    await after.getByText('Render').waitFor();
  });
});

