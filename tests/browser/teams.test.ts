/**
 * Teams in the browser (issue 27, item 6), at desktop and phone sizes: an owner makes a team workspace, invites a
 * colleague from the Members page and copies the link; the colleague signs up from the link, accepts, uploads a
 * render and generates a clip; the owner sees it arrive in Approvals without a reload and approves; both see the
 * shared balance drop by the clip's 4 credits. A viewer sees no generate or approve controls, and the server refuses
 * the viewer's direct calls anyway. Spend per member shows who generated the clip and who approved it, and keeps the
 * colleague's row once she is removed ("former member") and once her account is gone. axe on the Members page, the
 * invitation page and Billing.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { addCredits } from '../../services/billing/credits';
import { expectAxeClean } from '../support/axe';
import { createTestUser } from '../support/accounts';
import { inviteFromMembersPage, openSidebar, sessionTokenOf, startBrowserApp, useSession, verifyEmailInBrowser, type BrowserApp } from '../support/browser';
import { ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { uniqueTaskQueue } from '../support/temporal';
import { renderJpeg, startClipWorker, type RunningWorker } from '../clips/fixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

const FUNDED_CREDITS = 10;
const CLIP_COST = 4;

describe('Teams in the browser', () => {
  let app: BrowserApp;
  let worker: RunningWorker;
  const taskQueue = uniqueTaskQueue('teams-browser');
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp({
      taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue },
      // invitation links point at this app
      config: (baseUrl) => ({ publicUrl: baseUrl }),
    });
    worker = await startClipWorker(taskQueue);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await app?.close();
    await worker?.stop();
    await closeTestKnex();
  });

  async function newPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { context, page, errors };
  }

  for (const size of SIZES) {
    it(`owner invites, a colleague joins from the link and generates, the owner approves live, the balance is shared (${size.name})`, async () => {
      const tag = randomUUID().slice(0, 8);
      const teamName = `Harbour Team ${tag}`;

      // ---------- the owner (signed up through the API, unverified as after the form: sign-up is not what this test is
      // about) makes a team workspace from the switcher ----------
      const ownerUser = await createTestUser(app.baseUrl, { name: 'Olive Owner', email: `owner-${tag}@example.test`, verified: false });
      const owner = await newPage(size.viewport);
      await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
      await useSession({ context: owner.context, baseUrl: app.baseUrl }, ownerUser.token);
      await owner.page.goto('/');
      await owner.page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

      await openSidebar(owner.page);
      const switcher = owner.page.getByRole('button', { name: /^Workspace: Personal\s*,\s*Owner$/ });
      await switcher.click();
      const menu = owner.page.getByRole('menu', { name: 'Workspaces' });
      // alone: the personal workspace and "New workspace", nothing else
      expect(await menu.getByRole('menuitemradio').allTextContents()).toEqual(['PersonalOwner']);
      // keyboard: the current workspace has focus, ArrowDown reaches "New workspace", Escape closes back to the button
      await owner.page.keyboard.press('ArrowDown');
      expect(await owner.page.evaluate('document.activeElement?.textContent?.trim()')).toBe('New workspace');
      await owner.page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
      expect(await owner.page.evaluate("document.activeElement?.getAttribute('aria-haspopup')")).toBe('menu');
      await switcher.press('ArrowDown');
      await menu.getByRole('menuitem', { name: 'New workspace' }).click();
      const create = owner.page.getByRole('dialog', { name: 'New workspace' });
      await create.getByLabel('Workspace name').fill(teamName);
      await create.getByRole('button', { name: 'Create workspace' }).click();
      await create.waitFor({ state: 'detached' });
      await owner.page.waitForURL((url) => url.searchParams.has('workspace'));
      const workspaceId = new URL(owner.page.url()).searchParams.get('workspace')!;
      const row = await testKnex()('workspace_members').where({ workspace_id: workspaceId }).first('role');
      expect(row.role).toBe('owner');

      // the test funds the new workspace (it starts at 0) through the ledger
      await addCredits(testKnex(), { workspaceId, amount: FUNDED_CREDITS, type: 'add', description: 'Team funds', idempotencyKey: `teams-browser:${workspaceId}` });

      // ---------- invite the colleague from the Members page and copy the link ----------
      await openSidebar(owner.page);
      await owner.page.getByRole('navigation', { name: 'Workspace' }).getByRole('button', { name: 'Members' }).click();
      await owner.page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
      expect(new URL(owner.page.url()).searchParams.get('view')).toBe('members');
      await owner.page.getByRole('list', { name: 'Members' }).getByText('Olive Owner').waitFor();
      await owner.page.getByText('No pending invitations.').waitFor();
      const colleagueEmail = `colleague-${tag}@example.test`;
      const link = await inviteFromMembersPage(owner.page, colleagueEmail, 'member');
      expect(link).toMatch(new RegExp(`^${app.baseUrl}/\\?view=invite&token=[A-Za-z0-9_-]{40,}$`));
      await owner.page.getByRole('button', { name: 'Copy link' }).click();
      await owner.page.getByText('Copied to clipboard!').waitFor();
      expect(await owner.page.evaluate('navigator.clipboard.readText()')).toBe(link);
      await owner.page.getByRole('list', { name: 'Pending invitations' }).getByRole('button', { name: `Revoke the invitation to ${colleagueEmail}` }).waitFor();
      await expectAxeClean(owner.page);
      await app.screenshot(`teams-members-${size.name}`, owner.page);

      // a reload keeps the workspace and the view
      await owner.page.reload();
      await owner.page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
      await owner.page.getByRole('list', { name: 'Pending invitations' }).getByRole('button', { name: `Revoke the invitation to ${colleagueEmail}` }).waitFor();

      // ---------- the colleague opens the link signed out, signs up with that e-mail and accepts ----------
      const colleague = await newPage(size.viewport);
      await colleague.page.goto(link);
      await colleague.page.getByRole('heading', { name: `Join ${teamName}`, level: 1 }).waitFor();
      await colleague.page.getByText('Olive Owner invited you').waitFor();
      await expectAxeClean(colleague.page);
      await app.screenshot(`teams-invite-${size.name}`, colleague.page);
      await colleague.page.getByRole('button', { name: 'Sign up' }).click();
      const signUp = colleague.page.getByRole('form', { name: 'Sign up' });
      expect(await signUp.getByLabel('Email').inputValue()).toBe(colleagueEmail);
      await signUp.getByLabel('Full name').fill('Cleo Colleague');
      await signUp.getByLabel('Password').fill(`Colleague-pw-${tag}-9`);
      await signUp.getByRole('button', { name: 'Create account' }).click();
      await colleague.page.getByText(`Signed in as ${colleagueEmail}.`).waitFor();
      // holding the link is not enough: the address must be verified first (DESIGN.md "Accounts")
      await colleague.page.getByRole('button', { name: 'Accept invitation' }).click();
      await colleague.page.getByRole('alert').filter({ hasText: ACCOUNT_SECURITY_MSG.emailNotVerified }).waitFor();
      await verifyEmailInBrowser(colleague.page, colleagueEmail);
      await colleague.page.goto(link);
      await colleague.page.getByRole('button', { name: 'Accept invitation' }).click();
      await colleague.page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      expect(new URL(colleague.page.url()).searchParams.get('workspace')).toBe(workspaceId);
      const colleagueId = (await testKnex()('users').where({ email: colleagueEmail }).first('id')).id as string;
      expect((await testKnex()('workspace_members').where({ workspace_id: workspaceId, user_id: colleagueId }).first('role')).role).toBe('member');

      // the owner sees the queue of the team workspace, waiting
      await owner.page.goto(`/?workspace=${workspaceId}&view=approvals`);
      await owner.page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
      await owner.page.getByRole('heading', { name: 'No pending approvals' }).waitFor();
      await owner.page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));

      // ---------- the colleague makes a project, uploads a render and generates a clip ----------
      await colleague.page.getByRole('button', { name: 'New Project' }).first().click();
      const newProject = colleague.page.getByRole('dialog', { name: 'New Project' });
      await newProject.getByLabel('Project name').fill('Harbour View');
      await newProject.getByRole('button', { name: 'Create Project' }).click();
      await colleague.page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
      const project = await testKnex()('projects').where({ workspace_id: workspaceId, name: 'Harbour View' }).first('id');
      expect(project).toBeDefined();
      await colleague.page.locator('input[type="file"]').first().setInputFiles({ name: 'harbour-view.jpg', mimeType: 'image/jpeg', buffer: await renderJpeg() });
      await colleague.page.getByRole('button', { name: 'Open render harbour-view.jpg' }).click();
      await colleague.page.getByRole('button', { name: 'Generate Clip' }).click();
      await colleague.page.getByRole('heading', { name: 'Generate Clip', level: 1 }).waitFor();
      await colleague.page.getByText('Drone Shot', { exact: true }).click();
      await colleague.page.getByText('Instagram', { exact: true }).click();
      await colleague.page.getByRole('button', { name: 'Generate Video' }).click();
      await colleague.page.getByRole('heading', { name: 'Your clip is ready for approval' }).waitFor({ timeout: 240_000 });
      const job = await testKnex()('video_generation_jobs').where({ workspace_id: workspaceId }).first('created_by');
      expect(job.created_by).toBe(colleagueId);

      // ---------- the owner's open Approvals view shows it without a reload ----------
      const fileName = 'harbour-view - Drone Shot (9x16).mp4';
      const save = owner.page.getByRole('button', { name: `Save ${CLIP_COST} credits: ${fileName}` });
      await save.waitFor({ timeout: 10_000 });
      expect(await owner.page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

      // ---------- a viewer sees the same queue with no way to decide, and no generate controls ----------
      const viewerEmail = `viewer-${tag}@example.test`;
      const viewerLink = await invitationByApi(owner.context, workspaceId, viewerEmail, 'viewer');
      // the viewer's account (verified) through the API: the colleague above signed up and verified in the browser
      const viewerUser = await createTestUser(app.baseUrl, { name: 'Vic Viewer', email: viewerEmail });
      const viewer = await newPage(size.viewport);
      await useSession({ context: viewer.context, baseUrl: app.baseUrl }, viewerUser.token);
      const viewerToken = new URL(viewerLink).searchParams.get('token')!;
      const accepted = await request<{ workspaceId: string }>(app.baseUrl, `/api/invitations/${viewerToken}/accept`, { method: 'POST', token: viewerUser.token });
      expect(accepted).toMatchObject({ status: 200, body: { workspaceId } });
      await viewer.page.goto(`/?workspace=${workspaceId}&view=approvals`);
      await viewer.page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
      await viewer.page.getByRole('button', { name: `Expand ${fileName}` }).waitFor();
      await viewer.page.getByText(`Your role in ${teamName} is Viewer`).first().waitFor();
      expect(await viewer.page.getByRole('button', { name: /^Save / }).count()).toBe(0);
      expect(await viewer.page.getByRole('button', { name: /^Reject / }).count()).toBe(0);
      await viewer.page.goto(`/?workspace=${workspaceId}&project=${project.id}`);
      await viewer.page.getByRole('heading', { name: 'Harbour View', level: 1 }).waitFor();
      await viewer.page.getByRole('button', { name: 'Open render harbour-view.jpg' }).click();
      const preview = viewer.page.getByRole('dialog', { name: 'harbour-view.jpg' });
      await preview.getByRole('button', { name: 'Download' }).waitFor();
      expect(await preview.getByRole('button', { name: 'Generate Clip' }).count()).toBe(0);
      expect(await preview.getByRole('button', { name: 'Edit with AI' }).count()).toBe(0);
      await preview.getByRole('button', { name: 'Close' }).click();
      expect(await viewer.page.getByRole('button', { name: 'Upload Images' }).count()).toBe(0);
      await openSidebar(viewer.page);
      await viewer.page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Projects' }).waitFor();
      expect(await viewer.page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: /Enhance Renders|Video Assembly/ }).count()).toBe(0);

      // the server refuses the viewer anyway, from the viewer's own page (session cookie, same origin), and nothing changes
      const pending = await testKnex()('pending_approvals').where({ workspace_id: workspaceId, status: 'pending' }).first('id');
      const render = await testKnex()('renders').where({ project_id: project.id }).first('id', 'file_url');
      const jobsBefore = await testKnex()('video_generation_jobs').where({ workspace_id: workspaceId }).count<{ count: string }[]>('* as count');
      const refused = await viewer.page.evaluate(
        async ({ workspaceId, approvalId, userId, projectId, render }) => {
          const call = async (path: string, body: unknown) => {
            const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Workspace-Id': workspaceId }, body: JSON.stringify(body) });
            return { status: res.status, body: (await res.json()) as { code?: string } };
          };
          return {
            approve: await call('/api/approvals/approve', { approvalId, userId }),
            generate: await call('/api/video-generation/start', {
              options: { imageUrl: render.file_url, movement: 'Zoom In', duration: 5, platform: 'YouTube' },
              context: { projectId, userId, renderId: render.id, isTemporaryImage: false },
            }),
          };
        },
        { workspaceId, approvalId: pending.id as string, userId: viewerUser.id, projectId: project.id as string, render: render as { id: string; file_url: string } },
      );
      expect(refused.approve).toMatchObject({ status: 403, body: { code: 'WORKSPACE_FORBIDDEN' } });
      expect(refused.generate).toMatchObject({ status: 403, body: { code: 'WORKSPACE_FORBIDDEN' } });
      expect((await testKnex()('pending_approvals').where({ id: pending.id }).first('status')).status).toBe('pending');
      expect(await testKnex()('video_generation_jobs').where({ workspace_id: workspaceId }).count<{ count: string }[]>('* as count')).toEqual(jobsBefore);

      // ---------- the owner approves; both see the shared balance drop by the clip's cost ----------
      await save.click();
      await owner.page.getByText('Saved successfully!').waitFor({ timeout: 30_000 });
      const expected = `${FUNDED_CREDITS - CLIP_COST} credits`;
      for (const page of [owner.page, colleague.page]) {
        await openSidebar(page);
        const credits = page.getByRole('region', { name: 'Credits' });
        await credits.getByText(expected, { exact: true }).waitFor({ timeout: 10_000 });
        await credits.getByText(/reserved for pending approvals/).waitFor({ state: 'detached', timeout: 10_000 });
      }
      const account = await testKnex()('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits');
      expect({ credits: Number(account.credits), reserved: Number(account.reserved_credits) }).toEqual({ credits: FUNDED_CREDITS - CLIP_COST, reserved: 0 });
      // the owner's personal credits are untouched
      expect(Number((await testKnex()('profiles').where({ id: ownerUser.id }).first('credits')).credits)).toBe(5);

      // spend per member: the clip's 4 credits were charged when the owner approved it: generated by the colleague,
      // approved by the owner; every member is listed
      await owner.page.goto(`/?workspace=${workspaceId}&view=account&tab=billing`);
      expect(await spendRows(owner.page, 'Cleo Colleague')).toEqual([
        ['Member', 'Generated', 'Approved'],
        ['Cleo Colleague', `${CLIP_COST}`, '0'],
        ['Olive Owner', '0', `${CLIP_COST}`],
        ['Vic Viewer', '0', '0'],
      ]);
      // the colleague (a member) is not offered to buy, is told whom to ask by name, and asks in one click: the
      // owner, looking at the app, is told at once
      await colleague.page.goto(`/?workspace=${workspaceId}&view=account&tab=billing`);
      await colleague.page.getByText(`Ask Olive Owner to buy credits for ${teamName}.`).waitFor();
      expect(await colleague.page.getByRole('button', { name: /^Buy credits/ }).count()).toBe(0);
      await colleague.page.getByRole('button', { name: 'Ask them for credits' }).click();
      await colleague.page.getByRole('status').filter({ hasText: 'We let Olive Owner know in the app.' }).waitFor();
      await owner.page.getByText(`Cleo Colleague asks for credits in ${teamName}.`).waitFor();

      // ---------- the owner removes the colleague: her clip stays on her row, as a former member ----------
      await owner.page.goto(`/?workspace=${workspaceId}&view=members`);
      await owner.page.getByRole('button', { name: 'Remove Cleo Colleague' }).click();
      await owner.page.getByRole('dialog', { name: 'Remove member?' }).getByRole('button', { name: 'Remove' }).click();
      await owner.page.getByText(`Cleo Colleague was removed from ${teamName}.`).waitFor();
      await owner.page.goto(`/?workspace=${workspaceId}&view=account&tab=billing`);
      expect(await spendRows(owner.page, 'Cleo Colleague (former member)')).toEqual([
        ['Member', 'Generated', 'Approved'],
        ['Cleo Colleague (former member)', `${CLIP_COST}`, '0'],
        ['Olive Owner', '0', `${CLIP_COST}`],
        ['Vic Viewer', '0', '0'],
      ]);
      await expectSpendFits(owner.page);
      await expectAxeClean(owner.page);
      await app.screenshot(`teams-spend-former-member-${size.name}`, owner.page);

      // her account deleted since (rows written as account deletion leaves them): one line for deleted accounts
      await testKnex()('users').where({ id: colleagueId }).delete();
      await owner.page.reload();
      expect(await spendRows(owner.page, 'Former member (deleted account)')).toEqual([
        ['Member', 'Generated', 'Approved'],
        ['Former member (deleted account)', `${CLIP_COST}`, '0'],
        ['Olive Owner', '0', `${CLIP_COST}`],
        ['Vic Viewer', '0', '0'],
      ]);
      await expectSpendFits(owner.page);

      expect([...owner.errors, ...colleague.errors, ...viewer.errors]).toEqual([]);
    }, 420_000);
  }

  /** The spend per member table as text, header first, once the row starting with `waitForName` shows. */
  async function spendRows(page: Page, waitForName: string): Promise<string[][]> {
    const table = page.getByRole('region', { name: 'Spend per member' }).getByRole('table');
    await table.getByRole('rowheader', { name: waitForName, exact: true }).waitFor();
    return table.getByRole('row').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())));
  }

  /** The table, its column headers and every row fit the panel: nothing scrolls sideways, no column is cut. */
  async function expectSpendFits(page: Page): Promise<void> {
    const spend = page.getByRole('region', { name: 'Spend per member' });
    const panel = (await spend.boundingBox())!;
    for (const header of ['Member', 'Generated', 'Approved']) {
      const box = (await spend.getByRole('columnheader', { name: header, exact: true }).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(panel.x);
      expect(box.x + box.width).toBeLessThanOrEqual(panel.x + panel.width);
    }
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  }

  /** Invites through the API with the owner's session (the browser path is covered above). */
  async function invitationByApi(ownerContext: BrowserContext, workspaceId: string, email: string, role: 'viewer' | 'member' | 'admin'): Promise<string> {
    const token = await sessionTokenOf(ownerContext, app.baseUrl);
    const res = await request<{ link: string }>(app.baseUrl, `/api/workspaces/${workspaceId}/invitations`, { token, json: { email, role } });
    if (res.status !== 201) throw new Error(`invitation answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.link;
  }
});
