/**
 * Invitations: created by admins and owners with a copyable link (a 32-byte token, only its sha256 stored, 7 days),
 * listed with their status, looked up without a session, accepted only by a session with the invited e-mail (sign-up
 * from the link works), single use, replaced when the address is invited again, withdrawn by revoking; expired,
 * withdrawn and used links give distinct 410 texts, except to the account that used the link, which is told it joined.
 * Without SMTP_URL nothing is e-mailed (`emailed: false`).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { TEAM_MSG } from '../../services/workspaces/messages';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, invite, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
const config = { ...loadConfig(), smtpUrl: '' };

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config, knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

const accept = (token: string, sessionToken?: string) => request(server.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: sessionToken });
const lookup = (token: string, sessionToken?: string) => request(server.baseUrl, `/api/invitations/${token}`, { token: sessionToken });

async function invitationCount(workspaceId: string): Promise<number> {
  return Number((await knex('workspace_invitations').where({ workspace_id: workspaceId }).count<{ n: string }[]>('* as n'))[0].n);
}

describe('invitations', () => {
  let team: TeamWithRoles;
  beforeAll(async () => {
    team = await createTeamWithRoles(server.baseUrl, { name: 'Lakeside Lettings' });
  });

  it('an admin invites: the link carries a 32-byte token, only its sha256 is stored, open 7 days; the list shows it pending', async () => {
    const email = `new-${Date.now()}@example.test`;
    const res = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.admin.token, json: { email: `  ${email}  `, role: 'member' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, emailed: false, invitation: { email, role: 'member', status: 'pending', invitedBy: { email: team.admin.email } } });
    const link = new URL(res.body.link);
    expect(`${link.origin}${link.pathname}`).toBe(`${new URL(config.publicUrl).origin}/`);
    expect(link.searchParams.get('view')).toBe('invite');
    const token = link.searchParams.get('token')!;
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const row = await knex('workspace_invitations').where({ id: res.body.invitation.id }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token);
    const ttl = new Date(row.expires_at).getTime() - new Date(row.created_at).getTime();
    expect(Math.abs(ttl - 7 * 24 * 3600 * 1000)).toBeLessThan(5000);

    const list = await request<{ invitations: Array<Record<string, unknown>> }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.invitations[0]).toEqual({
      id: res.body.invitation.id,
      email,
      role: 'member',
      invitedBy: { name: expect.any(String), email: team.admin.email },
      createdAt: expect.any(String),
      expiresAt: new Date(row.expires_at).toISOString(),
      status: 'pending',
    });

    const shown = await lookup(token);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual({
      success: true,
      invitation: { workspaceName: 'Lakeside Lettings', email, role: 'member', inviterName: expect.any(String), expiresAt: new Date(row.expires_at).toISOString(), joinedWorkspaceId: null },
    });
  });

  it('members, viewers and non-members cannot invite, list or revoke; nothing is written', async () => {
    const before = await invitationCount(team.id);
    for (const user of [team.member, team.viewer]) {
      expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: user.token, json: { email: 'x@example.test', role: 'viewer' } })).status).toBe(403);
      expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: user.token })).status).toBe(403);
    }
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.outsider.token, json: { email: 'x@example.test', role: 'viewer' } })).status).toBe(404);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.outsider.token })).status).toBe(404);
    const { invitationId } = await invite(server.baseUrl, team.id, team.owner, `revoke-me-${Date.now()}@example.test`, 'viewer');
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations/${invitationId}`, { method: 'DELETE', token: team.member.token })).status).toBe(403);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations/${invitationId}`, { method: 'DELETE', token: team.outsider.token })).status).toBe(404);
    expect(await invitationCount(team.id)).toBe(before + 1);
    expect((await knex('workspace_invitations').where({ id: invitationId }).first('revoked_at')).revoked_at).toBeNull();
  });

  it('refuses a bad e-mail, an owner role and inviting a member (409 naming them)', async () => {
    const bad = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token, json: { email: 'not-an-address', role: 'member' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(TEAM_MSG.emailInvalid);
    const owner = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token, json: { email: 'o@example.test', role: 'owner' } });
    expect(owner.status).toBe(400);
    expect(owner.body.error).toBe(TEAM_MSG.roleInvalid);
    const member = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token, json: { email: team.viewer.email.toUpperCase(), role: 'admin' } });
    expect(member.status).toBe(409);
    expect(member.body).toEqual({ success: false, error: TEAM_MSG.alreadyMember(team.viewer.email.toUpperCase()), code: 'ALREADY_MEMBER' });
  });

  it('accepting needs a session with the invited e-mail (403 naming it), then adds the member with the role; the link is single use', async () => {
    const invitee = await createTestUser(server.baseUrl);
    const { token } = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'viewer');

    expect((await accept(token)).status).toBe(401);
    const wrong = await accept(token, team.outsider.token);
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ success: false, error: TEAM_MSG.invitationWrongEmail(invitee.email), code: 'INVITATION_WRONG_EMAIL' });
    expect(wrong.body.error).toContain(invitee.email);
    expect(await knex('workspace_members').where({ workspace_id: team.id, user_id: team.outsider.id }).first()).toBeUndefined();

    const ok = await accept(token, invitee.token);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, workspaceId: team.id });
    expect((await knex('workspace_members').where({ workspace_id: team.id, user_id: invitee.id }).first('role')).role).toBe('viewer');
    const row = await knex('workspace_invitations').where({ token_hash: createHash('sha256').update(token).digest('hex') }).first('accepted_at', 'accepted_by');
    expect(row.accepted_by).toBe(invitee.id);

    // the same person again: already in, fine; anyone else: used
    expect((await accept(token, invitee.token)).status).toBe(200);
    const reused = await accept(token, team.outsider.token);
    expect(reused.status).toBe(410);
    expect(reused.body).toEqual({ success: false, error: TEAM_MSG.invitationUsed, code: 'INVITATION_USED' });
    const shown = await lookup(token);
    expect(shown.status).toBe(410);
    expect(shown.body.error).toBe(TEAM_MSG.invitationUsed);
    const list = await request<{ invitations: Array<{ email: string; status: string }> }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.admin.token });
    expect(list.body.invitations.find((i) => i.email === invitee.email)?.status).toBe('accepted');
  });

  it('a used link looked up by the account that used it says it joined (the workspace to open); anyone else, or after a removal, gets 410', async () => {
    const invitee = await createTestUser(server.baseUrl);
    const { token } = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'member');
    // open: the invitee's session sees the invitation, not a joined one
    expect((await lookup(token, invitee.token)).body.invitation.joinedWorkspaceId).toBeNull();
    expect((await accept(token, invitee.token)).status).toBe(200);

    const mine = await lookup(token, invitee.token);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({
      success: true,
      invitation: { workspaceName: 'Lakeside Lettings', email: invitee.email, role: 'member', inviterName: expect.any(String), expiresAt: expect.any(String), joinedWorkspaceId: team.id },
    });
    // signed out, or another account (a member of the workspace too): used, with the sign-in hint
    for (const session of [undefined, team.outsider.token, team.admin.token]) {
      const other = await lookup(token, session);
      expect(other.status).toBe(410);
      expect(other.body).toEqual({ success: false, error: TEAM_MSG.invitationUsed, code: 'INVITATION_USED' });
    }
    // removed since: the account that used it is told it is no longer a member, not to sign in with itself
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/members/${invitee.id}`, { method: 'DELETE', token: team.owner.token })).status).toBe(200);
    const removed = await lookup(token, invitee.token);
    expect(removed.status).toBe(410);
    expect(removed.body).toEqual({ success: false, error: TEAM_MSG.invitationUsedNoLongerMember, code: 'INVITATION_USED' });
  });

  it('two accepts of one link at once add one membership', async () => {
    const invitee = await createTestUser(server.baseUrl);
    const { token } = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'member');
    const answers = await Promise.all([accept(token, invitee.token), accept(token, invitee.token), accept(token, invitee.token)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await knex('workspace_members').where({ workspace_id: team.id, user_id: invitee.id }).count<{ n: string }[]>('* as n')).toEqual([{ n: '1' }]);
  });

  it('a new colleague signs up from the link with the invited e-mail, then accepts', async () => {
    const email = `signup-${Date.now()}@example.test`;
    const { token } = await invite(server.baseUrl, team.id, team.admin, email, 'member');
    const shown = await lookup(token);
    expect(shown.body.invitation.email).toBe(email);
    const colleague = await createTestUser(server.baseUrl, { email: shown.body.invitation.email, name: 'Nina New' });
    const ok = await accept(token, colleague.token);
    expect(ok.status).toBe(200);
    const list = await request<{ workspaces: Array<{ id: string; role: string; name: string }> }>(server.baseUrl, '/api/workspaces', { token: colleague.token });
    expect(list.body.workspaces.map((w) => [w.name, w.role])).toEqual([
      ['Personal', 'owner'],
      ['Lakeside Lettings', 'member'],
    ]);
  });

  it('inviting the address again replaces the open invitation: the old link is withdrawn (410), the new one works', async () => {
    const invitee = await createTestUser(server.baseUrl);
    const first = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'viewer');
    const second = await invite(server.baseUrl, team.id, team.admin, invitee.email, 'admin');
    expect(second.token).not.toBe(first.token);
    const old = await accept(first.token, invitee.token);
    expect(old.status).toBe(410);
    expect(old.body).toEqual({ success: false, error: TEAM_MSG.invitationRevoked, code: 'INVITATION_REVOKED' });
    expect(await knex('workspace_invitations').where({ workspace_id: team.id, email: invitee.email }).whereNull('revoked_at').whereNull('accepted_at').count<{ n: string }[]>('* as n')).toEqual([{ n: '1' }]);
    expect((await accept(second.token, invitee.token)).status).toBe(200);
    expect((await knex('workspace_members').where({ workspace_id: team.id, user_id: invitee.id }).first('role')).role).toBe('admin');
  });

  it('a revoked link gives 410 with its text, an expired one another, an unknown one 404', async () => {
    const invitee = await createTestUser(server.baseUrl);
    const revoked = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'viewer');
    const del = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations/${revoked.invitationId}`, { method: 'DELETE', token: team.admin.token });
    expect(del.status).toBe(200);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/invitations/${revoked.invitationId}`, { method: 'DELETE', token: team.admin.token })).status).toBe(409);
    expect((await lookup(revoked.token)).body).toEqual({ success: false, error: TEAM_MSG.invitationRevoked, code: 'INVITATION_REVOKED' });
    expect((await accept(revoked.token, invitee.token)).status).toBe(410);

    const expired = await invite(server.baseUrl, team.id, team.owner, invitee.email, 'viewer');
    await knex('workspace_invitations').where({ id: expired.invitationId }).update({ expires_at: new Date(Date.now() - 1000) });
    const gone = await accept(expired.token, invitee.token);
    expect(gone.status).toBe(410);
    expect(gone.body).toEqual({ success: false, error: TEAM_MSG.invitationExpired, code: 'INVITATION_EXPIRED' });
    expect((await lookup(expired.token)).status).toBe(410);
    const list = await request<{ invitations: Array<{ id: string; status: string }> }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: team.owner.token });
    expect(list.body.invitations.find((i) => i.id === expired.invitationId)?.status).toBe('expired');
    expect(list.body.invitations.find((i) => i.id === revoked.invitationId)?.status).toBe('revoked');
    expect(await knex('workspace_members').where({ workspace_id: team.id, user_id: invitee.id }).first()).toBeUndefined();

    const unknown = await lookup('A'.repeat(43));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe(TEAM_MSG.invitationNotFound);
    expect((await accept('A'.repeat(43), invitee.token)).status).toBe(404);
  });

  it("an invitation of another workspace cannot be revoked through this one's path", async () => {
    const other = await createTeamWithRoles(server.baseUrl);
    const theirs = await invite(server.baseUrl, other.id, other.owner, `theirs-${Date.now()}@example.test`, 'viewer');
    const res = await request(server.baseUrl, `/api/workspaces/${team.id}/invitations/${theirs.invitationId}`, { method: 'DELETE', token: team.owner.token });
    expect(res.status).toBe(404);
    expect((await lookup(theirs.token)).status).toBe(200);
  });

  it("an invitation into someone's personal workspace names it after its owner for the invitee", async () => {
    const owner = await createTestUser(server.baseUrl, { name: 'Rosa Diaz' });
    const invitee = await createTestUser(server.baseUrl);
    const { token } = await invite(server.baseUrl, owner.id, owner, invitee.email, 'member');
    expect((await lookup(token)).body.invitation.workspaceName).toBe("Rosa Diaz's workspace");
    expect((await accept(token, invitee.token)).status).toBe(200);
    const mine = await request<{ workspaces: Array<Record<string, unknown>> }>(server.baseUrl, '/api/workspaces', { token: invitee.token });
    expect(mine.body.workspaces).toEqual([
      { id: invitee.id, name: 'Personal', personal: true, role: 'owner', memberCount: 1, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false },
      { id: owner.id, name: "Rosa Diaz's workspace", personal: false, role: 'member', memberCount: 2, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false },
    ]);
    const theirs = await request<{ workspaces: Array<Record<string, unknown>> }>(server.baseUrl, '/api/workspaces', { token: owner.token });
    expect(theirs.body.workspaces).toEqual([{ id: owner.id, name: 'Personal', personal: true, role: 'owner', memberCount: 2, maxClipsInFlight: null, approvalPolicy: { kind: 'any' }, twoFactorRequired: false }]);
  });
});
