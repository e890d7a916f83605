/**
 * The bell in the browser (issue 42 items 6 and 7), at 1440x900 and 390x844: the owner is asked to approve a
 * colleague's new image (1 unread), a viewer's comment mentioning the owner arrives live (2 unread), opening the bell
 * lists both and marks them read, and an entry opens Approvals. The owner then chooses "No e-mail" in Account
 * settings. axe finds nothing serious with the bell open and on the settings.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { expectAxeClean } from '../support/axe';
import { startBrowserApp, type BrowserApp, pageAs, profileName } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { imageMetadata, storeGeneratedItem } from '../support/generatedItems';
import { request } from '../support/http';
import { createTeamWithRoles, inWorkspace, type TeamWithRoles } from '../support/workspaces';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

let app: BrowserApp;
let team: TeamWithRoles;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = await startBrowserApp();
  team = await createTeamWithRoles(app.baseUrl, { name: 'Harbour Bell' });
  await testKnex()('profiles').where({ id: team.id }).update({ credits: 20 });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await app?.close();
  await closeTestKnex();
});

for (const size of SIZES) {
  it(`the owner is asked to approve, is mentioned live, reads both and opens Approvals (${size.name})`, async () => {
    const tag = randomUUID().slice(0, 6);
    // each size starts with nothing unread
    await testKnex()('notifications').where({ workspace_id: team.id }).update({ read_at: new Date() });
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Bell ${tag}` } });
    const projectId = project.body.project.id;
    const ownerName = await profileName(team.owner);
    const viewerName = await profileName(team.viewer);

    const owner = await pageAs(app, team.owner, size.viewport, contexts);
    await owner.page.goto(`/?workspace=${team.id}&view=projects`);
    await owner.page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    // in the sidebar at desktop size, in the top bar at phone size: in sight either way
    await owner.page.getByRole('button', { name: 'Notifications', exact: true }).waitFor();

    // a colleague's image waits for approval: the owner's bell counts it, live
    const fileName = `courtyard-${tag}.png`;
    const item = await storeGeneratedItem({ workspaceId: team.id, projectId, createdBy: team.member.id, metadata: imageMetadata('/api/files/renders/x.png'), fileName, pendingOnly: true });
    await owner.page.getByRole('button', { name: 'Notifications, 1 unread' }).waitFor();

    // the viewer mentions the owner in a comment: 2 unread, live
    const comment = await request(app.baseUrl, `/api/content/${item.approvalId}/comments`, { token: team.viewer.token, headers: inWorkspace(team.id), json: { body: `@${ownerName} is the sky too flat?` } });
    expect(comment.status).toBe(201);
    const bell = owner.page.getByRole('button', { name: 'Notifications, 2 unread' });
    await bell.waitFor();

    await bell.click();
    const panel = owner.page.getByRole('dialog', { name: 'Notifications' });
    await panel.getByText(`${viewerName} mentioned you on ${fileName}`).waitFor();
    await panel.getByText(`Your approval is needed: ${fileName}`).waitFor();
    await expectAxeClean(owner.page);
    // opened: read
    await owner.page.getByRole('button', { name: 'Notifications', exact: true }).waitFor();
    expect(await testKnex()('notifications').where({ user_id: team.owner.id, workspace_id: team.id }).whereNull('read_at').count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);
    await app.screenshot(`notifications-${size.name}`, owner.page);

    // Escape closes it back to the bell; opening again and choosing the request opens Approvals
    await owner.page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    await owner.page.getByRole('button', { name: 'Notifications', exact: true }).click();
    await panel.getByRole('button', { name: new RegExp(`^Your approval is needed: ${fileName}`) }).click();
    await owner.page.getByRole('heading', { name: 'Content Approvals' }).waitFor();
    await owner.page.locator(`[data-approval-id="${item.approvalId}"]`).waitFor();

    // the choice of e-mail, in Account settings
    await owner.page.goto(`/?workspace=${team.id}&view=account&tab=settings`);
    const settings = owner.page.getByRole('region', { name: 'Notification e-mails' });
    await settings.getByRole('radio', { name: 'An e-mail for each notification' }).waitFor();
    await settings.getByRole('radio', { name: 'No e-mail' }).check();
    await owner.page.getByText('Notification e-mail: no e-mail.').waitFor();
    expect((await testKnex()('users').where({ id: team.owner.id }).first('notification_email')).notification_email).toBe('none');
    await expectAxeClean(owner.page);
    await request(app.baseUrl, '/api/profile/notifications', { method: 'PUT', token: team.owner.token, json: { email: 'each' } });
    expect(owner.errors).toEqual([]);
  }, 180_000);
}
