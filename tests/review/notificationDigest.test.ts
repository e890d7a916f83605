/**
 * The daily notification digest (issue 42, acceptance 6): people who chose `digest` get one message listing their
 * unsent notifications by workspace once the oldest is a day old, at most one a day; nothing of a workspace they
 * left; people who chose `each` or `none` get no digest. Run as the schedule runs it: the digest workflow on a real
 * worker, with a real SMTP server.
 */
import { randomUUID } from 'node:crypto';
import { notificationDigestWorkflow } from '../../workflows';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, type Team } from '../workspaces/creditsFixtures';

let h: Harness;
let smtp: SmtpServer;
let owner: TestUser;
let digester: TestUser;
let eachOne: TestUser;
let team: Team;
let left: Team;

beforeAll(async () => {
  smtp = await startSmtpServer();
  h = await startHarness('digest', { config: { smtpUrl: smtp.url, smtpFrom: 'Render Studio <notify@render-studio.test>' } });
  [owner, digester, eachOne] = await Promise.all(['Olivia Owner', 'Dana Digest', 'Eli Each'].map((name) => createTestUser(h.baseUrl, { name })));
  team = await createTeam(h.knex, owner, [
    [digester, 'member'],
    [eachOne, 'member'],
  ], 0);
  left = await createTeam(h.knex, owner, [[digester, 'member']], 0);
  await h.knex('users').where({ id: digester.id }).update({ notification_email: 'digest' });
});

afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await closeTestKnex();
});

async function note(user: TestUser, workspaceId: string, text: string, hoursAgo: number): Promise<string> {
  const id = randomUUID();
  await h.knex('notifications').insert({ id, workspace_id: workspaceId, user_id: user.id, kind: 'mention', text, created_by: owner.id, created_at: new Date(Date.now() - hoursAgo * 3_600_000) });
  return id;
}

function runDigest(): Promise<{ sent: number }> {
  return h.client.workflow.execute(notificationDigestWorkflow, { taskQueue: h.queues.generation, workflowId: `digest-${randomUUID()}` });
}

describe('notification digest', () => {
  it('waits until the oldest unsent is a day old, then sends one message listing them, once', async () => {
    await note(digester, team.id, 'Olivia Owner mentioned you on dusk.jpg', 3);
    expect(await runDigest()).toEqual({ sent: 0 });

    const oldest = await note(digester, team.id, 'Olivia Owner mentioned you on dawn.jpg', 25);
    await note(digester, left.id, 'Olivia Owner mentioned you on gone.jpg', 24.5);
    await note(eachOne, team.id, 'Olivia Owner mentioned you on each.jpg', 30);
    // the digester left the second workspace: nothing of it is sent
    await h.knex('workspace_members').where({ workspace_id: left.id, user_id: digester.id }).delete();

    expect(await runDigest()).toEqual({ sent: 1 });
    const mail = await smtp.next((m) => m.to.includes(digester.email));
    expect(mail.subject).toBe('Render Studio: 2 notifications');
    expect(mail.text).toContain('- Olivia Owner mentioned you on dawn.jpg');
    expect(mail.text).toContain('- Olivia Owner mentioned you on dusk.jpg');
    expect(mail.text.indexOf('dawn.jpg')).toBeLessThan(mail.text.indexOf('dusk.jpg'));
    expect(mail.text).not.toContain('gone.jpg');
    expect(mail.text).toMatch(/\/api\/notifications\/unsubscribe\?user=[0-9a-f-]+&sig=\S+/);
    expect((await h.knex('notifications').where({ id: oldest }).first('emailed_at')).emailed_at).not.toBeNull();
    // the `each` person's notification is not the digest's to send
    expect((await h.knex('notifications').where({ user_id: eachOne.id }).first('emailed_at')).emailed_at).toBeNull();

    // at most one a day: what came since waits for its own day
    await note(digester, team.id, 'Olivia Owner mentioned you on noon.jpg', 1);
    expect(await runDigest()).toEqual({ sent: 0 });
  });
});
