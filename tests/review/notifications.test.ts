/**
 * Notifications (issue 42, acceptance 6): who is told what, in the workspace, never the person who did it and never
 * someone who is no longer a member; read and marked read per person; each person's choice of e-mail. Real API,
 * PostgreSQL, Temporal and workers.
 */
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { buyCredits, startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, inTeam, seedTeamImage, teamProject, type Team } from '../workspaces/creditsFixtures';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';

let h: Harness;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let viewer: TestUser;
let team: Team;
let projectId: string;
let smtp: SmtpServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  h = await startHarness('notifications', { config: { smtpUrl: smtp.url, smtpFrom: 'Render Studio <notify@render-studio.test>' } });
  [owner, admin, member, viewer] = await Promise.all(['Olivia Owner', 'Adam Admin', 'Mia Member', 'Vic Viewer'].map((name) => createTestUser(h.baseUrl, { name })));
  team = await createTeam(h.knex, owner, [
    [admin, 'admin'],
    [member, 'member'],
    [viewer, 'viewer'],
  ], 30);
  projectId = await teamProject(h.knex, team.id);
  await buyCredits(h.knex, team.id, 1);
});

afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await closeTestKnex();
});

async function bell(user: TestUser): Promise<{ unread: number; notifications: Array<{ id: string; kind: string; text: string; read: boolean; item: { kind: string; id: string } | null; by: { name: string } | null }> }> {
  const res = await request(h.baseUrl, '/api/notifications', { token: user.token, headers: inTeam(team.id) });
  expect(res.status).toBe(200);
  return res.body as never;
}

async function kinds(user: TestUser): Promise<string[]> {
  return (await bell(user)).notifications.map((n) => n.kind);
}

async function readAll(user: TestUser): Promise<void> {
  const res = await request(h.baseUrl, '/api/notifications/read', { token: user.token, headers: inTeam(team.id), json: {} });
  expect(res.status).toBe(200);
}

describe('notifications', () => {
  it('asks the approvers, tells the starter of comments and decisions, the mentioned and the earlier authors of replies', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    // "your approval is needed": everyone who may approve but the member who started it
    const ownerBell = await bell(owner);
    expect(ownerBell.unread).toBe(1);
    expect(ownerBell.notifications[0]).toMatchObject({ kind: 'approval_needed', text: 'Your approval is needed: team - AI edit.jpg', read: false, item: { kind: 'approval', id: item.approvalId } });
    expect(await kinds(admin)).toEqual(['approval_needed']);
    expect(await kinds(member)).toEqual([]);
    expect(await kinds(viewer)).toEqual([]);

    // a viewer's comment mentioning the owner: the owner is mentioned, the starter hears of a comment
    const opened = await request(h.baseUrl, `/api/content/${item.approvalId}/comments`, { token: viewer.token, headers: inTeam(team.id), json: { body: 'Too dark here, @Olivia Owner?' } });
    expect(opened.status).toBe(201);
    const threadId = opened.body.thread.id as string;
    expect((await bell(owner)).notifications[0]).toMatchObject({ kind: 'mention', text: 'Vic Viewer mentioned you on team - AI edit.jpg', by: { name: 'Vic Viewer' } });
    expect(await kinds(member)).toEqual(['comment']);
    expect((await bell(member)).notifications[0].text).toBe('Vic Viewer commented on team - AI edit.jpg, which you started');
    expect(await kinds(viewer)).toEqual([]);

    // the owner replies: the viewer (who wrote before in the thread) hears of the reply; the owner is never told of their own
    const replied = await request(h.baseUrl, `/api/comments/threads/${threadId}/replies`, { token: owner.token, headers: inTeam(team.id), json: { body: 'Brighter in the next one' } });
    expect(replied.status).toBe(201);
    expect(await kinds(viewer)).toEqual(['reply']);
    expect((await bell(viewer)).notifications[0].text).toBe('Olivia Owner replied to your comment on team - AI edit.jpg');
    expect(await kinds(owner)).toEqual(['mention', 'approval_needed']);
    expect(await kinds(member)).toEqual(['comment', 'comment']);

    // the owner approves: the starter is told, with the saved item to open
    const approved = await request(h.baseUrl, '/api/approvals/approve', { token: owner.token, headers: inTeam(team.id), json: { approvalId: item.approvalId } });
    expect(approved.status).toBe(200);
    const decision = (await bell(member)).notifications[0];
    expect(decision).toMatchObject({ kind: 'decision', text: 'Olivia Owner approved team - AI edit.jpg, which you started', item: { kind: 'image', id: approved.body.contentId } });

    // a rejection too; and deciding one's own item tells nobody
    const rejectedItem = await seedTeamImage(h, team.id, projectId, member);
    expect((await request(h.baseUrl, '/api/approvals/reject', { token: admin.token, headers: inTeam(team.id), json: { approvalId: rejectedItem.approvalId } })).status).toBe(200);
    expect((await bell(member)).notifications[0].text).toMatch(/^Adam Admin rejected team - AI edit( \(\d+\))?\.jpg, which you started$/);
    const own = await seedTeamImage(h, team.id, projectId, member);
    const before = (await bell(member)).notifications.length;
    expect((await request(h.baseUrl, '/api/approvals/approve', { token: member.token, headers: inTeam(team.id), json: { approvalId: own.approvalId } })).status).toBe(200);
    expect((await bell(member)).notifications.length).toBe(before);
  });

  it('marks read, all or the ones named, for the caller only', async () => {
    await seedTeamImage(h, team.id, projectId, member);
    const list = await bell(admin);
    expect(list.unread).toBeGreaterThan(0);
    const one = list.notifications.find((n) => !n.read)!;
    const marked = await request(h.baseUrl, '/api/notifications/read', { token: admin.token, headers: inTeam(team.id), json: { ids: [one.id] } });
    expect(marked.body).toEqual({ success: true, marked: 1 });
    expect((await bell(admin)).unread).toBe(list.unread - 1);
    // someone else's ids change nothing
    expect((await request(h.baseUrl, '/api/notifications/read', { token: owner.token, headers: inTeam(team.id), json: { ids: list.notifications.map((n) => n.id) } })).body.marked).toBe(0);
    await readAll(admin);
    expect((await bell(admin)).unread).toBe(0);
    expect((await bell(owner)).unread).toBeGreaterThan(0);
    expect((await request(h.baseUrl, '/api/notifications/read', { token: admin.token, headers: inTeam(team.id), json: { ids: 'all' } })).status).toBe(400);
    const stranger = await createTestUser(h.baseUrl);
    expect((await request(h.baseUrl, '/api/notifications', { token: stranger.token, headers: inTeam(team.id) })).status).toBe(404);
  });

  it('tells nobody who has left the workspace', async () => {
    const leaver = await createTestUser(h.baseUrl, { name: 'Lee Leaver' });
    await h.knex('workspace_members').insert({ workspace_id: team.id, user_id: leaver.id, role: 'member' });
    await seedTeamImage(h, team.id, projectId, member);
    const asked = (await h.knex('notifications').where({ user_id: leaver.id, kind: 'approval_needed' }).count<{ count: string }[]>('* as count'))[0].count;
    expect(asked).toBe('1');
    const removed = await request(h.baseUrl, `/api/workspaces/${team.id}/members/${leaver.id}`, { method: 'DELETE', token: owner.token });
    expect(removed.status).toBe(200);
    await seedTeamImage(h, team.id, projectId, member);
    expect((await h.knex('notifications').where({ user_id: leaver.id }).count<{ count: string }[]>('* as count'))[0].count).toBe('1');
  });

  it("keeps each person's choice of notification e-mail", async () => {
    const read = await request(h.baseUrl, '/api/profile/notifications', { token: viewer.token });
    expect(read.body).toEqual({ success: true, email: 'each' });
    const set = await request(h.baseUrl, '/api/profile/notifications', { method: 'PUT', token: viewer.token, json: { email: 'digest' } });
    expect(set.body).toEqual({ success: true, email: 'digest' });
    expect((await request(h.baseUrl, '/api/profile/notifications', { token: viewer.token })).body.email).toBe('digest');
    expect((await request(h.baseUrl, '/api/profile/notifications', { token: owner.token })).body.email).toBe('each');
    const bad = await request(h.baseUrl, '/api/profile/notifications', { method: 'PUT', token: viewer.token, json: { email: 'hourly' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('email must be one of each, digest, none');
  });

  it('e-mails each notification to who chose it, with a link that turns them off without signing in', async () => {
    await request(h.baseUrl, '/api/profile/notifications', { method: 'PUT', token: viewer.token, json: { email: 'each' } });
    const item = await seedTeamImage(h, team.id, projectId, member);
    const opened = await request(h.baseUrl, `/api/content/${item.approvalId}/comments`, { token: viewer.token, headers: inTeam(team.id), json: { body: 'Can the lamp go?' } });
    expect(opened.status).toBe(201);
    const threadId = opened.body.thread.id as string;
    expect((await request(h.baseUrl, `/api/comments/threads/${threadId}/replies`, { token: owner.token, headers: inTeam(team.id), json: { body: 'Yes, next version' } })).status).toBe(201);

    const mail = await smtp.next((m) => m.to.includes(viewer.email) && m.subject.startsWith('Olivia Owner replied'));
    expect(mail.subject).toBe(`Olivia Owner replied to your comment on team - AI edit.jpg (${(await h.knex('workspaces').where({ id: team.id }).first('name')).name})`);
    expect(mail.from).toBe('Render Studio <notify@render-studio.test>');
    const link = (mail.text.match(/https?:\/\/\S+\/api\/notifications\/unsubscribe\S+/) ?? [])[0];
    expect(link).toBeDefined();

    // a forged link changes nothing; the real one turns the e-mails off, with no session
    // the link is the configured public address's; the test's API listens elsewhere
    const local = (href: string) => new URL(new URL(href).pathname + new URL(href).search, h.baseUrl);
    expect(link!.startsWith(`${h.config.publicUrl}/api/notifications/unsubscribe?user=${viewer.id}&sig=`)).toBe(true);
    const forged = await fetch(local(link!.replace(/sig=[^&]+/, 'sig=forged')));
    expect(forged.status).toBe(400);
    expect((await h.knex('users').where({ id: viewer.id }).first('notification_email')).notification_email).toBe('each');
    const off = await fetch(local(link!));
    expect(off.status).toBe(200);
    expect(await off.text()).toContain('You will get no more notification e-mails');
    expect((await h.knex('users').where({ id: viewer.id }).first('notification_email')).notification_email).toBe('none');

    // the next reply: the starter's e-mail goes out, the viewer's notification stays in the bell only
    expect((await request(h.baseUrl, `/api/comments/threads/${threadId}/replies`, { token: owner.token, headers: inTeam(team.id), json: { body: 'Done' } })).status).toBe(201);
    // the sender claimed that reply's notifications once the starter's is claimed (one update claims them all)
    const reply = await h.knex('comments').where({ thread_id: threadId, body: 'Done' }).first('created_at');
    for (let i = 0; ; i += 1) {
      const starters = await h.knex('notifications').where({ user_id: member.id, thread_id: threadId }).where('created_at', '>=', reply.created_at).whereNotNull('emailed_at');
      if (starters.length > 0) break;
      if (i > 200) throw new Error("the starter's notification was never e-mailed");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const latest = await h.knex('notifications').where({ user_id: viewer.id, kind: 'reply' }).orderBy('created_at', 'desc').first('emailed_at');
    expect(latest.emailed_at).toBeNull();
  });
});
