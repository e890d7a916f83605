/**
 * "Request changes" in the browser (issue 42 items 2 and 7), at 1440x900 and 390x844, with three people in separate
 * browser contexts of one team workspace. The viewer sees the pending image and no Request changes; the member opens
 * "Request changes" on its card, is told a request is needed, writes one and sends it: the item leaves the queue and
 * its next version (v2) arrives, made by a real image edit from the same render, with the request in its thread
 * ("Requested changes", "v1") and its history. The owner tries the same on v2 while generation is paused: the dialog
 * says why and what to do, and nothing changes. axe finds nothing serious in any of these states.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { expectAxeClean } from '../support/axe';
import { startBrowserApp, type BrowserApp, pageAs, expectNoSidewaysScroll, profileName } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';
import { houseStill } from '../support/stills';
import { uniqueTaskQueue } from '../support/temporal';
import { createTeamWithRoles, inWorkspace, type TeamWithRoles } from '../support/workspaces';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

let app: BrowserApp;
let worker: RunningWorker;
let team: TeamWithRoles;
const taskQueue = uniqueTaskQueue('request-changes-browser');
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = await startBrowserApp({ taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } });
  worker = await startClipWorker(taskQueue);
  team = await createTeamWithRoles(app.baseUrl, { name: 'Harbour Reviews' });
  // rejecting needs a past purchase (the specs' rule)
  await testKnex()('profiles').where({ id: team.id }).update({ credits: 20, total_credits_purchased: 20 });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await app?.close();
  await worker?.stop();
  await closeTestKnex();
});

for (const size of SIZES) {
  it(`the member requests changes, v2 arrives with the request in its thread; a paused workspace is told why (${size.name})`, async () => {
    const tag = randomUUID().slice(0, 6);
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Changes ${tag}` } });
    const projectId = project.body.project.id;
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(await houseStill(640, 360).png().toBuffer())], { type: 'image/png' }), `harbour-${tag}.png`);
    const upload = await request<{ render: { data: { file_url: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: team.owner.token, headers: inWorkspace(team.id) });
    expect(upload.status).toBe(200);
    const fileName = `terrace-${tag}.png`;
    const v1 = await storeGeneratedItem({
      workspaceId: team.id,
      projectId,
      createdBy: team.member.id,
      metadata: imageMetadata(upload.body.render.data.file_url),
      fileName,
      pendingOnly: true,
      approvalQueue: taskQueue,
    });
    const memberName = await profileName(team.member);

    // ---------- the viewer sees the item, and no way to decide on it ----------
    const viewer = await pageAs(app, team.viewer, size.viewport, contexts);
    await viewer.page.goto(`/?workspace=${team.id}&view=approvals`);
    const viewerCard = viewer.page.locator(`[data-approval-id="${v1.approvalId}"]`);
    await viewerCard.waitFor();
    expect(await viewerCard.getByRole('button', { name: /^Request changes/ }).count()).toBe(0);

    // ---------- the member asks for a change ----------
    const member = await pageAs(app, team.member, size.viewport, contexts);
    await member.page.goto(`/?workspace=${team.id}&view=approvals`);
    const memberCard = member.page.locator(`[data-approval-id="${v1.approvalId}"]`);
    await memberCard.getByRole('button', { name: `Request changes to ${fileName}` }).click();
    const dialog = member.page.getByRole('dialog', { name: `Request changes: ${fileName}` });
    await dialog.getByText('A new version (v2) is made from the same source', { exact: false }).waitFor();
    await dialog.getByRole('button', { name: 'Request changes (v2)' }).click();
    await dialog.getByRole('alert').getByText('Say what should change').waitFor();
    await expectAxeClean(member.page);
    await expectNoSidewaysScroll(member.page);
    await app.screenshot(`request-changes-dialog-${size.name}`, member.page);
    await dialog.getByRole('textbox', { name: 'What should change?' }).fill('Warm light in the windows <b>please</b>');
    await dialog.getByText('39 / 5,000 characters').waitFor();
    await dialog.getByRole('button', { name: 'Request changes (v2)' }).click();
    await member.page.getByText('Changes requested. v2 is being made', { exact: false }).waitFor();
    await memberCard.waitFor({ state: 'detached' });
    expect((await testKnex()('pending_approvals').where({ id: v1.approvalId }).first('status')).status).toBe('rejected');

    // ---------- v2 arrives (a real image edit of the same render) with the conversation ----------
    const v2 = (await (async () => {
      for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
        const row = await testKnex()('pending_approvals').where({ previous_approval_id: v1.approvalId }).first('id', 'file_name', 'version');
        if (row) return row;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error('v2 was not made');
    })()) as { id: string; file_name: string; version: number };
    expect(v2.version).toBe(2);
    const v2Card = member.page.locator(`[data-approval-id="${v2.id}"]`);
    await v2Card.getByText('v2', { exact: true }).waitFor({ timeout: 60_000 });
    // the viewer's queue follows live
    await viewer.page.locator(`[data-approval-id="${v2.id}"]`).getByText('v2', { exact: true }).waitFor({ timeout: 60_000 });
    await expectAxeClean(viewer.page);
    await v2Card.getByRole('button', { name: `Expand ${v2.file_name}` }).click();
    const v2Dialog = member.page.getByRole('dialog', { name: v2.file_name });
    await v2Dialog.getByText('Version 2', { exact: false }).waitFor();
    const thread = v2Dialog.locator('.review-thread').filter({ hasText: 'Requested changes' });
    // the request is shown as text, never as markup
    await thread.getByText('Warm light in the windows <b>please</b>').waitFor();
    await thread.getByText('v1', { exact: true }).waitFor();
    expect(await v2Dialog.locator('.review-thread b').count()).toBe(0);
    await v2Dialog.getByText('History', { exact: true }).click();
    const history = v2Dialog.getByRole('list', { name: 'History' });
    await history.getByText(`${memberName} requested changes`).waitFor();
    await expectAxeClean(member.page);
    await app.screenshot(`request-changes-v2-${size.name}`, member.page);
    // compared with the version it replaced (its kept preview) first
    await v2Dialog.getByRole('button', { name: 'Compare with earlier versions' }).click();
    const compare = member.page.getByRole('dialog', { name: `Compare: ${v2.file_name}` });
    const choice = compare.getByRole('combobox', { name: 'Compare with' });
    await choice.waitFor();
    expect(await choice.locator('option:checked').textContent()).toBe(`Earlier version: v1 · ${fileName}`);
    const pane = compare.locator('figure').filter({ has: member.page.locator('figcaption', { hasText: `Earlier version: v1 · ${fileName}` }) });
    await pane.waitFor();
    // its kept preview is shown (pay on approval: the watermarked file, never an original)
    const width = await pane.locator('img').evaluate(
      (node) =>
        new Promise<number>((resolve) => {
          const img = node as unknown as { complete: boolean; naturalWidth: number; addEventListener: (type: string, fn: () => void) => void };
          if (img.complete) resolve(img.naturalWidth);
          img.addEventListener('load', () => resolve(img.naturalWidth));
          img.addEventListener('error', () => resolve(0));
        }),
    );
    expect(width).toBeGreaterThan(0);
    await expectAxeClean(member.page);
    await compare.getByRole('button', { name: 'Close' }).first().click();

    // ---------- the owner asks again while generation is paused: told why, nothing changes ----------
    await testKnex()('profiles').where({ id: team.id }).update({ rejection_cooldown_until: new Date(Date.now() + 3_600_000) });
    try {
      const owner = await pageAs(app, team.owner, size.viewport, contexts);
      await owner.page.goto(`/?workspace=${team.id}&view=approvals`);
      const ownerCard = owner.page.locator(`[data-approval-id="${v2.id}"]`);
      await ownerCard.getByRole('button', { name: `Request changes to ${v2.file_name}` }).click();
      const ownerDialog = owner.page.getByRole('dialog', { name: `Request changes: ${v2.file_name}` });
      await ownerDialog.getByRole('textbox', { name: 'What should change?' }).fill('Less snow');
      await ownerDialog.getByRole('button', { name: 'Request changes (v3)' }).click();
      await ownerDialog.getByRole('alert').getByText('Generation temporarily paused due to repeated rejections. Approve at least one item or try again later.').waitFor();
      await expectAxeClean(owner.page);
      await ownerDialog.getByRole('button', { name: 'Cancel' }).click();
      await ownerCard.waitFor();
      expect((await testKnex()('pending_approvals').where({ id: v2.id }).first('status')).status).toBe('pending');
      expect(await testKnex()('change_requests').where({ approval_id: v2.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
      expect(owner.errors).toEqual([]);
    } finally {
      await testKnex()('profiles').where({ id: team.id }).update({ rejection_cooldown_until: null, rejection_streak: 0 });
    }
    expect(member.errors.concat(viewer.errors)).toEqual([]);
  }, 240_000);
}
