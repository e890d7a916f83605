/**
 * Comments in the browser (issue 42 items 1 and 7), at 1440x900 and 390x844, with three people in separate browser
 * contexts of one team workspace:
 * - the viewer opens a render in the library, pins a comment to a point of the picture (mouse), mentions the member
 *   from the list that "@" opens (keyboard), and posts; an attempt at HTML shows as text and runs nothing;
 * - the member, with the same render open, sees the thread arrive live, replies with a link (a safe link), and
 *   resolves the thread; the viewer sees it resolved live, under "Show resolved";
 * - the owner, in Approvals, opens a pending image and pins a comment with the keyboard (arrow keys, Enter).
 * axe finds nothing serious in the dialog: empty, with the mention list open, with threads, with a resolved thread.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
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
  team = await createTeamWithRoles(app.baseUrl, { name: 'Harbour Review' });
  await testKnex()('profiles').where({ id: team.id }).update({ credits: 20 });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await app?.close();
  await closeTestKnex();
});

async function picture(color: { r: number; g: number; b: number }): Promise<Buffer> {
  return sharp({ create: { width: 480, height: 270, channels: 3, background: color } }).png().toBuffer();
}

async function uploadRender(projectId: string, name: string): Promise<string> {
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await picture({ r: 200, g: 180, b: 150 }))], { type: 'image/png' }), name);
  const res = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { token: team.member.token, body: form });
  expect(res.status).toBe(200);
  return res.body.render.data.id;
}

for (const size of SIZES) {
  it(`viewer pins and mentions, member replies live and resolves, owner pins by keyboard in Approvals (${size.name})`, async () => {
    const tag = randomUUID().slice(0, 6);
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: team.owner.token, headers: inWorkspace(team.id), json: { name: `Review ${tag}` } });
    const projectId = project.body.project.id;
    const renderName = `facade-${tag}.png`;
    await uploadRender(projectId, renderName);
    const member = await profileName(team.member);

    const viewer = await pageAs(app, team.viewer, size.viewport, contexts);
    const colleague = await pageAs(app, team.member, size.viewport, contexts);
    for (const { page } of [viewer, colleague]) {
      await page.goto(`/?workspace=${team.id}&project=${projectId}`);
      await page.getByRole('button', { name: `Open render ${renderName}` }).click();
    }
    const viewerDialog = viewer.page.getByRole('dialog', { name: renderName });
    const memberDialog = colleague.page.getByRole('dialog', { name: renderName });
    await viewerDialog.getByText('No comments yet.', { exact: false }).waitFor();
    await memberDialog.getByText('No comments yet.', { exact: false }).waitFor();
    await expectAxeClean(viewer.page);

    // ---------- the viewer pins a point with the mouse ----------
    await viewerDialog.getByRole('button', { name: 'Pin to picture' }).click();
    const capture = viewerDialog.getByRole('application');
    const box = (await capture.boundingBox())!;
    await viewer.page.mouse.click(box.x + box.width * 0.25, box.y + box.height * 0.5);
    await viewerDialog.getByText(/Point at 2\d% across, 5\d% down/).waitFor();

    // ---------- and mentions the member from the list "@" opens, with the keyboard ----------
    const field = viewerDialog.getByRole('combobox', { name: 'Add a comment' });
    await field.click();
    await field.pressSequentially(`The rail looks bent @${member.slice(0, 3)}`);
    const mentions = viewerDialog.getByRole('listbox', { name: 'Members to mention' });
    await mentions.getByRole('option', { name: new RegExp(member) }).waitFor();
    await expectAxeClean(viewer.page);
    await field.press('Enter');
    await mentions.waitFor({ state: 'hidden' });
    expect(await field.inputValue()).toBe(`The rail looks bent @${member} `);
    await field.pressSequentially('can you check?');
    await viewerDialog.getByRole('button', { name: 'Comment', exact: true }).click();
    const firstThread = viewerDialog.locator('.review-thread').first();
    await firstThread.getByText('can you check?', { exact: false }).waitFor();
    expect(await firstThread.locator('.comment-mention').innerText()).toBe(`@${member}`);
    await viewerDialog.getByRole('button', { name: /^Comment 1: Point at/ }).waitFor();

    // ---------- HTML is shown as text and runs nothing ----------
    await field.fill('<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>');
    await viewerDialog.getByRole('button', { name: 'Comment', exact: true }).click();
    await viewerDialog.getByText('<img src=x onerror="window.__xss=1">', { exact: false }).waitFor();
    expect(await viewer.page.evaluate('window.__xss')).toBeUndefined();
    expect(await viewerDialog.locator('.comment-text img, .comment-text script').count()).toBe(0);

    // ---------- the member sees both live, replies with a link, and resolves the first ----------
    const memberThread = memberDialog.locator('.review-thread').filter({ hasText: 'can you check?' });
    await memberThread.waitFor();
    await memberDialog.getByRole('button', { name: /^Comment 1: Point at/ }).waitFor();
    await memberThread.getByRole('button', { name: 'Reply to comment 1' }).click();
    const replyField = memberThread.getByRole('combobox', { name: 'Reply to comment 1' });
    await replyField.fill('Fixed in the next version, see https://example.com/rail.');
    await memberThread.getByRole('button', { name: 'Reply', exact: true }).click();
    const link = memberThread.getByRole('link', { name: 'https://example.com/rail' });
    await link.waitFor();
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow ugc');
    expect(await link.getAttribute('href')).toBe('https://example.com/rail');
    await viewerDialog.locator('.review-thread').first().getByRole('link', { name: 'https://example.com/rail' }).waitFor();
    await expectAxeClean(colleague.page);
    await memberThread.getByRole('button', { name: 'Resolve comment 1' }).click();
    await memberDialog.getByRole('button', { name: 'Show resolved (1)' }).waitFor();
    // the viewer's list follows: the thread moves under "Show resolved", its pin goes grey
    await viewerDialog.getByRole('button', { name: 'Show resolved (1)' }).click();
    await viewerDialog.getByText(`Resolved by ${member}`).waitFor();
    await expectAxeClean(viewer.page);
    expect(viewer.errors.concat(colleague.errors)).toEqual([]);

    // ---------- the owner pins a comment with the keyboard on a pending item in Approvals ----------
    const pendingName = `dusk-${tag}.png`;
    await storeGeneratedItem({ workspaceId: team.id, projectId, createdBy: team.member.id, metadata: imageMetadata('/api/files/renders/x.png'), fileName: pendingName, pendingOnly: true });
    const owner = await pageAs(app, team.owner, size.viewport, contexts);
    await owner.page.goto(`/?workspace=${team.id}&view=approvals`);
    await owner.page.getByRole('button', { name: `Expand ${pendingName}` }).click();
    const approval = owner.page.getByRole('dialog', { name: pendingName });
    await approval.getByText('No comments yet.', { exact: false }).waitFor();
    await approval.getByRole('button', { name: 'Pin to picture' }).click();
    const keys = approval.getByRole('application');
    await keys.focus();
    for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowDown']) await owner.page.keyboard.press(key);
    await owner.page.keyboard.press('Enter');
    await approval.getByText('Point at 56% across, 52% down', { exact: false }).waitFor();
    await approval.getByRole('combobox', { name: 'Add a comment' }).fill('Warmer sky, please');
    await approval.getByRole('button', { name: 'Comment', exact: true }).click();
    await approval.getByRole('button', { name: 'Comment 1: Point at 56% across, 52% down' }).waitFor();
    await approval.getByRole('button', { name: /^Save/ }).waitFor();
    await expectAxeClean(owner.page);
    await app.screenshot(`comments-approval-${size.name}`, owner.page);
    expect(owner.errors).toEqual([]);
  }, 180_000);
}
