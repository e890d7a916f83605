/**
 * The texts of the workspaces, members and invitations API (besides WORKSPACE_MSG in domain/workspaceRoles.ts):
 * what a user reads when a call is refused, so each says what happened and what to do.
 */
export const TEAM_MSG = {
  memberNotFound: 'That person is not a member of this workspace.',
  ownerOnly: 'Only an owner can make someone an owner or change an owner’s role.',
  transferToSelf: 'You already own this workspace. Choose another member to transfer it to.',
  alreadyMember: (email: string) => `${email} is already a member of this workspace.`,
  invitationNotFound: 'This invitation link is not valid. Ask for a new invitation.',
  invitationExpired: 'This invitation has expired. Ask an admin of the workspace to invite you again.',
  invitationRevoked: 'This invitation was withdrawn. Ask an admin of the workspace to invite you again.',
  invitationUsed: 'This invitation has already been used. Sign in with the invited account to open the workspace.',
  /** the account that accepted it opens it again after it was removed from the workspace */
  invitationUsedNoLongerMember: 'You joined with this invitation before, but you are no longer a member of the workspace. Ask an admin of the workspace to invite you again.',
  invitationWrongEmail: (email: string) => `This invitation is for ${email}. Sign in with that e-mail address to accept it.`,
  invitationNotOpen: 'This invitation is no longer pending.',
  emailRequired: 'E-mail is required',
  emailInvalid: 'Enter a valid e-mail address',
  roleInvalid: 'Role must be admin, member or viewer',
  memberRoleInvalid: 'Role must be owner, admin, member or viewer',
} as const;

export const TEAM_CODES = {
  memberNotFound: 'MEMBER_NOT_FOUND',
  ownerOnly: 'OWNER_ONLY',
  lastOwner: 'LAST_OWNER',
  personalNotDeletable: 'PERSONAL_WORKSPACE',
  transferToSelf: 'TRANSFER_TO_SELF',
  alreadyMember: 'ALREADY_MEMBER',
  invitationNotFound: 'INVITATION_NOT_FOUND',
  invitationExpired: 'INVITATION_EXPIRED',
  invitationRevoked: 'INVITATION_REVOKED',
  invitationUsed: 'INVITATION_USED',
  invitationWrongEmail: 'INVITATION_WRONG_EMAIL',
} as const;
