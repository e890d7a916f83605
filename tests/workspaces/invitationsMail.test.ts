/**
 * The invitation e-mail over a real SMTP server (PyPI's aiosmtpd, installed by scripts/lib/tools.js on first use):
 * with SMTP_URL set, inviting sends one message to the invited address whose subject names the inviter and the
 * workspace and whose text carries the role and the very link the API answered; the link in the e-mail accepts the
 * invitation. An SMTP server that cannot be reached never fails the invitation: it is created, `emailed: false`.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { closedPort, request, serve, type TestServer } from '../support/http';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { createTeamWorkspace } from '../support/workspaces';

let knex: Knex;
let smtp: SmtpServer;
let server: TestServer;
let deadServer: TestServer;
let config: AppConfig;

beforeAll(async () => {
  knex = testKnex();
  smtp = await startSmtpServer();
  config = { ...loadConfig(), smtpUrl: smtp.url, smtpFrom: 'Render Studio <invites@render-studio.test>' };
  server = await serve(createApp({ config, knex, logger }));
  deadServer = await serve(createApp({ config: { ...config, smtpUrl: `smtp://127.0.0.1:${await closedPort()}` }, knex, logger }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  await deadServer?.close();
  await smtp?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

describe('invitation e-mail', () => {
  it('is sent to the invited address with the workspace, inviter, role and the link, and that link accepts', async () => {
    const owner = await createTestUser(server.baseUrl, { name: 'Priya Patel' });
    const team = await createTeamWorkspace(server.baseUrl, { owner, name: 'Harbour Homes' });
    const invitee = await createTestUser(server.baseUrl);
    const res = await request<{ link: string; emailed: boolean }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, {
      token: owner.token,
      json: { email: invitee.email, role: 'admin' },
    });
    expect(res.status).toBe(201);
    expect(res.body.emailed).toBe(true);

    const mail = await smtp.next((m) => m.to.includes(invitee.email));
    expect(mail.to).toBe(invitee.email);
    expect(mail.from).toBe('Render Studio <invites@render-studio.test>');
    expect(mail.subject).toBe('Priya Patel invited you to Harbour Homes on Render Studio');
    expect(mail.text).toContain('join the workspace "Harbour Homes" on Render Studio as an Admin');
    const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
    expect(links).toEqual([res.body.link]);
    expect(links[0]).toMatch(/\/\?view=invite&token=[A-Za-z0-9_-]{43}$/);

    const token = new URL(links[0] ?? '').searchParams.get('token')!;
    const accepted = await request(server.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: invitee.token });
    expect(accepted.status).toBe(200);
    expect((await knex('workspace_members').where({ workspace_id: team.id, user_id: invitee.id }).first('role')).role).toBe('admin');
  });

  it('an unreachable SMTP server does not fail the invitation: it is created and answers emailed: false', async () => {
    const team = await createTeamWorkspace(deadServer.baseUrl);
    const email = `unmailed-${Date.now()}@example.test`;
    const res = await request<{ link: string; emailed: boolean; invitation: { id: string; status: string } }>(deadServer.baseUrl, `/api/workspaces/${team.id}/invitations`, {
      token: team.owner.token,
      json: { email, role: 'viewer' },
    });
    expect(res.status).toBe(201);
    expect(res.body.emailed).toBe(false);
    expect(res.body.invitation.status).toBe('pending');
    expect(await knex('workspace_invitations').where({ id: res.body.invitation.id }).first('email')).toEqual({ email });
    const token = new URL(res.body.link).searchParams.get('token')!;
    expect((await request(deadServer.baseUrl, `/api/invitations/${token}`)).status).toBe(200);
    expect(smtp.messages.some((m) => m.to.includes(email))).toBe(false);
  });
});
