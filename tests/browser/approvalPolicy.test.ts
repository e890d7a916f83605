/**
 * Approval by two people in the browser (issue 42 items 4 and 7), at 1440x900 and 390x844, with three people in
 * separate browser contexts of one team workspace: the owner sets "Several members: 2" on the Members page; the
 * member approves a pending image in Approvals ("Your approval is recorded: 1 of 2 approvals", then "You approved");
 * the viewer sees "1 of 2 approvals" and who approved, and no Save; the owner sees the same live and saves it, which
 * charges the workspace once. The member's "Waiting for me" shows nothing left for her; the owner reads the item's
 * history. axe finds nothing serious on the panel and the queue in each state.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { expectAxeClean } from '../support/axe';
import { startBrowserApp, type BrowserApp, pageAs, profileName } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';
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
const taskQueue = uniqueTaskQueue('approval-policy-browser');
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = await startBrowserApp({ taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue } });
  worker = await startClipWorker(taskQueue);
  team = await createTeamWithRoles(app.baseUrl, { name: 'Harbour Approvals' });
  await testKnex()('profiles').where({ id: team.id }).update({ credits: 20 });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await app?.close();
  await worker?.stop();
  await closeTestKnex();
});

for (const size of SIZES) {
  it(`owner asks for two approvals, the member approves first, the viewer follows, the owner saves (${size.name})`, async () => {
    const tag = randomUUID().slice(0, 6);
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Policy ${tag}` } });
    const projectId = project.body.project.id;
    const memberName = await profileName(team.member);

    // ---------- the owner sets the rule on the Members page ----------
    const owner = await pageAs(app, team.owner, size.viewport, contexts);
    await owner.page.goto(`/?workspace=${team.id}&view=members`);
    const panel = owner.page.getByRole('region', { name: 'Approvals' });
    await panel.getByRole('radio', { name: 'Any member may approve' }).waitFor();
    expect(await panel.getByRole('radio', { name: 'Any member may approve' }).isChecked()).toBe(true);
    await panel.getByRole('radio', { name: 'Several members' }).check();
    expect(await panel.getByRole('combobox', { name: 'Approvals needed' }).inputValue()).toBe('2');
    await expectAxeClean(owner.page);
    await app.screenshot(`approval-policy-panel-${size.name}`, owner.page);
    await panel.getByRole('button', { name: 'Save approval rule' }).click();
    await owner.page.getByText('Needs 2 approvals from different members. Items already waiting keep their rule.').waitFor();
    const stored = await testKnex()('workspaces').where({ id: team.id }).first('approval_policy', 'approval_count');
    expect(stored).toEqual({ approval_policy: 'count', approval_count: 2 });

    // ---------- a pending image made under it ----------
    const fileName = `terrace-${tag}.png`;
    const item = await storeGeneratedItem({ workspaceId: team.id, projectId, createdBy: team.member.id, metadata: imageMetadata('/api/files/renders/x.png'), fileName, pendingOnly: true, approvalQueue: taskQueue });
    const before = (await testKnex()('profiles').where({ id: team.id }).first('credits')) as { credits: number };

    // ---------- the member approves first ----------
    const member = await pageAs(app, team.member, size.viewport, contexts);
    await member.page.goto(`/?workspace=${team.id}&view=approvals`);
    const memberCard = member.page.locator(`[data-approval-id="${item.approvalId}"]`);
    await memberCard.getByText('0 of 2 approvals').waitFor();
    await memberCard.getByRole('button', { name: `Save 1 credit: ${fileName}` }).click();
    await member.page.getByText('Your approval is recorded: 1 of 2 approvals.').waitFor();
    await memberCard.getByRole('button', { name: `You approved ${fileName}` }).waitFor();
    expect(await memberCard.getByRole('button', { name: `You approved ${fileName}` }).isDisabled()).toBe(true);
    await memberCard.getByText(`Approved by ${memberName}`).waitFor();
    await expectAxeClean(member.page);
    await app.screenshot(`approval-policy-queue-${size.name}`, member.page);
    // "Waiting for me": nothing left for the member
    await member.page.getByRole('button', { name: 'Waiting for me (0)' }).click();
    await member.page.getByRole('heading', { name: 'Nothing is waiting for you' }).waitFor();
    await expectAxeClean(member.page);
    await member.page.getByRole('button', { name: 'Show all pending' }).click();
    await memberCard.waitFor();
    expect((await testKnex()('profiles').where({ id: team.id }).first('credits')).credits).toBe(before.credits);

    // ---------- the viewer sees where it stands, and no Save ----------
    const viewer = await pageAs(app, team.viewer, size.viewport, contexts);
    await viewer.page.goto(`/?workspace=${team.id}&view=approvals`);
    const viewerCard = viewer.page.locator(`[data-approval-id="${item.approvalId}"]`);
    await viewerCard.getByText('1 of 2 approvals').waitFor();
    await viewerCard.getByText(`Approved by ${memberName}`).waitFor();
    expect(await viewerCard.getByRole('button', { name: /^Save/ }).count()).toBe(0);
    await expectAxeClean(viewer.page);

    // ---------- the owner, who opened the queue before, sees it live and saves: charged once ----------
    await owner.page.goto(`/?workspace=${team.id}&view=approvals`);
    const ownerCard = owner.page.locator(`[data-approval-id="${item.approvalId}"]`);
    await ownerCard.getByText('1 of 2 approvals').waitFor();
    await ownerCard.getByRole('button', { name: `Expand ${fileName}` }).click();
    const dialog = owner.page.getByRole('dialog', { name: fileName });
    await dialog.getByText(`Approved by ${memberName}`).waitFor();
    // its history: who generated it and who approved it so far
    await dialog.getByText('History', { exact: true }).click();
    const history = dialog.getByRole('list', { name: 'History' });
    await history.getByText(`${memberName} generated it`).waitFor();
    await history.getByText(`${memberName} approved it`).waitFor();
    await expectAxeClean(owner.page);
    await app.screenshot(`approval-policy-dialog-${size.name}`, owner.page);
    await dialog.getByRole('button', { name: `Save 1 credit: ${fileName}` }).click();
    await owner.page.getByText('Saved successfully!').waitFor();
    await ownerCard.waitFor({ state: 'detached' });
    // the member's queue follows live: the item is gone there too
    await memberCard.waitFor({ state: 'detached' });
    expect((await testKnex()('profiles').where({ id: team.id }).first('credits')).credits).toBe(before.credits - 1);
    const consumes = await testKnex()('credit_transactions').where({ workspace_id: team.id, transaction_type: 'consume' }).whereRaw("metadata->>'approvalId' = ?", [item.approvalId]);
    expect(consumes).toHaveLength(1);

    expect(owner.errors.concat(member.errors, viewer.errors)).toEqual([]);
    // back to the default for the next size
    const reset = await request(app.baseUrl, `/api/workspaces/${team.id}/approval-policy`, { method: 'PUT', token: team.owner.token, json: { approvalPolicy: { kind: 'any' } } });
    expect(reset.status).toBe(200);
  }, 180_000);
}
