/**
 * A member who cannot buy asks the workspace's owners and admins for credits (issue 41, item 3): they are told in
 * their open apps (the realtime event, recorded like every other) and, over a real SMTP server (aiosmtpd), by one
 * e-mail naming the member and the workspace with the way to Billing. An owner or admin is told to buy themself; a
 * non-member finds no workspace; a fourth ask within the hour is refused with 429.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { WORKSPACE_MSG } from '../../domain/workspaceRoles';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { createTeamWithRoles, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let smtp: SmtpServer;
let server: TestServer;
let team: TeamWithRoles;

beforeAll(async () => {
  knex = testKnex();
  smtp = await startSmtpServer();
  const config = { ...loadConfig(), smtpUrl: smtp.url, smtpFrom: 'Render Studio <team@render-studio.test>' };
  server = await serve(createApp({ config, knex, logger }));
  team = await createTeamWithRoles(server.baseUrl, { name: 'Harbour Team' });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await smtp?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

const ask = (token: string, workspaceId = team.id) => request<Record<string, unknown>>(server.baseUrl, `/api/workspaces/${workspaceId}/credit-requests`, { method: 'POST', token });

it("tells the owners and admins in the app and by e-mail, and answers whom it told", async () => {
  const res = await ask(team.member.token);
  expect(res.status).toBe(200);
  const askedOf = [
    { name: team.owner.name, role: 'owner' },
    { name: team.admin.name, role: 'admin' },
  ];
  expect(res.body).toEqual({ success: true, askedOf, emailed: true, message: WORKSPACE_MSG.buyersAsked([team.owner.name, team.admin.name], true) });
  const mail = await smtp.next((m) => m.subject.includes('asks for credits'));
  expect(mail.to).toContain(team.owner.email);
  expect(mail.to).toContain(team.admin.email);
  expect(mail.subject).toBe(`${team.member.name} asks for credits in Harbour Team on Render Studio`);
  expect(mail.text).toContain('/?view=account&tab=billing');
  const events = (await knex('user_events').where({ workspace_id: team.id }).orderBy('id', 'desc').limit(5).select('payload')) as Array<{ payload: Record<string, unknown> }>;
  expect(events.map((e) => e.payload)).toContainEqual({ kind: 'workspace', change: 'credit-request', workspaceId: team.id, requestedBy: team.member.name });
});

it('a viewer may ask too; an owner or admin is told to buy, a non-member finds nothing', async () => {
  expect((await ask(team.viewer.token)).status).toBe(200);
  for (const buyer of [team.owner, team.admin]) {
    const res = await ask(buyer.token);
    expect({ status: res.status, body: res.body }).toEqual({ status: 409, body: { success: false, error: WORKSPACE_MSG.canBuyYourself, code: 'CAN_BUY_YOURSELF' } });
  }
  expect((await ask(team.outsider.token)).status).toBe(404);
});

it('three asks an hour per person, then 429 with Retry-After', async () => {
  // the member asked once above
  expect((await ask(team.member.token)).status).toBe(200);
  expect((await ask(team.member.token)).status).toBe(200);
  const refused = await ask(team.member.token);
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', error: expect.stringMatching(/^Too many requests for credits\. Please try again in \d+ minutes?\.$/) });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
});
