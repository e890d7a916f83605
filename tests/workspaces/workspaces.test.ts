/**
 * /api/workspaces: the list (personal first), creating a team workspace (owner, 0 credits, its own account row),
 * renaming and deleting it (owner only; the personal workspace cannot be deleted), with refusals for a non-member
 * (404), a role without the right (403) and nothing changed by a refused call.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { WORKSPACE_MSG } from '../../domain/workspaceRoles';
import { createStorage } from '../../storage';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, createTeamWorkspace, inWorkspace, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
const config = loadConfig();

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

async function workspaceRow(id: string) {
  return knex('workspaces').where({ id }).first('id', 'name', 'personal_user_id');
}

describe('GET and POST /api/workspaces', () => {
  it('lists the personal workspace alone for a new user, then a created team workspace after it', async () => {
    const user = await createTestUser(server.baseUrl);
    const first = await request(server.baseUrl, '/api/workspaces', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, workspaces: [{ id: user.id, name: 'Personal', personal: true, role: 'owner', memberCount: 1, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false }] });

    const created = await request(server.baseUrl, '/api/workspaces', { token: user.token, json: { name: '  Harbour Studio  ' } });
    expect(created.status).toBe(201);
    const id = created.body.workspace.id as string;
    expect(created.body).toEqual({ success: true, workspace: { id, name: 'Harbour Studio', personal: false, role: 'owner', memberCount: 1, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false } });
    expect(id).not.toBe(user.id);
    // the account is the workspace: a profiles row with its id, the creator's e-mail, the name, 0 credits
    expect(await knex('profiles').where({ id }).first('email', 'name', 'credits', 'reserved_credits')).toEqual({
      email: user.email,
      name: 'Harbour Studio',
      credits: 0,
      reserved_credits: 0,
    });
    expect(await workspaceRow(id)).toEqual({ id, name: 'Harbour Studio', personal_user_id: null });
    // no ledger row: the new workspace has no credits to account for
    expect(await knex('credit_transactions').where({ workspace_id: id }).first()).toBeUndefined();

    await request(server.baseUrl, '/api/workspaces', { token: user.token, json: { name: 'Alpha Team' } });
    const list = await request<{ workspaces: Array<{ name: string; personal: boolean }> }>(server.baseUrl, '/api/workspaces', { token: user.token });
    expect(list.body.workspaces.map((w) => w.name)).toEqual(['Personal', 'Alpha Team', 'Harbour Studio']);
  });

  it('refuses a blank, too long or multi-line name with 400 and creates nothing', async () => {
    const user = await createTestUser(server.baseUrl);
    // only this user's: other test files create workspaces in the same database at the same time
    const mine = () => knex('workspaces').where({ created_by: user.id }).count<{ n: string }[]>('* as n');
    const before = await mine();
    expect(before).toEqual([{ n: '1' }]);
    for (const [body, error] of [
      [{}, WORKSPACE_MSG.nameRequired],
      [{ name: '   ' }, WORKSPACE_MSG.nameRequired],
      [{ name: 'x'.repeat(101) }, WORKSPACE_MSG.nameTooLong],
    ] as const) {
      const res = await request(server.baseUrl, '/api/workspaces', { token: user.token, json: body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(error);
    }
    const multiLine = await request(server.baseUrl, '/api/workspaces', { token: user.token, json: { name: 'Two\nlines' } });
    expect(multiLine.status).toBe(400);
    expect(await mine()).toEqual(before);
  });

  it('needs a session', async () => {
    expect((await request(server.baseUrl, '/api/workspaces')).status).toBe(401);
    expect((await request(server.baseUrl, '/api/workspaces', { json: { name: 'X' } })).status).toBe(401);
  });
});

describe('a team with every role', () => {
  let team: TeamWithRoles;

  beforeAll(async () => {
    team = await createTeamWithRoles(server.baseUrl, { name: 'Coastal Homes' });
  });

  it("shows in every member's list with their role and the member count", async () => {
    for (const [role, user] of Object.entries(team.byRole)) {
      const res = await request<{ workspaces: Array<Record<string, unknown>> }>(server.baseUrl, '/api/workspaces', { token: user.token });
      expect(res.body.workspaces[0]).toMatchObject({ id: user.id, personal: true, role: 'owner' });
      expect(res.body.workspaces).toContainEqual({ id: team.id, name: 'Coastal Homes', personal: false, role, memberCount: 4, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false });
    }
    const outsider = await request<{ workspaces: Array<{ id: string }> }>(server.baseUrl, '/api/workspaces', { token: team.outsider.token });
    expect(outsider.body.workspaces.map((w) => w.id)).toEqual([team.outsider.id]);
  });

  it('lets only the owner rename it; a non-member gets 404 and nothing changes', async () => {
    for (const user of [team.admin, team.member, team.viewer]) {
      const res = await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'PATCH', token: user.token, json: { name: 'Hijacked' } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    }
    const outsider = await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'PATCH', token: team.outsider.token, json: { name: 'Hijacked' } });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ success: false, error: WORKSPACE_MSG.notFound, code: 'WORKSPACE_NOT_FOUND' });
    const unknown = await request(server.baseUrl, `/api/workspaces/not-a-workspace`, { method: 'PATCH', token: team.owner.token, json: { name: 'X' } });
    expect(unknown.status).toBe(404);
    expect((await workspaceRow(team.id))?.name).toBe('Coastal Homes');

    const renamed = await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'PATCH', token: team.owner.token, json: { name: 'Coastal Homes Ltd' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ success: true, workspace: { id: team.id, name: 'Coastal Homes Ltd', personal: false, role: 'owner', memberCount: 4, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false } });
    expect((await knex('profiles').where({ id: team.id }).first('name')).name).toBe('Coastal Homes Ltd');
  });

  it("renames a personal workspace without touching its user's name", async () => {
    const res = await request(server.baseUrl, `/api/workspaces/${team.owner.id}`, { method: 'PATCH', token: team.owner.token, json: { name: 'My things' } });
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: team.owner.id, name: 'My things', personal: true });
    expect((await knex('profiles').where({ id: team.owner.id }).first('name')).name).toBe('Olivia Owner');
  });

  it('refuses deleting a personal workspace (409) and a team workspace by anyone but an owner', async () => {
    const personal = await request(server.baseUrl, `/api/workspaces/${team.owner.id}`, { method: 'DELETE', token: team.owner.token });
    expect(personal.status).toBe(409);
    expect(personal.body.error).toBe(WORKSPACE_MSG.personalNotDeletable);
    expect(await workspaceRow(team.owner.id)).toBeTruthy();
    for (const user of [team.admin, team.member, team.viewer]) {
      expect((await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'DELETE', token: user.token })).status).toBe(403);
    }
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'DELETE', token: team.outsider.token })).status).toBe(404);
    // someone else's personal workspace is not theirs to see
    expect((await request(server.baseUrl, `/api/workspaces/${team.admin.id}`, { method: 'DELETE', token: team.owner.token })).status).toBe(404);
    expect(await workspaceRow(team.id)).toBeTruthy();
    expect(await knex('workspace_members').where({ workspace_id: team.id }).count<{ n: string }[]>('* as n')).toEqual([{ n: '4' }]);
  });
});

describe('DELETE /api/workspaces/:id', () => {
  it('removes the workspace with its projects, files, account and memberships; members lose access at once', async () => {
    const team = await createTeamWorkspace(server.baseUrl, { name: 'Short-lived' });
    const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', {
      token: team.owner.token,
      json: { name: 'Doomed' },
      headers: inWorkspace(team.id),
    });
    expect(project.status).toBe(201);
    const projectId = project.body.project.id;
    // the project belongs to the workspace (workspace_id = the owning account)
    const owning = (await knex('projects').where({ id: projectId }).first('workspace_id')).workspace_id as string;
    expect(owning).toBe(team.id);
    const storage = createStorage(config);
    // a stored file the workspace's folders hold
    await storage.objects.put('renders', `${owning}/${projectId}/doomed.jpg`, Buffer.from('jpeg bytes'));
    expect(await storage.objects.stat('renders', `${owning}/${projectId}/doomed.jpg`)).not.toBeNull();

    const res = await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'DELETE', token: team.owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await workspaceRow(team.id)).toBeUndefined();
    expect(await knex('profiles').where({ id: team.id }).first()).toBeUndefined();
    expect(await knex('workspace_members').where({ workspace_id: team.id }).first()).toBeUndefined();
    expect(await knex('projects').where({ id: projectId }).first()).toBeUndefined();
    expect(await storage.objects.stat('renders', `${owning}/${projectId}/doomed.jpg`)).toBeNull();
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/members`, { token: team.owner.token })).status).toBe(404);
    // the owner's own account is untouched
    expect(await workspaceRow(team.owner.id)).toBeTruthy();
  });
});
