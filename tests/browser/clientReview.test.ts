/**
 * Client review by link in the browser (issue 43 item 5). A member shares a pending clip and image from Approvals and
 * e-mails the link (a real SMTP server); the guest opens it from the e-mail on a phone-size page, signed out, gives
 * their name once, pins a comment on the image, requests a change on it and approves the clip. The member's
 * Approvals page follows live (both leave the queue, the bell rings); the clip is charged once and the image's next
 * version is made. Every file the guest page loaded, and every link its API answers held, is a watermarked preview:
 * no original is reachable before approval. axe finds nothing serious on the guest page and the Review links page at
 * 1440x900 and 390x844, neither scrolls sideways, and the guest page asks no other origin for anything. A protected
 * link asks for its password (and says when it is wrong); an unknown link says so.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../config/env';
import { createStorage } from '../../storage';
import { expectAxeClean } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp, expectNoSidewaysScroll } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { clipMetadata, imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { houseStill } from '../support/stills';
import { uniqueTaskQueue } from '../support/temporal';
import { createTeamWithRoles, inWorkspace, type TeamWithRoles } from '../support/workspaces';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';

const execFileAsync = promisify(execFile);
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

let app: BrowserApp;
let worker: RunningWorker;
let smtp: SmtpServer;
let team: TeamWithRoles;
const taskQueue = uniqueTaskQueue('client-review-browser');
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  smtp = await startSmtpServer();
  app = await startBrowserApp({
    taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue },
    config: (baseUrl) => ({ publicUrl: baseUrl, smtpUrl: smtp.url, smtpFrom: 'Render Studio <review@render-studio.test>' }),
  });
  worker = await startClipWorker(taskQueue);
  team = await createTeamWithRoles(app.baseUrl, { name: 'Harbour Studio' });
  // rejecting (the guest's request for changes) needs a past purchase: the specs' rule
  await testKnex()('profiles').where({ id: team.id }).update({ credits: 30, total_credits_purchased: 30 });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await app?.close();
  await worker?.stop();
  await smtp?.close();
  await closeTestKnex();
});

async function newPage(viewport: { width: number; height: number }, token?: string): Promise<{ page: Page; context: BrowserContext; errors: string[] }> {
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  contexts.push(context);
  if (token) await useSession({ context, baseUrl: app.baseUrl }, token);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, context, errors };
}

/** A short MP4 for the clip's preview, so the guest's player can play it. */
async function smallClip(): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rs-client-review-'));
  const file = path.join(dir, 'preview.mp4');
  try {
    await execFileAsync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=s=320x180:r=15', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file]);
    return await fs.readFile(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

it('a member shares a clip and an image by e-mail; the guest pins a comment, requests a change and approves on a phone; pay on approval holds', async () => {
  const knex = testKnex();
  const tag = randomUUID().slice(0, 6);
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Client ${tag}` } });
  const projectId = project.body.project.id;
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await houseStill(640, 360).png().toBuffer())], { type: 'image/png' }), `harbour-${tag}.png`);
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: team.owner.token, headers: inWorkspace(team.id) });
  expect(upload.status).toBe(200);
  const imageName = `terrace-${tag}.png`;
  const clipName = `flyover-${tag}.mp4`;
  const image = await storeGeneratedItem({ workspaceId: team.id, projectId, createdBy: team.member.id, metadata: imageMetadata(upload.body.render.data.file_url), fileName: imageName, pendingOnly: true, approvalQueue: taskQueue });
  const clip = await storeGeneratedItem({ workspaceId: team.id, projectId, createdBy: team.member.id, metadata: clipMetadata({ renderId: upload.body.render.data.id }), fileName: clipName, pendingOnly: true, approvalQueue: taskQueue });
  // the clip's watermarked preview is a real MP4
  const storage = createStorage(loadConfig());
  await storage.objects.put('clips', `pending/${clip.approvalId}/preview.mp4`, await smallClip());
  await knex('pending_approvals').where({ id: clip.approvalId }).update({ watermarked_path: `pending/${clip.approvalId}/preview.mp4` });
  const originals = (await knex('pending_approvals').whereIn('id', [image.approvalId, clip.approvalId]).select('original_path', 'thumbnail_path')) as Array<{ original_path: string; thumbnail_path: string }>;

  // ---------- the member makes the link from Approvals and e-mails it ----------
  const member = await newPage(DESKTOP, team.member.token);
  await member.page.goto(`/?workspace=${team.id}&view=approvals`);
  await member.page.locator(`[data-approval-id="${image.approvalId}"]`).waitFor();
  await member.page.getByRole('button', { name: 'Share for review' }).click();
  const dialog = member.page.getByRole('dialog', { name: 'New review link' });
  await dialog.getByRole('textbox', { name: 'Title' }).fill('Harbour terrace options');
  await dialog.getByRole('textbox', { name: 'Message to your client (optional)' }).fill('Here are the clip and the still. Tell us what you think!');
  await expect(dialog.getByRole('checkbox', { name: new RegExp(imageName) }).isChecked()).resolves.toBe(true);
  await expect(dialog.getByRole('checkbox', { name: new RegExp(clipName) }).isChecked()).resolves.toBe(true);
  await dialog.getByRole('checkbox', { name: 'Approve and request changes' }).check();
  await expectAxeClean(member.page);
  await dialog.getByRole('button', { name: 'Make link' }).click();
  const ready = member.page.getByRole('dialog', { name: 'Review link ready' });
  await ready.getByRole('textbox', { name: 'E-mail it to' }).fill('client@buyer.example');
  await ready.getByRole('button', { name: 'Send' }).click();
  await member.page.getByText('Link e-mailed to client@buyer.example').waitFor();
  await ready.getByRole('button', { name: 'Done' }).click();
  const mail = await smtp.next((m) => m.to.includes('client@buyer.example'));
  const url = /https?:\/\/\S+\/r\/[A-Za-z0-9_-]{43}/.exec(mail.text)?.[0];
  expect(url).toBeDefined();
  const token = (url as string).split('/r/')[1];

  // ---------- the guest, signed out, on a phone ----------
  const guest = await newPage(PHONE);
  const requested: string[] = [];
  const answered: string[] = [];
  guest.page.on('request', (req) => requested.push(req.url()));
  guest.page.on('response', async (res) => {
    if (res.url().includes('/api/guest/') && res.headers()['content-type']?.includes('json')) answered.push(await res.text().catch(() => ''));
  });
  const page = await guest.page.goto(url as string);
  expect(page?.status()).toBe(200);
  expect(page?.headers()['referrer-policy']).toBe('no-referrer');
  expect(await guest.page.locator('meta[name="robots"]').getAttribute('content')).toContain('noindex');
  await guest.page.getByRole('heading', { name: 'Harbour terrace options' }).waitFor();
  await guest.page.getByText('Harbour Studio', { exact: true }).waitFor();
  await guest.page.getByText('Here are the clip and the still. Tell us what you think!').waitFor();
  await guest.page.getByRole('textbox', { name: 'Your name' }).fill('Cora Client');
  await guest.page.getByRole('textbox', { name: 'Your e-mail' }).fill('client@buyer.example');
  await guest.page.getByRole('button', { name: 'Continue' }).click();
  await guest.page.getByText('Commenting as Cora Client (client@buyer.example)').waitFor();
  await expectAxeClean(guest.page);
  await expectNoSidewaysScroll(guest.page);
  await app.screenshot('client-review-guest-phone', guest.page);

  const imageCard = guest.page.getByRole('article', { name: imageName });
  const clipCard = guest.page.getByRole('article', { name: clipName });
  await clipCard.locator('video').waitFor();
  // the image zooms in and out
  await imageCard.getByRole('button', { name: 'Zoom in' }).click();
  await imageCard.getByRole('img', { name: `Preview of ${imageName} (zoomed in)` }).waitFor();
  await imageCard.getByRole('button', { name: 'Zoom out' }).click();
  await expectNoSidewaysScroll(guest.page);

  // a pinned comment on the image (its text stays text)
  await imageCard.getByRole('button', { name: 'Pin to a spot' }).click();
  await imageCard.getByTestId('guest-media').click({ position: { x: 100, y: 60 } });
  await imageCard.getByRole('button', { name: /^Pinned at / }).waitFor();
  await imageCard.getByRole('textbox', { name: 'Your comment' }).fill('The railing <b>looks</b> bent here');
  await imageCard.getByRole('button', { name: 'Send comment' }).click();
  await imageCard.getByText('Comment sent to the studio.').waitFor();
  await imageCard.getByText('The railing <b>looks</b> bent here').waitFor();
  await imageCard.getByText('Pin 1').waitFor();
  expect(await imageCard.locator('.guest-comment-body b').count()).toBe(0);

  // the member sees the guest's comment live: the bell rings
  await member.page.getByRole('button', { name: /^Notifications, \d+ unread$/ }).first().waitFor({ timeout: 30_000 });

  // a request for changes on the image, an approval of the clip
  await imageCard.getByRole('button', { name: 'Request changes' }).click();
  await imageCard.getByRole('textbox', { name: 'What should change?' }).fill('Straighten the railing and add evening light');
  await imageCard.getByRole('button', { name: 'Send request for changes' }).click();
  await guest.page.getByText('Changes requested. The studio is making the next version.').waitFor();
  await clipCard.getByRole('button', { name: 'Approve' }).click();
  await guest.page.getByText('Approved. Thank you!').waitFor();
  await expectAxeClean(guest.page);

  // ---------- the member's queue follows live; the clip is charged once; the image's next version is made ----------
  await member.page.locator(`[data-approval-id="${clip.approvalId}"]`).waitFor({ state: 'detached', timeout: 30_000 });
  await member.page.locator(`[data-approval-id="${image.approvalId}"]`).waitFor({ state: 'detached', timeout: 30_000 });
  const consumed = await knex('credit_transactions').where({ workspace_id: team.id, transaction_type: 'consume' }).whereRaw("metadata->>'approvalId' = ?", [clip.approvalId]);
  expect(consumed).toHaveLength(1);
  expect(consumed[0].metadata).toMatchObject({ reviewLinkId: expect.any(String), guest: { name: 'Cora Client', email: 'client@buyer.example' } });
  expect((await knex('pending_approvals').where({ id: image.approvalId }).first('status')).status).toBe('rejected');
  const v2 = await (async () => {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const row = (await knex('pending_approvals').where({ previous_approval_id: image.approvalId }).first('id', 'version')) as { id: string; version: number } | undefined;
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('the next version was not made');
  })();
  expect(v2.version).toBe(2);
  await member.page.locator(`[data-approval-id="${v2.id}"]`).waitFor({ timeout: 60_000 });
  const told = await knex('notifications').where({ user_id: team.member.id, workspace_id: team.id }).pluck('text');
  expect(told).toEqual(expect.arrayContaining([`Guest: Cora Client (client@buyer.example) via link Harbour terrace options approved ${clipName}, which you started`]));

  // ---------- no original reached the guest before approval: not loaded, not linked ----------
  for (const original of originals) {
    for (const seen of [...requested, ...answered]) {
      expect(seen.includes(original.original_path)).toBe(false);
    }
  }
  // everything the page asked for came from the studio's own origin (and its media, with S3 storage, from the
  // studio's object store by presigned links)
  const config = loadConfig();
  const origins = config.storageBackend === 's3' ? [app.baseUrl, config.s3.publicUrl] : [app.baseUrl];
  expect(requested.filter((u) => !origins.some((origin) => u.startsWith(origin)) && !u.startsWith('data:') && !u.startsWith('blob:'))).toEqual([]);
  if (config.storageBackend === 'local') {
    // the file routes refuse the image's original (rejected, never approved), however it is asked for. With S3
    // storage files are served by presigned links from the store, not these routes, and the original is signed for
    // no one: the guest's page neither loaded nor linked it (above).
    const imageRow = await knex('pending_approvals').where({ id: image.approvalId }).first('original_bucket', 'original_path');
    const originalLink = storage.urls.sign(imageRow.original_bucket, imageRow.original_path);
    expect((await guest.page.request.get(`${app.baseUrl}${originalLink}`)).status()).toBe(403);
    expect((await guest.page.request.get(`${app.baseUrl}/api/downloads?url=${encodeURIComponent(originalLink)}&name=x.png`, { maxRedirects: 0 })).status()).toBe(401);
  }
  // the link does not allow downloads: the approved clip shows no download either
  await guest.page.reload();
  await guest.page.getByRole('article', { name: clipName }).getByText('Approved', { exact: true }).waitFor();
  expect(await guest.page.getByRole('link', { name: 'Download' }).count()).toBe(0);

  // ---------- axe at both sizes: the guest page and the Review links page ----------
  for (const viewport of [PHONE, DESKTOP]) {
    await guest.page.setViewportSize(viewport);
    await guest.page.getByRole('heading', { name: 'Harbour terrace options' }).waitFor();
    await expectAxeClean(guest.page);
    await expectNoSidewaysScroll(guest.page);
    await member.page.setViewportSize(viewport);
    await member.page.goto(`/?workspace=${team.id}&view=review-links`);
    const card = member.page.getByRole('listitem').filter({ hasText: 'Harbour terrace options' });
    await card.getByText('Active', { exact: true }).waitFor();
    await card.getByText(/\d+ visits?/).waitFor();
    await expectAxeClean(member.page);
    await expectNoSidewaysScroll(member.page);
    await app.screenshot(`client-review-links-${viewport.width}`, member.page);
  }
  // revoked: the guest's page says so at once
  const reviewLinksCard = member.page.getByRole('listitem').filter({ hasText: 'Harbour terrace options' });
  member.page.once('dialog', (d) => void d.accept());
  await reviewLinksCard.getByRole('button', { name: 'Revoke' }).click();
  await reviewLinksCard.getByText('Revoked', { exact: true }).waitFor();
  const after = await guest.page.goto(url as string);
  expect(after?.status()).toBe(410);
  await guest.page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
  await expectAxeClean(guest.page);
  expect(guest.errors.concat(member.errors)).toEqual([]);
}, 300_000);

it('a protected link asks for its password on the phone, says when it is wrong, and opens with the right one; an unknown link says so', async () => {
  const tag = randomUUID().slice(0, 6);
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Protected ${tag}` } });
  const item = await storeGeneratedItem({ workspaceId: team.id, projectId: project.body.project.id, createdBy: team.member.id, metadata: imageMetadata('/api/files/renders/seed.png'), fileName: `balcony-${tag}.png`, pendingOnly: true, approvalQueue: taskQueue });
  const made = await request<{ url: string }>(app.baseUrl, '/api/review-links', { token: team.member.token, headers: inWorkspace(team.id), json: { title: 'Protected preview', itemIds: [item.approvalId], password: 'harbour-2026' } });
  expect(made.status).toBe(201);
  const guest = await newPage(PHONE);
  await guest.page.goto(made.body.url);
  await guest.page.getByRole('heading', { name: 'This review is protected' }).waitFor();
  await expectAxeClean(guest.page);
  await guest.page.getByLabel('Password').fill('wrong-guess');
  await guest.page.getByRole('button', { name: 'Open the review' }).click();
  await guest.page.getByRole('alert').getByText('That password is not right. Check it and try again.').waitFor();
  await guest.page.getByLabel('Password').fill('harbour-2026');
  await guest.page.getByRole('button', { name: 'Open the review' }).click();
  await guest.page.getByRole('heading', { name: 'Protected preview' }).waitFor();
  await guest.page.getByRole('article', { name: `balcony-${tag}.png` }).waitFor();
  await expectNoSidewaysScroll(guest.page);

  const unknown = await guest.page.goto(`/r/${'Q'.repeat(43)}`);
  expect(unknown?.status()).toBe(404);
  await guest.page.getByRole('heading', { name: 'Link not found' }).waitFor();
  await expectAxeClean(guest.page);
  expect(guest.errors).toEqual([]);
}, 120_000);
