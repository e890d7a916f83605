import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { accountDeletionWorkflowId } from '../../domain/accountData';
import { createTestUser, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { renderJpeg, startClipWorker, type RunningWorker } from '../clips/fixtures';
import { readZip } from '../accountData/support/accountDataApp';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';

const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

async function noHorizontalScroll(page: Page): Promise<void> {
  // runs in the page: the root element's widths (typed here, as tests have no DOM library)
  const widths = await page.locator('html').evaluate((root: { scrollWidth: number; clientWidth: number }) => ({ scroll: root.scrollWidth, client: root.clientWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.client);
}

/** A user with a project and one uploaded render, signed in in a fresh browser context at `viewport`. */
async function signedInUser(app: BrowserApp, name: string): Promise<TestUser> {
  const user = await createTestUser(app.baseUrl, { name });
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderJpeg(640, 360))], { type: 'image/jpeg' }), 'harbour-view.jpg');
  const upload = await request(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect([200, 201]).toContain(upload.status);
  return user;
}

describe.each(SIZES)('Account Settings > Settings at $width x $height', (viewport) => {
  let app: BrowserApp;
  let worker: RunningWorker;
  let scratch: string;
  const taskQueue = uniqueTaskQueue('account-data-browser');

  beforeAll(async () => {
    app = await startBrowserApp({ viewport, taskQueues: { accountData: taskQueue, generation: taskQueue, media: taskQueue, approvals: taskQueue } });
    worker = await startClipWorker(taskQueue);
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'account-data-browser-'));
  });

  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
    await closeTestKnex();
  });

  it('exports the data with progress and a download link, then deletes the account and lands signed out', async () => {
    const { page } = app;
    const user = await signedInUser(app, 'Ada Lovelace');
    await useSession(app, user.token);
    await page.goto('/?view=account&tab=settings');
    await page.getByRole('heading', { name: 'Account Settings', level: 1 }).waitFor();
    const panel = page.getByRole('tabpanel', { name: 'Settings' });
    await noHorizontalScroll(page);

    // the progress bar shows first (the request's own answer), then the link replaces it. A small account's export
    // can finish before the first status read, which then shows the link at once; so the status reads are held until
    // the bar has been seen, as they would be on a slow connection.
    let releaseStatusReads!: () => void;
    const statusReadsHeld = new Promise<void>((resolve) => (releaseStatusReads = resolve));
    await page.route('**/api/account/exports', async (route) => {
      if (route.request().method() === 'GET') await statusReadsHeld;
      await route.continue();
    });
    await panel.getByRole('button', { name: 'Request Data Export' }).click();
    await panel.getByRole('progressbar', { name: 'Data export progress' }).waitFor();
    releaseStatusReads();
    await app.screenshot(`account-export-progress-${viewport.width}`);
    const link = panel.getByRole('link', { name: 'Download your data' });
    await link.waitFor({ timeout: 60_000 });
    expect(await panel.getByRole('progressbar', { name: 'Data export progress' }).count()).toBe(0);
    await page.unroute('**/api/account/exports');
    const validUntil = await panel.getByText(/^Link valid until /).textContent();
    expect(validUntil).toBeTruthy();
    await noHorizontalScroll(page);
    await app.screenshot(`account-export-ready-${viewport.width}`);

    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^render-studio-export-\d{4}-\d{2}-\d{2}-1\.zip$/);
    const file = path.join(scratch, download.suggestedFilename());
    await download.saveAs(file);
    const names = (await readZip(file)).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['profile.json', 'projects.json', 'items.json', 'ledger.json', 'manifest.json']));
    expect(names.filter((n) => n.startsWith(`files/renders/${user.id}/`))).toHaveLength(1);

    // Delete Account: the confirm button waits for the account's e-mail
    await panel.getByRole('button', { name: 'Delete Account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Account' });
    const confirm = dialog.getByRole('button', { name: 'Permanently delete account' });
    const field = dialog.getByLabel('Type your e-mail address to confirm');
    expect(await confirm.isDisabled()).toBe(true);
    await field.fill('not-me@example.test');
    expect(await confirm.isDisabled()).toBe(true);
    await field.fill(user.email);
    expect(await confirm.isEnabled()).toBe(true);
    await noHorizontalScroll(page);
    await app.screenshot(`account-delete-confirm-${viewport.width}`);
    await confirm.click();

    // signed out, on the landing page, which says what happened (and takes the focus to say it)
    await page.getByRole('button', { name: 'Sign in', exact: true }).first().waitFor({ timeout: 30_000 });
    const notice = page.getByRole('status').filter({ has: page.getByRole('heading', { name: 'Your account was deleted' }) });
    await notice.waitFor();
    expect(await notice.evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
    expect(new URL(page.url()).searchParams.get('view')).toBeNull();
    expect((await page.request.get('/api/auth/me')).status()).toBe(401);
    await noHorizontalScroll(page);
    expect(await seriousAxeFindings(page)).toEqual([]);
    await app.screenshot(`account-deleted-landing-${viewport.width}`);
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'detached' });

    const { client, close } = await testClient();
    try {
      await client.workflow.getHandle(accountDeletionWorkflowId(user.id)).result();
    } finally {
      await close();
    }
    expect(await testKnex()('users').where({ id: user.id }).first()).toBeUndefined();
    expect(app.pageErrors).toEqual([]);
  }, 180_000);

  it('shows why a deletion was refused', async () => {
    const { page } = app;
    const user = await signedInUser(app, 'Grace Hopper');
    await useSession(app, user.token);
    await page.goto('/?view=account&tab=settings');
    const panel = page.getByRole('tabpanel', { name: 'Settings' });
    await panel.getByRole('button', { name: 'Delete Account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Account' });
    await dialog.getByLabel('Type your e-mail address to confirm').fill(user.email);
    // the server refuses (as when the e-mail changed meanwhile): the dialog says why and stays
    await page.route('**/api/account/delete', (route) =>
      route.fulfill({ status: 400, json: { success: false, error: "The e-mail you typed does not match your account's e-mail address", code: 'CONFIRM_EMAIL_MISMATCH' } }),
    );
    await dialog.getByRole('button', { name: 'Permanently delete account' }).click();
    await dialog.getByRole('alert').getByText("The e-mail you typed does not match your account's e-mail address").waitFor();
    await page.unroute('**/api/account/delete');
    expect((await page.request.get('/api/auth/me')).status()).toBe(200);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await noHorizontalScroll(page);
  });

  it('refuses to delete the only owner of a workspace with other members, and says how to go on', async () => {
    const { page } = app;
    const user = await signedInUser(app, 'Olive Owner');
    const team = await createTeamWorkspace(app.baseUrl, { owner: user, name: `Olive Studio ${viewport.width}` });
    await joinWorkspace(app.baseUrl, team, 'member');
    await useSession(app, user.token);
    await page.goto('/?view=account&tab=settings');
    const panel = page.getByRole('tabpanel', { name: 'Settings' });
    await panel.getByRole('button', { name: 'Delete Account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Account' });
    await dialog.getByLabel('Type your e-mail address to confirm').fill(user.email);
    await dialog.getByRole('button', { name: 'Permanently delete account' }).click();
    await dialog
      .getByRole('alert')
      .getByText(`You are the only owner of “${team.name}”, which has other members. Make another member owner or remove them before deleting your account.`)
      .waitFor();
    await noHorizontalScroll(page);
    await app.screenshot(`account-delete-only-owner-${viewport.width}`, page);
    // nothing happened: still signed in, the account and the team as they were
    expect((await page.request.get('/api/auth/me')).status()).toBe(200);
    expect(await testKnex()('users').where({ id: user.id }).first('deletion_requested_at')).toEqual({ deletion_requested_at: null });
    expect(await testKnex()('workspace_members').where({ workspace_id: team.id }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '2' }]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(app.pageErrors).toEqual([]);
  });
});
