/**
 * Team workspace fixtures for tests (any helper's): a team workspace made through the API, members of each role
 * joined through real invitations (POST .../invitations, then accept with the invited account), and the header that
 * names the workspace on any other call.
 */
import type { WorkspaceRole } from '../../domain/workspaceRoles';
import { WORKSPACE_HEADER } from '../../domain/workspaceRoles';
import { createTestUser, type TestUser } from './accounts';
import { request } from './http';

export interface TeamWorkspace {
  id: string;
  name: string;
  owner: TestUser;
}

export interface TeamWithRoles extends TeamWorkspace {
  admin: TestUser;
  member: TestUser;
  viewer: TestUser;
  /** signed up, but a member of no workspace but their own */
  outsider: TestUser;
  /** every member by role */
  byRole: Record<WorkspaceRole, TestUser>;
}

/** `{ 'X-Workspace-Id': id }`: the workspace a call that names no project acts in. */
export function inWorkspace(workspaceId: string): Record<string, string> {
  return { [WORKSPACE_HEADER]: workspaceId };
}

/** Creates a team workspace owned by `owner` (a new user when absent) through POST /api/workspaces. */
export async function createTeamWorkspace(baseUrl: string, options: { owner?: TestUser; name?: string } = {}): Promise<TeamWorkspace> {
  const owner = options.owner ?? (await createTestUser(baseUrl, { name: 'Olivia Owner' }));
  const name = options.name ?? `Team ${Math.random().toString(36).slice(2, 8)}`;
  const res = await request<{ workspace: { id: string; name: string } }>(baseUrl, '/api/workspaces', { token: owner.token, json: { name } });
  if (res.status !== 201) throw new Error(`create workspace answered ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.workspace.id, name: res.body.workspace.name, owner };
}

/** Invites `email` as `role` by `inviter` (admin or owner); answers the link's token and the API's answer. */
export async function invite(
  baseUrl: string,
  workspaceId: string,
  inviter: TestUser,
  email: string,
  role: 'admin' | 'member' | 'viewer',
): Promise<{ token: string; link: string; invitationId: string; emailed: boolean }> {
  const res = await request<{ link: string; emailed: boolean; invitation: { id: string } }>(baseUrl, `/api/workspaces/${workspaceId}/invitations`, {
    token: inviter.token,
    json: { email, role },
  });
  if (res.status !== 201) throw new Error(`invite answered ${res.status} ${JSON.stringify(res.body)}`);
  const token = new URL(res.body.link).searchParams.get('token');
  if (!token) throw new Error(`no token in the link ${res.body.link}`);
  return { token, link: res.body.link, invitationId: res.body.invitation.id, emailed: res.body.emailed };
}

/** Adds `user` (a new user when absent) to the workspace with `role`, through an invitation the owner sends and the user accepts. */
export async function joinWorkspace(baseUrl: string, team: TeamWorkspace, role: 'admin' | 'member' | 'viewer', user?: TestUser): Promise<TestUser> {
  const joiner = user ?? (await createTestUser(baseUrl, { name: `${role[0].toUpperCase()}${role.slice(1)} ${Math.random().toString(36).slice(2, 6)}` }));
  const { token } = await invite(baseUrl, team.id, team.owner, joiner.email, role);
  const res = await request(baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: joiner.token });
  if (res.status !== 200) throw new Error(`accept answered ${res.status} ${JSON.stringify(res.body)}`);
  return joiner;
}

/** A team workspace with an owner, an admin, a member and a viewer, and an outsider who is none of them. */
export async function createTeamWithRoles(baseUrl: string, options: { name?: string } = {}): Promise<TeamWithRoles> {
  const team = await createTeamWorkspace(baseUrl, options);
  const admin = await joinWorkspace(baseUrl, team, 'admin');
  const member = await joinWorkspace(baseUrl, team, 'member');
  const viewer = await joinWorkspace(baseUrl, team, 'viewer');
  const outsider = await createTestUser(baseUrl, { name: 'Oscar Outsider' });
  return { ...team, admin, member, viewer, outsider, byRole: { owner: team.owner, admin, member, viewer } };
}
