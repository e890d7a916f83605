/**
 * The budgets of domain/actionLimits.ts on their routes (issue 41, item 7): invitations per person and per
 * workspace, invitation look-ups per address, accepts per person, test events per workspace and new workspaces per
 * person. Over a budget: 429, Retry-After and a message that says when; nothing is created; a refusal spends no other
 * budget. The default budgets are checked where a run of them is cheap (invitations: an audit sent 40 in a row);
 * the rest run on small budgets under a key prefix of this file's own.
 */
import { randomUUID } from 'node:crypto';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ACTION_LIMITS, type ActionLimit, type LimitedAction } from '../../domain/actionLimits';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type JsonResponse, type TestServer } from '../support/http';
import { createTeamWorkspace, invite } from '../support/workspaces';

const servers: TestServer[] = [];

async function startApp(limits?: Partial<Record<LimitedAction, ActionLimit>>): Promise<TestServer> {
  const actionLimits = { keyPrefix: `t${randomUUID().slice(0, 8)}`, limits: { ...ACTION_LIMITS, ...limits } };
  const started = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, actionLimits }));
  servers.push(started);
  return started;
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeTemporalClient();
  await closeTestKnex();
});

function expectLimited(res: JsonResponse<unknown>, what: string, maxSeconds: number): void {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ success: false, code: 'RATE_LIMITED', error: expect.stringMatching(new RegExp(`^Too many ${what}\\. Please try again in \\d+ (second|minute|hour)s?\\.$`)) });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
}

const email = () => `invitee-${randomUUID().slice(0, 12)}@example.test`;

it(`invitations: ${ACTION_LIMITS.invite.rules.person!.points} an hour per person by default, then 429, and the refused one is not created`, async () => {
  const server = await startApp();
  const team = await createTeamWorkspace(server.baseUrl);
  const budget = ACTION_LIMITS.invite.rules.person!.points;
  for (let i = 0; i < budget; i += 1) await invite(server.baseUrl, team.id, team.owner, email(), 'member');
  const refused = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token, json: { email: email(), role: 'member' } });
  expectLimited(refused, 'invitations sent', 3600);
  expect(refused.body).toMatchObject({ error: 'Too many invitations sent. Please try again in 60 minutes.' });
  const listed = await request<{ invitations: unknown[] }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token });
  expect(listed.body.invitations).toHaveLength(budget);
});

it('invitations: the workspace budget holds across its admins, and a refused one spends nobody’s own budget', async () => {
  const server = await startApp({ invite: { what: 'invitations sent', rules: { person: { points: 3, durationSeconds: 3600 }, workspace: { points: 4, durationSeconds: 86_400 } } } });
  const team = await createTeamWorkspace(server.baseUrl);
  const other = await createTeamWorkspace(server.baseUrl);
  const admin = await createTestUser(server.baseUrl);
  const { token } = await invite(server.baseUrl, team.id, team.owner, admin.email, 'admin');
  expect((await request(server.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: admin.token })).status).toBe(200);
  // owner: 1 (the admin's) + 2 = 3 of their own; the admin: 1; the workspace: 4
  for (let i = 0; i < 2; i += 1) await invite(server.baseUrl, team.id, team.owner, email(), 'member');
  await invite(server.baseUrl, team.id, admin, email(), 'member');
  expectLimited(await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: admin.token, json: { email: email(), role: 'member' } }), 'invitations sent', 86_400);
  // the admin's refused invitation did not spend their own budget: in another workspace they still have 2
  const { token: otherToken } = await invite(server.baseUrl, other.id, other.owner, admin.email, 'admin');
  expect((await request(server.baseUrl, `/api/invitations/${otherToken}/accept`, { method: 'POST', token: admin.token })).status).toBe(200);
  await invite(server.baseUrl, other.id, admin, email(), 'member');
  await invite(server.baseUrl, other.id, admin, email(), 'member');
  expectLimited(await request(server.baseUrl, `/api/workspaces/${other.id}/invitations`, { token: admin.token, json: { email: email(), role: 'member' } }), 'invitations sent', 3600);
});

it('invitation look-ups per address and accepts per person', async () => {
  const server = await startApp({
    invitationLookup: { what: 'invitation links opened', rules: { address: { points: 3, durationSeconds: 600 } } },
    invitationAccept: { what: 'invitation accepts', rules: { person: { points: 2, durationSeconds: 3600 } } },
  });
  const team = await createTeamWorkspace(server.baseUrl);
  const joiner = await createTestUser(server.baseUrl);
  const { token } = await invite(server.baseUrl, team.id, team.owner, joiner.email, 'member');
  for (let i = 0; i < 3; i += 1) expect((await request(server.baseUrl, `/api/invitations/${token}`)).status).toBe(200);
  expectLimited(await request(server.baseUrl, `/api/invitations/${token}`), 'invitation links opened', 600);
  expectLimited(await request(server.baseUrl, `/api/invitations/${'x'.repeat(43)}`), 'invitation links opened', 600);
  // accepting the same link again answers as before (it is already theirs), and counts
  for (let i = 0; i < 2; i += 1) expect((await request(server.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: joiner.token })).status).toBe(200);
  expectLimited(await request(server.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: joiner.token }), 'invitation accepts', 3600);
});

it('"Send test event": per workspace, then 429 and no delivery recorded', async () => {
  const server = await startApp({ webhookTest: { what: 'test events sent', rules: { workspace: { points: 2, durationSeconds: 600 } } } });
  const team = await createTeamWorkspace(server.baseUrl);
  const created = await request<{ endpoint: { id: string } }>(server.baseUrl, `/api/workspaces/${team.id}/webhooks`, { token: team.owner.token, json: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['job.completed'] } });
  expect(created.status).toBe(201);
  const test = () => request(server.baseUrl, `/api/workspaces/${team.id}/webhooks/${created.body.endpoint.id}/test`, { token: team.owner.token, method: 'POST' });
  for (let i = 0; i < 2; i += 1) expect((await test()).status).toBe(202);
  expectLimited(await test(), 'test events sent', 600);
  const deliveries = await testKnex()('webhook_deliveries').where({ endpoint_id: created.body.endpoint.id }).count<{ n: string }[]>('* as n');
  expect(deliveries).toEqual([{ n: '2' }]);
});

it(`new workspaces: ${ACTION_LIMITS.workspaceCreate.rules.person!.points} a day per person by default, then 429 and none created`, async () => {
  const server = await startApp();
  const user = await createTestUser(server.baseUrl);
  const budget = ACTION_LIMITS.workspaceCreate.rules.person!.points;
  for (let i = 0; i < budget; i += 1) expect((await request(server.baseUrl, '/api/workspaces', { token: user.token, json: { name: `Studio ${i}` } })).status).toBe(201);
  const refused = await request(server.baseUrl, '/api/workspaces', { token: user.token, json: { name: 'One too many' } });
  expectLimited(refused, 'workspaces created', 86_400);
  const list = await request<{ workspaces: Array<{ name: string }> }>(server.baseUrl, '/api/workspaces', { token: user.token });
  expect(list.body.workspaces.map((w) => w.name)).not.toContain('One too many');
  expect(list.body.workspaces).toHaveLength(budget + 1);
});
