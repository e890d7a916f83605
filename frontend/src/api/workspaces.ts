import type { InvitableRole, WorkspaceRole } from '../../../domain/workspaceRoles';
import type { ApprovalPolicy } from '../../../domain/approvalPolicy';
import { api } from './client';

/** One of the signed-in user's workspaces (GET /api/workspaces): personal first, then the others by name. */
export interface Workspace {
  id: string;
  name: string;
  personal: boolean;
  role: WorkspaceRole;
  memberCount: number;
  /** the most clips its members may have pending or processing together; null: no cap */
  maxClipsInFlight: number | null;
  /** who must approve a generated item; items already pending keep the policy they started with */
  approvalPolicy: ApprovalPolicy;
  /** its owners require two-factor sign-in of every member */
  twoFactorRequired: boolean;
}

export interface WorkspaceMember {
  userId: string;
  email: string;
  name: string;
  role: WorkspaceRole;
  joinedAt: string;
}

import type { InvitationLookup as InvitationPreview, InvitationView as WorkspaceInvitation } from '../../../domain/workspaces';

export type { InvitationStatus } from '../../../domain/workspaces';
export type { InvitationPreview, WorkspaceInvitation };

/** Credits charged on approvals, by who generated and by who approved each item (GET /api/credits/spend-by-member). */
export interface MemberSpend {
  /** null for the one 'deleted account' line */
  userId: string | null;
  name: string;
  email: string | null;
  /** charged for items this person generated */
  generated: number;
  /** charged on approvals this person made */
  approved: number;
  /** the same as `approved` */
  spent: number;
  deleted: boolean;
  /** whether the user is a member now (someone who left still shows what they generated and approved) */
  member: boolean;
}

const path = (workspaceId: string, ...rest: string[]) => ['workspaces', encodeURIComponent(workspaceId), ...rest.map(encodeURIComponent)].join('/');

export async function fetchWorkspaces(): Promise<Workspace[]> {
  const body = await api.get('workspaces').json<{ success: true; workspaces: Workspace[] }>();
  return body.workspaces;
}

export async function createWorkspace(name: string): Promise<Workspace> {
  const body = await api.post('workspaces', { json: { name } }).json<{ success: true; workspace: Workspace }>();
  return body.workspace;
}

export async function renameWorkspace(workspaceId: string, name: string): Promise<Workspace> {
  const body = await api.patch(path(workspaceId), { json: { name } }).json<{ success: true; workspace: Workspace }>();
  return body.workspace;
}

/** Sets (1 to 100) or clears (null) the workspace's cap on clips in flight: owners and admins. */
export async function setTwoFactorRequired(workspaceId: string, required: boolean): Promise<Workspace> {
  const body = await api.put(path(workspaceId, 'two-factor-policy'), { json: { required } }).json<{ success: true; workspace: Workspace }>();
  return body.workspace;
}

export async function setClipCap(workspaceId: string, maxClipsInFlight: number | null): Promise<Workspace> {
  const body = await api.put(path(workspaceId, 'clip-cap'), { json: { maxClipsInFlight } }).json<{ success: true; workspace: Workspace }>();
  return body.workspace;
}

/** Sets who must approve the workspace's generated items: owners and admins. */
export async function setApprovalPolicy(workspaceId: string, approvalPolicy: ApprovalPolicy): Promise<Workspace> {
  const body = await api.put(path(workspaceId, 'approval-policy'), { json: { approvalPolicy } }).json<{ success: true; workspace: Workspace }>();
  return body.workspace;
}

export async function deleteWorkspace(workspaceId: string): Promise<void> {
  await api.delete(path(workspaceId));
}

export async function fetchMembers(workspaceId: string): Promise<WorkspaceMember[]> {
  const body = await api.get(path(workspaceId, 'members')).json<{ success: true; members: WorkspaceMember[] }>();
  return body.members;
}

/** Asks the workspace's owners and admins for credits; answers the sentence that says whom it told. */
export async function requestCredits(workspaceId: string): Promise<string> {
  const body = await api.post(path(workspaceId, 'credit-requests'), { retry: 0 }).json<{ success: true; message: string }>();
  return body.message;
}

export async function changeMemberRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<WorkspaceMember> {
  const body = await api.patch(path(workspaceId, 'members', userId), { json: { role } }).json<{ success: true; member: WorkspaceMember }>();
  return body.member;
}

/** Removes a member; a member removing themselves leaves the workspace. */
export async function removeMember(workspaceId: string, userId: string): Promise<void> {
  await api.delete(path(workspaceId, 'members', userId));
}

export async function transferOwnership(workspaceId: string, userId: string): Promise<void> {
  await api.post(path(workspaceId, 'transfer'), { json: { userId } });
}

export async function fetchInvitations(workspaceId: string): Promise<WorkspaceInvitation[]> {
  const body = await api.get(path(workspaceId, 'invitations')).json<{ success: true; invitations: WorkspaceInvitation[] }>();
  return body.invitations;
}

export interface SentInvitation {
  invitation: WorkspaceInvitation;
  /** the link to pass on (shown once, with Copy) */
  link: string;
  /** whether the server e-mailed it (only when SMTP is configured) */
  emailed: boolean;
}

export async function inviteMember(workspaceId: string, input: { email: string; role: InvitableRole }): Promise<SentInvitation> {
  const body = await api.post(path(workspaceId, 'invitations'), { json: input }).json<{ success: true } & SentInvitation>();
  return { invitation: body.invitation, link: body.link, emailed: body.emailed };
}

export async function revokeInvitation(workspaceId: string, invitationId: string): Promise<void> {
  await api.delete(path(workspaceId, 'invitations', invitationId));
}

export async function fetchInvitation(token: string): Promise<InvitationPreview> {
  const body = await api.get(`invitations/${encodeURIComponent(token)}`, { retry: 0 }).json<{ success: true; invitation: InvitationPreview }>();
  return body.invitation;
}

/** Accepts with the session's account; answers the workspace joined. */
export async function acceptInvitation(token: string): Promise<string> {
  const body = await api.post(`invitations/${encodeURIComponent(token)}/accept`).json<{ success: true; workspaceId: string }>();
  return body.workspaceId;
}

/** Credits spent in the current workspace per member (admins and owners). */
export async function fetchSpendByMember(): Promise<MemberSpend[]> {
  const body = await api.get('credits/spend-by-member').json<{ success: true; members: MemberSpend[] }>();
  return body.members;
}
