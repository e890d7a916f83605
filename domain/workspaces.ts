import type { InvitableRole } from './workspaceRoles';

/** Shapes of the workspaces API's invitation answers, shared by the server and the front end. */

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** A workspace's invitation as its admins see it (GET /api/workspaces/:id/invitations). */
export interface InvitationView {
  id: string;
  email: string;
  role: InvitableRole;
  invitedBy: { name: string; email: string } | null;
  createdAt: string;
  expiresAt: string;
  status: InvitationStatus;
}

/** What the invitation page shows before the invitee signs in (GET /api/invitations/:token). */
export interface InvitationLookup {
  workspaceName: string;
  email: string;
  role: InvitableRole;
  inviterName: string;
  expiresAt: string;
  /**
   * The workspace's id when the signed-in user already accepted this invitation and is a member: the page says they
   * joined and opens the workspace. Null otherwise (signed out, another account, or an open invitation).
   */
  joinedWorkspaceId: string | null;
}
