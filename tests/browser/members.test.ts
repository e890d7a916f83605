/**
 * The Members page and the workspace switcher in the browser (issue 27, items 5 and 6): switching keeps the
 * workspace in the address and the event stream, and drops the previous workspace's screens; an owner changes a
 * role, revokes an invitation and removes a member, whose open page leaves the workspace at once; an invitation
 * for another e-mail, and a revoked one, say what the API says.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { createTestUser, type TestUser } from '../support/accounts';
import { openSidebar, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

/** Polls `check` every 50 ms until it holds, for at most `ms`. */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Members page and workspace switching in the browser', () => {
  let app: BrowserApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let workspaceId: string;
  let teamName: string;
  const contexts: BrowserContext[] = [];

  async function pageAs(user: TestUser, viewport = { width: 1440, height: 900 }): Promise<{ page: Page; errors: string[]; streams: string[] }> {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    contexts.push(context);
    await context.addCookies([{ name: 'rs_session', value: user.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    const errors: string[] = [];
    const streams: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/api/events') streams.push(req.url());
    });
    return { page, errors, streams };
  }

  async function invite(email: string, role: 'viewer' | 'member' | 'admin'): Promise<string> {
    const res = await request<{ link: string }>(app.baseUrl, `/api/workspaces/${workspaceId}/invitations`, { token: owner.token, json: { email, role } });
    if (res.status !== 201) throw new Error(`invitation answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.link;
  }

  beforeAll(async () => {
    app = await startBrowserApp({ config: (baseUrl) => ({ publicUrl: baseUrl }) });
    owner = await createTestUser(app.baseUrl, { name: 'Olive Owner' });
    member = await createTestUser(app.baseUrl, { name: 'Max Member' });
    stranger = await createTestUser(app.baseUrl, { name: 'Sam Stranger' });
    teamName = `Studio ${randomUUID().slice(0, 8)}`;
    const created = await request<{ workspace: { id: string } }>(app.baseUrl, '/api/workspaces', { token: owner.token, json: { name: teamName } });
    expect(created.status).toBe(201);
    workspaceId = created.body.workspace.id;
    const link = await invite(member.email, 'member');
    const token = new URL(link).searchParams.get('token')!;
    const accepted = await request(app.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: member.token });
    expect(accepted.status).toBe(200);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await app?.close();
    await closeTestKnex();
  });

  it('switches workspace from the sidebar: the address, the data and the event stream follow, the open project does not', async () => {
    const teamProject = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: member.token, json: { name: 'Team Tower' }, headers: { 'X-Workspace-Id': workspaceId } });
    expect(teamProject.status).toBe(201);
    await request(app.baseUrl, '/api/projects', { token: member.token, json: { name: 'My Cottage' } });
    expect((await testKnex()('projects').where({ id: teamProject.body.project.id }).first('workspace_id')).workspace_id).toBe(workspaceId);

    const { page, errors, streams } = await pageAs(member, { width: 390, height: 844 });
    await page.goto(`/?workspace=${workspaceId}&project=${teamProject.body.project.id}`);
    await page.getByRole('heading', { name: 'Team Tower', level: 1 }).waitFor();
    // the team workspace's events
    await eventually(() => streams.length > 0);
    expect(streams.every((u) => u.includes(`workspaceId=${workspaceId}`))).toBe(true);
    const teamStreams = streams.length;

    await openSidebar(page);
    await page.getByRole('button', { name: new RegExp(`^Workspace: ${teamName}\\s*,\\s*Member$`) }).click();
    const menu = page.getByRole('menu', { name: 'Workspaces' });
    // personal first, then the team, each with the role
    expect(await menu.getByRole('menuitemradio').allTextContents()).toEqual(['PersonalOwner', `${teamName}Member`]);
    expect(await menu.getByRole('menuitemradio', { checked: true }).textContent()).toBe(`${teamName}Member`);
    // keyboard: the current workspace has focus; ArrowUp goes to Personal; Enter switches
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Open project My Cottage' }).waitFor();
    expect(await page.getByRole('button', { name: 'Open project Team Tower' }).count()).toBe(0);
    const url = new URL(page.url());
    expect(url.searchParams.get('workspace')).toBeNull();
    expect(url.searchParams.get('project')).toBeNull();
    // the team's stream is replaced by the personal workspace's
    await eventually(() => streams.length > teamStreams);
    expect(streams.slice(teamStreams).every((u) => !u.includes('workspaceId='))).toBe(true);

    // Back returns to the team workspace
    await page.goBack();
    await page.getByRole('heading', { name: 'Team Tower', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('workspace')).toBe(workspaceId);
    expect(errors).toEqual([]);
  });

  it('lets the owner change a role and revoke an invitation; a revoked link and another e-mail get the API words', async () => {
    const { page, errors } = await pageAs(owner);
    await page.goto(`/?workspace=${workspaceId}&view=members`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    const role = page.getByRole('combobox', { name: 'Role of Max Member' });
    expect(await role.inputValue()).toBe('member');
    // the owner's own row has no controls
    expect(await page.getByRole('combobox', { name: 'Role of Olive Owner' }).count()).toBe(0);
    await role.selectOption('viewer');
    await page.getByText('Max Member is now Viewer.').waitFor();
    expect((await testKnex()('workspace_members').where({ workspace_id: workspaceId, user_id: member.id }).first('role')).role).toBe('viewer');

    // an invitation for someone else: the stranger's session is refused with the API's text
    const invited = `invited-${randomUUID().slice(0, 8)}@example.test`;
    const link = await invite(invited, 'member');
    const strangerPage = await pageAs(stranger);
    await strangerPage.page.goto(link);
    await strangerPage.page.getByRole('heading', { name: `Join ${teamName}`, level: 1 }).waitFor();
    const [refusal] = await Promise.all([
      strangerPage.page.waitForResponse((r: Response) => r.url().endsWith('/accept')),
      strangerPage.page.getByRole('button', { name: 'Accept invitation' }).click(),
    ]);
    expect(refusal.status()).toBe(403);
    const refusalText = ((await refusal.json()) as { error: string }).error;
    expect(refusalText).toContain(invited);
    await strangerPage.page.getByRole('alert').getByText(refusalText, { exact: true }).waitFor();
    expect(await testKnex()('workspace_members').where({ workspace_id: workspaceId, user_id: stranger.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);

    // the owner revokes it from the page; the link then says why it no longer works
    await page.reload();
    await page.getByRole('button', { name: `Revoke the invitation to ${invited}` }).click();
    await page.getByText(`The invitation to ${invited} was revoked.`).waitFor();
    await page.getByRole('button', { name: `Revoke the invitation to ${invited}` }).waitFor({ state: 'detached' });
    const [gone] = await Promise.all([strangerPage.page.waitForResponse((r: Response) => new URL(r.url()).pathname.startsWith('/api/invitations/')), strangerPage.page.reload()]);
    expect(gone.status()).toBe(410);
    const goneText = ((await gone.json()) as { error: string }).error;
    await strangerPage.page.getByRole('alert').getByText(goneText, { exact: true }).waitFor();
    await strangerPage.page.getByRole('button', { name: 'Go to your dashboard' }).click();
    await strangerPage.page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(new URL(strangerPage.page.url()).searchParams.get('token')).toBeNull();
    expect([...errors, ...strangerPage.errors]).toEqual([]);
  });

  it("removes a member after a confirmation; the member's open page leaves the workspace at once", async () => {
    const removed = await pageAs(member);
    await removed.page.goto(`/?workspace=${workspaceId}&view=approvals`);
    await removed.page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();

    const { page, errors } = await pageAs(owner);
    await page.goto(`/?workspace=${workspaceId}&view=members`);
    await page.getByRole('button', { name: 'Remove Max Member' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove member?' });
    await confirm.getByText('Max Member loses access').waitFor();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await page.getByText(`Max Member was removed from ${teamName}.`).waitFor();
    await page.getByRole('combobox', { name: 'Role of Max Member' }).waitFor({ state: 'detached' });
    expect(await testKnex()('workspace_members').where({ workspace_id: workspaceId, user_id: member.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);

    // the removed member's page: told, and back in their personal workspace without a reload
    await removed.page.getByText('You are not a member of that workspace (any more), so your personal workspace is shown.').waitFor({ timeout: 20_000 });
    await removed.page.waitForURL((url) => !url.searchParams.has('workspace'));
    await removed.page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    expect([...errors, ...removed.errors]).toEqual([]);
  });
});
