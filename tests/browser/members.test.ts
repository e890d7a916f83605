/**
 * The Members page and the workspace switcher in the browser (issue 27, items 5 and 6): switching keeps the
 * workspace in the address and the event stream, and drops the previous workspace's screens; an owner changes a
 * role, revokes an invitation and removes a member, whose open page leaves the workspace at once with a notice that
 * names it and stays until dismissed (desktop and phone); an invitation for another e-mail, and a revoked one, say
 * what the API says; a used one opened by the account that used it says it joined and opens the workspace.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { createTestUser, type TestUser } from '../support/accounts';
import { openSidebar, startBrowserApp, type BrowserApp } from '../support/browser';
import { seriousAxeFindings } from '../support/axe';
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

  it.each([
    { size: 'desktop', viewport: { width: 1280, height: 800 } },
    { size: 'phone', viewport: { width: 390, height: 844 } },
  ])('a used link opened by the account that used it says it joined and opens the workspace; signed out, it offers that sign-in ($size)', async ({ viewport }) => {
    const joiner = await createTestUser(app.baseUrl, { name: 'Jo Joiner' });
    const link = await invite(joiner.email, 'viewer');
    const token = new URL(link).searchParams.get('token')!;
    expect((await request(app.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: joiner.token })).status).toBe(200);

    // signed out: the used link's words, and Sign in, after which the page knows this account joined
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(link);
    await page.getByRole('alert').getByText('This invitation has already been used. Sign in with the invited account to open the workspace.').waitFor();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Email').fill(joiner.email);
    await dialog.getByLabel('Password').fill(joiner.password);
    await dialog.getByRole('button', { name: 'Sign in', exact: true }).click();

    const panel = page.getByRole('region', { name: `You already joined ${teamName}` });
    await panel.waitFor();
    await panel.getByText(`This invitation was accepted with your account (${joiner.email}), so you are a member of ${teamName}.`).waitFor();
    expect(await page.getByText('already been used').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Accept invitation' }).count()).toBe(0);
    expect(await seriousAxeFindings(page)).toEqual([]);
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
    await app.screenshot(`invitation-joined-${viewport.width}`, page);

    // the same link again, signed in: at once; Open goes to the workspace
    await page.goto(link);
    await panel.waitFor();
    await panel.getByRole('button', { name: `Open ${teamName}` }).click();
    await page.waitForURL((url) => url.searchParams.get('workspace') === workspaceId && !url.searchParams.has('token'));
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(errors).toEqual([]);
  });

  it("removes a member after a confirmation; the member's open page leaves the workspace at once, saying which, until dismissed", async () => {
    const removed = await pageAs(member, { width: 1280, height: 800 });
    // the page's timers run on a clock the test moves: the notice must outlast a toast's 4 s
    await removed.page.clock.install();
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

    // the removed member's page: told which workspace, and back in their personal workspace without a reload
    await expectRemovalNotice(removed.page, 'removed-member-desktop');
    expect([...errors, ...removed.errors]).toEqual([]);
  });

  it('tells a member removed while on a phone which workspace they lost, until dismissed', async () => {
    const link = await invite(member.email, 'member');
    const accepted = await request(app.baseUrl, `/api/invitations/${new URL(link).searchParams.get('token')}/accept`, { method: 'POST', token: member.token });
    expect(accepted.status).toBe(200);
    const removed = await pageAs(member, { width: 390, height: 844 });
    await removed.page.clock.install();
    await removed.page.goto(`/?workspace=${workspaceId}&view=approvals`);
    await removed.page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await eventually(() => removed.streams.length > 0);

    const gone = await request(app.baseUrl, `/api/workspaces/${workspaceId}/members/${member.id}`, { method: 'DELETE', token: owner.token });
    expect(gone.status).toBe(200);
    await expectRemovalNotice(removed.page, 'removed-member-phone');
    expect(removed.errors).toEqual([]);
  });

  /** The removed member's page names the workspace in a notice that stays (past a toast's 4 s) until Dismiss. */
  async function expectRemovalNotice(removedPage: Page, screenshot: string): Promise<void> {
    const notice = removedPage.getByRole('alert').filter({ hasText: `You are no longer a member of ${teamName}.` });
    await notice.waitFor({ timeout: 20_000 });
    await notice.getByText('You were removed from it, or it was deleted. Your personal workspace is shown.').waitFor();
    await removedPage.waitForURL((url) => !url.searchParams.has('workspace'));
    await removedPage.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    expect(await removedPage.getByText('You are not a member of that workspace').count()).toBe(0);
    expect(await seriousAxeFindings(removedPage)).toEqual([]);
    expect(await removedPage.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
    await app.screenshot(screenshot, removedPage);
    await removedPage.clock.runFor(30_000);
    expect(await notice.isVisible()).toBe(true);
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'detached' });
  }
});
