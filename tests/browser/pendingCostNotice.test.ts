/**
 * The amber notice: when the balance alone would pay for the next item but pending approvals hold the credits
 * it needs, the clip and image screens say so and offer 'Review approvals' and 'Add credits', not 'Not enough
 * credits' with 'Add credits' only. At the pending cap, the overlay names the ways out this user has: reject only
 * after a purchase, buying where it exists. (An installation that sells nothing: tests/browser/purchasingUnavailable.test.ts.)
 */
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { insertPendingApproval } from '../support/credits';
import { FAKE_STRIPE_SECRET_KEY, FAKE_WEBHOOK_SECRET } from '../support/fakeStripe';
import { addCredits } from '../../services/billing/credits';
import { randomUUID } from 'node:crypto';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { renderBytes } from '../imageEdit/harness';

let app: BrowserApp;

beforeAll(async () => {
  // credits can be bought here (Stripe test mode; no checkout is opened)
  app = await startBrowserApp({ config: () => ({ stripeSecretKey: FAKE_STRIPE_SECRET_KEY, stripeWebhookSecret: FAKE_WEBHOOK_SECRET }) });
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** A 5-credit user with one uploaded render, signed in in the browser. */
async function userWithRender(): Promise<{ user: TestUser; projectId: string; renderId: string }> {
  const user = await createTestUser(app.baseUrl);
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderBytes(320, 240))], { type: 'image/png' }), 'harbour.png');
  const upload = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect(upload.status).toBe(200);
  await app.context.clearCookies();
  await useSession(app, user.token);
  return { user, projectId: project.body.project.id, renderId: upload.body.render.data.id };
}

function pending(user: TestUser, projectId: string, contentType: 'image' | 'clip', cost: number) {
  return insertPendingApproval(testKnex(), { userId: user.id, projectId, contentType, cost, reserve: true });
}

describe('pending approvals holding the credits', () => {
  it('shows the amber notice on Generate Clip: 5 credits, two pending images', async () => {
    const { user, projectId, renderId } = await userWithRender();
    await pending(user, projectId, 'image', 1);
    await pending(user, projectId, 'image', 1);
    const { page } = app;
    await page.goto(`/?view=clip-generation&project=${projectId}&render=${renderId}`);
    const notice = page.getByRole('status').filter({ hasText: 'Your pending approvals reserve 2 credits' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('so 3 credits available are not enough for another clip (4 credits)');
    await notice.getByRole('button', { name: 'Review approvals' }).waitFor();
    await notice.getByRole('button', { name: 'Add credits' }).waitFor();
    expect(await page.getByText('Not enough credits for video generation').count()).toBe(0);
    await app.screenshot('clip-pending-cost-notice');
    await notice.getByRole('button', { name: 'Review approvals' }).click();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
  });

  it.each([
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ])('follows the live balance at $width px: credits added elsewhere clear the notice and enable Generate without a reload', async (viewport) => {
    const { user, projectId, renderId } = await userWithRender();
    await pending(user, projectId, 'image', 1);
    await pending(user, projectId, 'image', 1);
    const { page } = app;
    await page.setViewportSize(viewport);
    await page.goto(`/?view=clip-generation&project=${projectId}&render=${renderId}`);
    const notice = page.getByRole('status').filter({ hasText: 'Your pending approvals reserve 2 credits' });
    await notice.waitFor();
    await page.getByText('Drone Shot', { exact: true }).click();
    await page.getByText('YouTube', { exact: true }).click();
    expect(await page.getByRole('button', { name: 'Generate Video' }).isEnabled()).toBe(false);
    // a purchase made in another browser (or by a teammate): the realtime credits event reaches this page
    await addCredits(testKnex(), { workspaceId: user.id, amount: 4, type: 'purchase', description: 'Small Project', idempotencyKey: `live-balance:${randomUUID()}` });
    await notice.waitFor({ state: 'detached' });
    await page.locator('button:not([disabled])', { hasText: 'Generate Video' }).waitFor();
  });

  it('starts a clip after one pending image on 5 credits: no notice, the button is enabled', async () => {
    const { user, projectId, renderId } = await userWithRender();
    await pending(user, projectId, 'image', 1);
    const { page } = app;
    await page.goto(`/?view=clip-generation&project=${projectId}&render=${renderId}`);
    await page.getByText('Choose Video Effect').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByText('Your pending approvals reserve').count()).toBe(0);
    expect(await page.getByText('Not enough credits').count()).toBe(0);
    await page.getByText('Drone Shot', { exact: true }).click();
    await page.getByText('YouTube', { exact: true }).click();
    expect(await page.getByRole('button', { name: 'Generate Video' }).isEnabled()).toBe(true);
  });

  it('shows the amber notice on the image editor when a pending clip and image hold all 5 credits below the cap', async () => {
    const { user, projectId, renderId } = await userWithRender();
    await pending(user, projectId, 'clip', 4);
    await pending(user, projectId, 'image', 1);
    const { page } = app;
    await page.goto(`/?view=image-generation&project=${projectId}&render=${renderId}`);
    const notice = page.getByRole('status').filter({ hasText: 'Your pending approvals reserve 5 credits' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('not enough for another image (1 credit)');
    expect(await page.getByRole('button', { name: 'Generate Preview' }).isDisabled()).toBe(true);
    expect(await page.getByRole('alertdialog', { name: 'Pending approvals limit reached' }).count()).toBe(0);
    await notice.getByRole('button', { name: 'Add credits' }).click();
    await page.getByRole('heading', { name: 'Account Settings', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('tab')).toBe('billing');
  });

  it('at the cap offers buying to unlock rejection before a purchase, and save or reject after one', async () => {
    const { user, projectId, renderId } = await userWithRender();
    for (let i = 0; i < 5; i += 1) await pending(user, projectId, 'image', 1);
    const { page } = app;
    await page.goto(`/?view=image-generation&project=${projectId}&render=${renderId}`);
    const overlay = page.getByRole('alertdialog', { name: 'Pending approvals limit reached' });
    await overlay.getByText('The maximum is 5. Save items in Approvals to generate more, or buy a credit package to unlock rejecting.', { exact: false }).waitFor();
    expect(await overlay.getByText(/Save or reject/).count()).toBe(0);
    await overlay.getByRole('button', { name: 'Buy credits' }).click();
    await page.getByRole('heading', { name: 'Account Settings', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('tab')).toBe('billing');

    await addCredits(testKnex(), { workspaceId: user.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `test-purchase:${randomUUID()}` });
    await page.goto(`/?view=image-generation&project=${projectId}&render=${renderId}`);
    await overlay.getByText('Save or reject items in Approvals to generate more.', { exact: false }).waitFor();
    expect(await overlay.getByRole('button', { name: 'Buy credits' }).count()).toBe(0);
  });
});
