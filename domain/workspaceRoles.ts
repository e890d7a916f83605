/**
 * Who may do what in a workspace (DESIGN.md "Teams (workspaces)"). Each role includes the ones before it:
 *
 * | role   | may                                                                                   |
 * |--------|---------------------------------------------------------------------------------------|
 * | viewer | read the workspace's projects, library, approvals, activity and credits; download approved items; comment |
 * | member | also upload, generate (images, clips, Enhance Renders), approve, reject and assemble videos |
 * | admin  | also manage members and invitations, buy credits and read billing, manage webhooks     |
 * | owner  | also rename or delete the workspace and transfer its ownership                         |
 *
 * Pure data, shared by the server's access module (services/workspaces/access.ts) and the front end, which hides the
 * controls a role may not use (the server refuses them anyway).
 */

export const WORKSPACE_ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** The roles an invitation may grant: ownership is only ever transferred. */
export const INVITABLE_ROLES = ['viewer', 'member', 'admin'] as const satisfies readonly WorkspaceRole[];
export type InvitableRole = (typeof INVITABLE_ROLES)[number];

/** The things a request does in a workspace, each granted from one role upwards. */
export const WORKSPACE_ACTIONS = {
  /** see projects, the library, approvals, activity, credits and the member list */
  read: 'viewer',
  /** download an approved item or an export of it */
  download: 'viewer',
  /** comment on items and renders, reply, and edit or delete their own comments */
  comment: 'viewer',
  /** create, rename or delete projects; upload renders and music tracks; edit or delete library items and music tracks */
  edit: 'member',
  /** start image edits, clips and Enhance Renders runs (spends the workspace's credits) */
  generate: 'member',
  /** approve or reject pending items (spends the workspace's credits) */
  approve: 'member',
  /** assemble social videos */
  assemble: 'member',
  /** invite, remove and change the role of members */
  manageMembers: 'admin',
  /** buy credits, read purchases and spend per member, set the clip cap and the approval policy */
  billing: 'admin',
  /** edit the brand kit (colours, font, contact lines, logo) that new videos use */
  brand: 'admin',
  /** register and manage webhook endpoints */
  webhooks: 'admin',
  /** rename or delete the workspace, transfer its ownership */
  own: 'owner',
} as const satisfies Record<string, WorkspaceRole>;
export type WorkspaceAction = keyof typeof WORKSPACE_ACTIONS;

export function isWorkspaceRole(value: unknown): value is WorkspaceRole {
  return typeof value === 'string' && (WORKSPACE_ROLES as readonly string[]).includes(value);
}

export function roleRank(role: WorkspaceRole): number {
  return WORKSPACE_ROLES.indexOf(role);
}

/** Whether `role` may do `action`. */
export function roleAllows(role: WorkspaceRole, action: WorkspaceAction): boolean {
  return roleRank(role) >= roleRank(WORKSPACE_ACTIONS[action]);
}

/** Labels the UI shows. */
export const ROLE_LABELS: Record<WorkspaceRole, string> = { owner: 'Owner', admin: 'Admin', member: 'Member', viewer: 'Viewer' };

const listFormat = (type: 'conjunction' | 'disjunction') => new Intl.ListFormat('en', { style: 'long', type });
/** 'Olivia', 'Olivia or Adam', 'Olivia, Adam, or Ben' */
function orList(names: readonly string[]): string {
  return listFormat('disjunction').format(names);
}
/** 'Olivia', 'Olivia and Adam', 'Olivia, Adam, and Ben' */
function andList(names: readonly string[]): string {
  return listFormat('conjunction').format(names);
}

export const WORKSPACE_MSG = {
  notFound: 'Workspace not found',
  /** "Ask Olivia Owner or Adam Admin to buy credits for Harbour Team." */
  askBuyers: (names: readonly string[], workspaceName: string) => `Ask ${orList(names)} to buy credits for ${workspaceName}.`,
  /** what a member reads once the owners and admins were told */
  buyersAsked: (names: readonly string[], emailed: boolean) => `We let ${andList(names)} know in the app${emailed ? ' and by e-mail' : ''}.`,
  /** what an owner or admin sees when a member asks */
  creditsAsked: (who: string, workspaceName: string) => `${who} asks for credits in ${workspaceName}.`,
  canBuyYourself: 'You can buy credits for this workspace yourself, on the Billing page.',
  forbidden: (role: WorkspaceRole, _action: WorkspaceAction) =>
    `Your role in this workspace (${ROLE_LABELS[role]}) does not allow this. Ask an admin of the workspace.`,
  lastOwner: 'A workspace must keep at least one owner. Make another member owner first.',
  personalNotDeletable: 'Your personal workspace goes only with your account.',
  nameRequired: 'Workspace name is required',
  nameTooLong: 'Workspace name must be 100 characters or fewer',
} as const;

/** Header and query parameter naming the workspace of a call that names no project (DESIGN.md). */
export const WORKSPACE_HEADER = 'X-Workspace-Id';
export const WORKSPACE_PARAM = 'workspaceId';
