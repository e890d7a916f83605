/**
 * Compare in the browser (issue 42 items 3 and 7), at 1440x900 and 390x844: from an AI image's dialog, side by side
 * with the render it came from (stacked on a phone), zoom and pan kept in step on both pictures by the buttons and
 * the keyboard, then the slider moved with the keyboard; from a pending image in Approvals, its source; a clip
 * against its image with one play button for both players. axe finds nothing serious in each state.
 */
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { createTestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { clipMetadata, imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** Waits until the project's content listing names `name` (the API keeps a listing for a moment after a read). */
async function listed(projectId: string, token: string, name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await request<{ content: Array<{ data: { name: string } }> }>(app.baseUrl, `/api/projects/${projectId}/content`, { token });
    if (res.status === 200 && res.body.content.some((c) => c.data.name === name)) return;
    if (Date.now() > deadline) throw new Error(`${name} not listed in project ${projectId} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function paneStyles(page: Page): Promise<string[]> {
  return page.locator('.compare-pane img').evaluateAll((imgs) => imgs.map((img) => img.getAttribute('style') ?? ''));
}

describe.each([
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
])('compare at $width x $height', (viewport) => {
  it('an AI image against its render: side by side, zoom and pan in step, the slider by keyboard; a pending image and a clip too', async () => {
    const { page } = app;
    await page.setViewportSize(viewport);
    const user = await createTestUser(app.baseUrl);
    await testKnex()('profiles').where({ id: user.id }).update({ credits: 30 });
    await useSession(app, user.token);
    const projectId = (await request(app.baseUrl, '/api/projects', { token: user.token, json: { name: `Compare ${viewport.width}` } })).body.project.id as string;
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 210, g: 180, b: 140 } } }).png().toBuffer())], { type: 'image/png' }), 'facade.png');
    const upload = await request(app.baseUrl, '/api/upload/renders', { token: user.token, body: form });
    const renderUrl = upload.body.render.data.file_url as string;
    const generated = (metadata: Parameters<typeof storeGeneratedItem>[0]['metadata'], fileName: string, pendingOnly = false) =>
      storeGeneratedItem({ workspaceId: user.id, projectId, metadata, fileName, pendingOnly, color: { r: 60, g: 110, b: 170 } });
    const imageId = (await generated(imageMetadata(renderUrl), 'dusk.png')).contentId as string;

    // ---------- side by side, from the AI image's dialog ----------
    await page.goto(`/?project=${projectId}`);
    await page.getByRole('button', { name: 'Open ai image dusk.png' }).click();
    const itemDialog = page.getByRole('dialog', { name: 'dusk.png' });
    await itemDialog.getByRole('button', { name: 'Compare' }).click();
    const dialog = page.getByRole('dialog', { name: 'Compare: dusk.png' });
    await dialog.getByRole('img', { name: /^Source render: facade\.png/ }).waitFor();
    await dialog.getByRole('img', { name: /^This item: dusk\.png/ }).waitFor();
    expect(await dialog.getByRole('combobox', { name: 'Compare with' }).inputValue()).toBeTruthy();
    const [left, right] = await Promise.all([dialog.locator('figure').nth(0).boundingBox(), dialog.locator('figure').nth(1).boundingBox()]);
    // side by side on a wide screen, stacked on a phone
    if (viewport.width > 720) expect(Math.abs(left!.y - right!.y)).toBeLessThan(2);
    else expect(right!.y).toBeGreaterThan(left!.y + left!.height - 1);
    expect(await seriousAxeFindings(page)).toEqual([]);

    await dialog.getByRole('button', { name: 'Zoom in' }).click();
    await dialog.getByText('150%').waitFor();
    const pane = dialog.getByRole('img', { name: /^This item: dusk\.png/ });
    await pane.focus();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('+');
    await dialog.getByText('225%').waitFor();
    const [a, b] = await paneStyles(page);
    expect(a).toBe(b);
    expect(a).toMatch(/transform: translate\(5(\.\d+)?%, 0%\) scale\(2\.25\)/);
    await page.keyboard.press('0');
    await dialog.getByText('100%').waitFor();

    // ---------- the slider, moved with the keyboard ----------
    await dialog.getByRole('button', { name: 'Slider' }).click();
    const slider = dialog.getByRole('slider');
    await slider.focus();
    for (let i = 0; i < 5; i += 1) await page.keyboard.press('ArrowRight');
    expect(await slider.inputValue()).toBe('55');
    expect(await dialog.locator('.compare-slider-top').getAttribute('style')).toContain('inset(0px 0px 0px 55%)');
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await itemDialog.waitFor();
    await page.keyboard.press('Escape');
    await itemDialog.waitFor({ state: 'detached' });

    // ---------- a pending image in Approvals, against its source ----------
    await generated(imageMetadata(renderUrl), 'pending-dusk.png', true);
    await page.goto('/?view=approvals');
    await page.getByRole('button', { name: 'Expand pending-dusk.png' }).click();
    const approval = page.getByRole('dialog', { name: 'pending-dusk.png' });
    await approval.getByRole('button', { name: 'Compare with source' }).click();
    const pendingCompare = page.getByRole('dialog', { name: 'Compare: pending-dusk.png' });
    await pendingCompare.getByRole('img', { name: /^Source render: facade\.png/ }).waitFor();
    expect(await pendingCompare.locator('.compare-pane img').nth(1).getAttribute('src')).toContain('preview.png');
    await page.keyboard.press('Escape');
    await pendingCompare.waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');

    // ---------- a clip against its image: two players, one play button ----------
    await generated(clipMetadata({ imageId }), 'dusk-clip.mp4');
    // the project's listing was read (and kept for a moment) before the clip was saved: wait until the API lists it,
    // as the page would have by the live update had it been open
    await listed(projectId, user.token, 'dusk-clip.mp4');
    await page.goto(`/?project=${projectId}`);
    await page.getByRole('button', { name: 'Open clip dusk-clip.mp4' }).click();
    await page.getByRole('dialog', { name: 'dusk-clip.mp4' }).getByRole('button', { name: 'Compare' }).click();
    const clipCompare = page.getByRole('dialog', { name: 'Compare: dusk-clip.mp4' });
    await clipCompare.getByRole('button', { name: 'Play both' }).waitFor();
    expect(await clipCompare.getByRole('combobox', { name: 'Compare with' }).locator('option').allTextContents()).toEqual(['Earlier AI image: dusk.png', 'Source render: facade.png']);
    expect(await clipCompare.getByRole('button', { name: 'Slider' }).count()).toBe(0);
    expect(await seriousAxeFindings(page)).toEqual([]);
    expect(app.pageErrors).toEqual([]);
  }, 120_000);
});
