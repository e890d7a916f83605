/**
 * /api/workspaces/:id/members and /transfer: the member list, role changes (admins and owners; only an owner makes
 * or unmakes an owner), removal and leaving, ownership transfer, and a workspace never left without an owner, even
 * when two owners demote themselves at the same moment. A removed member's open event stream of the workspace ends
 * at once and their next request gets 404.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { WORKSPACE_MSG } from '../../domain/workspaceRoles';
import { publishEvent } from '../../services/platform/events';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, createTeamWorkspace, inWorkspace, joinWorkspace, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
const streams: OpenedEventStream[] = [];

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger, eventStreamHeartbeatMs: 60_000 }));
});

afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

async function roles(workspaceId: string): Promise<Record<string, string>> {
  const rows = (await knex('workspace_members').where({ workspace_id: workspaceId }).select('user_id', 'role')) as Array<{ user_id: string; role: string }>;
  return Object.fromEntries(rows.map((r) => [r.user_id, r.role]));
}

const patchRole = (workspaceId: string, token: string, userId: string, role: string) =>
  request(server.baseUrl, `/api/workspaces/${workspaceId}/members/${userId}`, { method: 'PATCH', token, json: { role } });
const remove = (workspaceId: string, token: string, userId: string) =>
  request(server.baseUrl, `/api/workspaces/${workspaceId}/members/${userId}`, { method: 'DELETE', token });

describe('GET /api/workspaces/:id/members', () => {
  let team: TeamWithRoles;
  beforeAll(async () => {
    team = await createTeamWithRoles(server.baseUrl);
  });

  it('lists every member with e-mail, name, role and join time, owners first, for any role', async () => {
    for (const user of Object.values(team.byRole)) {
      const res = await request<{ members: Array<Record<string, string>> }>(server.baseUrl, `/api/workspaces/${team.id}/members`, { token: user.token });
      expect(res.status).toBe(200);
      expect(res.body.members.map((m) => [m.userId, m.role])).toEqual([
        [team.owner.id, 'owner'],
        [team.admin.id, 'admin'],
        [team.member.id, 'member'],
        [team.viewer.id, 'viewer'],
      ]);
      expect(res.body.members[0]).toEqual({ userId: team.owner.id, email: team.owner.email, name: 'Olivia Owner', role: 'owner', joinedAt: expect.any(String) });
      expect(Number.isNaN(Date.parse(res.body.members[0].joinedAt))).toBe(false);
    }
  });

  it('is 404 for a non-member and for an unknown workspace', async () => {
    const outsider = await request(server.baseUrl, `/api/workspaces/${team.id}/members`, { token: team.outsider.token });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ success: false, error: WORKSPACE_MSG.notFound, code: 'WORKSPACE_NOT_FOUND' });
    const unknown = await request(server.baseUrl, `/api/workspaces/00000000-0000-4000-8000-000000000000/members`, { token: team.owner.token });
    expect(unknown.status).toBe(404);
  });
});

describe('PATCH /api/workspaces/:id/members/:userId', () => {
  let team: TeamWithRoles;
  beforeEach(async () => {
    team = await createTeamWithRoles(server.baseUrl);
  });

  it('lets an admin change a member and a viewer, and refuses members and viewers (403), a non-member (404); nothing changes on a refusal', async () => {
    const before = await roles(team.id);
    for (const user of [team.member, team.viewer]) {
      const res = await patchRole(team.id, user.token, team.viewer.id, 'admin');
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    }
    expect((await patchRole(team.id, team.outsider.token, team.viewer.id, 'admin')).status).toBe(404);
    expect(await roles(team.id)).toEqual(before);

    const promoted = await patchRole(team.id, team.admin.token, team.viewer.id, 'member');
    expect(promoted.status).toBe(200);
    expect(promoted.body).toEqual({ success: true, member: { userId: team.viewer.id, email: team.viewer.email, name: expect.any(String), role: 'member', joinedAt: expect.any(String) } });
    expect((await roles(team.id))[team.viewer.id]).toBe('member');
  });

  it('refuses an unknown role (400) and a user who is not a member (404)', async () => {
    const bad = await patchRole(team.id, team.owner.token, team.member.id, 'superuser');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Role must be owner, admin, member or viewer');
    const stranger = await patchRole(team.id, team.owner.token, team.outsider.id, 'viewer');
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe('MEMBER_NOT_FOUND');
  });

  it('only an owner makes or unmakes an owner', async () => {
    const byAdmin = await patchRole(team.id, team.admin.token, team.member.id, 'owner');
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.code).toBe('OWNER_ONLY');
    const demoteOwner = await patchRole(team.id, team.admin.token, team.owner.id, 'viewer');
    expect(demoteOwner.status).toBe(403);
    expect((await roles(team.id))[team.owner.id]).toBe('owner');

    const byOwner = await patchRole(team.id, team.owner.token, team.member.id, 'owner');
    expect(byOwner.status).toBe(200);
    expect((await roles(team.id))[team.member.id]).toBe('owner');
    // two owners now: one may step down
    const stepDown = await patchRole(team.id, team.owner.token, team.owner.id, 'admin');
    expect(stepDown.status).toBe(200);
    expect(await roles(team.id)).toMatchObject({ [team.owner.id]: 'admin', [team.member.id]: 'owner' });
  });

  it('never demotes the last owner (409)', async () => {
    const res = await patchRole(team.id, team.owner.token, team.owner.id, 'admin');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: WORKSPACE_MSG.lastOwner, code: 'LAST_OWNER' });
    expect((await roles(team.id))[team.owner.id]).toBe('owner');
  });

  it('two owners demoting themselves at the same moment leave exactly one owner', async () => {
    await patchRole(team.id, team.owner.token, team.admin.id, 'owner');
    for (let round = 0; round < 3; round += 1) {
      const [a, b] = await Promise.all([
        patchRole(team.id, team.owner.token, team.owner.id, 'admin'),
        patchRole(team.id, team.admin.token, team.admin.id, 'admin'),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const owners = Object.entries(await roles(team.id)).filter(([, role]) => role === 'owner');
      expect(owners).toHaveLength(1);
      // make both owners again for the next round
      const [ownerId] = owners[0];
      const otherId = ownerId === team.owner.id ? team.admin.id : team.owner.id;
      const ownerToken = ownerId === team.owner.id ? team.owner.token : team.admin.token;
      expect((await patchRole(team.id, ownerToken, otherId, 'owner')).status).toBe(200);
    }
  });

  it('two owners demoting each other at the same moment leave exactly one owner', async () => {
    await patchRole(team.id, team.owner.token, team.admin.id, 'owner');
    const [a, b] = await Promise.all([
      patchRole(team.id, team.owner.token, team.admin.id, 'member'),
      patchRole(team.id, team.admin.token, team.owner.id, 'member'),
    ]);
    // the second one runs after the first under the workspace's lock: its caller is no owner any more
    expect([a.status, b.status].sort()).toEqual([200, 403]);
    const owners = Object.values(await roles(team.id)).filter((role) => role === 'owner');
    expect(owners).toHaveLength(1);
  });
});

describe('POST /api/workspaces/:id/transfer', () => {
  it('makes the member an owner and the caller an admin; only an owner may; to oneself or a non-member is refused', async () => {
    const team = await createTeamWithRoles(server.baseUrl);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.admin.token, json: { userId: team.member.id } })).status).toBe(403);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.outsider.token, json: { userId: team.member.id } })).status).toBe(404);
    const self = await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.owner.token, json: { userId: team.owner.id } });
    expect(self.status).toBe(409);
    const stranger = await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.owner.token, json: { userId: team.outsider.id } });
    expect(stranger.status).toBe(404);
    const missing = await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.owner.token, json: {} });
    expect(missing.status).toBe(400);
    expect(await roles(team.id)).toMatchObject({ [team.owner.id]: 'owner', [team.member.id]: 'member' });

    const res = await request(server.baseUrl, `/api/workspaces/${team.id}/transfer`, { token: team.owner.token, json: { userId: team.member.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await roles(team.id)).toMatchObject({ [team.owner.id]: 'admin', [team.member.id]: 'owner' });
    // the former owner can no longer rename it; the new one can
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'PATCH', token: team.owner.token, json: { name: 'X' } })).status).toBe(403);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}`, { method: 'PATCH', token: team.member.token, json: { name: 'New hands' } })).status).toBe(200);
  });
});

describe('DELETE /api/workspaces/:id/members/:userId', () => {
  let team: TeamWithRoles;
  beforeEach(async () => {
    team = await createTeamWithRoles(server.baseUrl);
  });

  it('lets an admin remove a member; a member or viewer may not remove others; a non-member gets 404', async () => {
    for (const user of [team.member, team.viewer]) {
      expect((await remove(team.id, user.token, team.admin.id)).status).toBe(403);
    }
    expect((await remove(team.id, team.outsider.token, team.member.id)).status).toBe(404);
    expect(Object.keys(await roles(team.id))).toHaveLength(4);
    // an admin cannot remove an owner
    const owner = await remove(team.id, team.admin.token, team.owner.id);
    expect(owner.status).toBe(403);
    expect(owner.body.code).toBe('OWNER_ONLY');

    const res = await remove(team.id, team.admin.token, team.member.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await roles(team.id)).not.toHaveProperty(team.member.id);
    expect((await remove(team.id, team.admin.token, team.member.id)).status).toBe(404);
  });

  it('lets any member leave, but not the last owner (409)', async () => {
    const leave = await remove(team.id, team.viewer.token, team.viewer.id);
    expect(leave.status).toBe(200);
    expect(await roles(team.id)).not.toHaveProperty(team.viewer.id);
    const lastOwner = await remove(team.id, team.owner.token, team.owner.id);
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.error).toBe(WORKSPACE_MSG.lastOwner);
    expect((await roles(team.id))[team.owner.id]).toBe('owner');
  });

  it("ends the removed member's open event stream of the workspace at once; their next request is 404 and their personal stream stays", async () => {
    const open = async (token: string, workspaceId?: string) => {
      const s = await openEventStream(server.baseUrl, { token, path: workspaceId ? `/api/events?workspaceId=${workspaceId}` : '/api/events' });
      streams.push(s);
      expect(s.status).toBe(200);
      await s.next((m) => m.event === 'ready');
      return s;
    };
    const memberTeam = await open(team.member.token, team.id);
    const memberPersonal = await open(team.member.token);
    const ownerTeam = await open(team.owner.token, team.id);

    // an event of the workspace reaches every member's stream of it, and not their personal one
    await publishEvent(knex, team.id, { kind: 'credits' });
    await memberTeam.next((m) => m.event === 'credits');
    await ownerTeam.next((m) => m.event === 'credits');

    // the removal itself ends the stream (told, then closed by the server); the generous bounds only turn a stream
    // that is never ended into a clear failure, they time nothing
    expect((await remove(team.id, team.admin.token, team.member.id)).status).toBe(200);
    const last = await memberTeam.next((m) => m.event === 'workspace-ended', 30_000);
    expect(last.data).toEqual({ kind: 'workspace-ended', workspaceId: team.id });
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([memberTeam.ended, new Promise((_, reject) => (waited = setTimeout(() => reject(new Error('stream still open')), 30_000)))]).finally(() =>
      clearTimeout(waited),
    );
    // the others are told the member list changed
    const changed = await ownerTeam.next((m) => m.event === 'workspace');
    expect(changed.data).toMatchObject({ kind: 'workspace', change: 'members', workspaceId: team.id });

    // their next request in the workspace: 404, as for anyone who is not a member
    const again = await request(server.baseUrl, `/api/events?workspaceId=${team.id}`, { token: team.member.token });
    expect(again.status).toBe(404);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/members`, { token: team.member.token })).status).toBe(404);
    expect((await request(server.baseUrl, '/api/projects/list', { token: team.member.token, headers: inWorkspace(team.id) })).status).toBe(404);
    expect(memberPersonal.messages.some((m) => m.event === 'credits' || m.event === 'workspace-ended')).toBe(false);
    await publishEvent(knex, team.member.id, { kind: 'credits' });
    await memberPersonal.next((m) => m.event === 'credits');
  });

  it('a stream of a workspace the user is not a member of is refused with 404', async () => {
    const res = await request(server.baseUrl, `/api/events?workspaceId=${team.id}`, { token: team.outsider.token });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('WORKSPACE_NOT_FOUND');
  });
});

describe('a member of several workspaces', () => {
  it('keeps each membership separate: leaving one leaves the other', async () => {
    const a = await createTeamWorkspace(server.baseUrl, { name: 'A Team' });
    const b = await createTeamWorkspace(server.baseUrl, { owner: a.owner, name: 'B Team' });
    const user = await createTestUser(server.baseUrl);
    await joinWorkspace(server.baseUrl, a, 'member', user);
    await joinWorkspace(server.baseUrl, b, 'viewer', user);
    expect((await remove(a.id, user.token, user.id)).status).toBe(200);
    const list = await request<{ workspaces: Array<{ id: string; role: string }> }>(server.baseUrl, '/api/workspaces', { token: user.token });
    expect(list.body.workspaces.map((w) => [w.id, w.role])).toEqual([
      [user.id, 'owner'],
      [b.id, 'viewer'],
    ]);
  });
});
