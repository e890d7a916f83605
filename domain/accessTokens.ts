/**
 * Personal access tokens (DESIGN.md "Integrations (tokens and webhooks)"): what a token may do, as pure data shared by
 * the server (the scope guard, api/middleware/tokenScopes.ts; the service, services/accounts/accessTokens.ts) and the
 * front end (Account -> Security).
 *
 * A token acts as its user in the workspaces the user belongs to, limited by the scopes chosen when it was made:
 *
 * | scope          | allows the workspace actions                                                   |
 * |----------------|--------------------------------------------------------------------------------|
 * | `read`         | read, download; and reading the user's own profile and list of workspaces      |
 * | `generate`     | edit, generate, assemble (upload, start images and clips, assemble videos)     |
 * | `approve`      | approve (approve or reject pending items)                                      |
 * | `billing:read` | billing, reads only (purchases, spend per member)                              |
 * | `comment`      | comment (comment on items and renders, reply, resolve, edit own comments)      |
 *
 * Never, whatever the scopes: managing members or invitations, buying credits, webhooks, renaming, deleting or
 * transferring a workspace, site administration, and the user's own account beyond reading it (tokens, sessions,
 * password, data exports, deletion). The workspace role check still applies on top: a token of a viewer cannot
 * generate, whatever its scopes.
 */
import type { WorkspaceAction } from './workspaceRoles';

export const TOKEN_SCOPES = ['read', 'generate', 'approve', 'billing:read', 'comment'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** Every token starts with it, so a secret scanner (and the API) tells a token from a session token at a glance. */
export const ACCESS_TOKEN_PREFIX = 'rs_pat_';
/** How much of the token a list shows (the prefix and the first 5 random characters): enough to tell tokens apart. */
export const ACCESS_TOKEN_SHOWN_LENGTH = 12;
export const ACCESS_TOKEN_NAME_MAX = 100;
/** Tokens one user may hold at once (revoked and expired ones do not count). */
export const ACCESS_TOKENS_PER_USER = 50;
/** The longest expiry a token may be given: a year. */
export const ACCESS_TOKEN_MAX_DAYS = 366;

export const TOKEN_SCOPE_LABELS: Record<TokenScope, { label: string; description: string }> = {
  read: { label: 'Read', description: 'Projects, library, approvals, jobs, credits and your workspaces' },
  generate: { label: 'Generate', description: 'Upload renders, start images and clips, assemble videos (spends credits)' },
  approve: { label: 'Approve', description: 'Approve or reject pending items (spends credits)' },
  'billing:read': { label: 'Billing (read)', description: 'Purchases and spend per member' },
  comment: { label: 'Comment', description: 'Comment on items and renders, reply and resolve threads' },
};

export function isTokenScope(value: unknown): value is TokenScope {
  return typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);
}

/** The scope each workspace action needs from a token, or null for actions a token never does. */
export const TOKEN_SCOPE_OF_ACTION = {
  read: 'read',
  download: 'read',
  comment: 'comment',
  edit: 'generate',
  generate: 'generate',
  assemble: 'generate',
  approve: 'approve',
  // reads only: the guard refuses a billing write (buying credits) whatever the scopes
  billing: 'billing:read',
  manageMembers: null,
  webhooks: null,
  brand: null,
  own: null,
} as const satisfies Record<WorkspaceAction, TokenScope | null>;

export const ACCESS_TOKEN_MSG = {
  nameRequired: 'Token name is required',
  nameTooLong: `Token name must be ${ACCESS_TOKEN_NAME_MAX} characters or fewer`,
  scopesRequired: 'Choose at least one scope',
  scopeUnknown: `Scopes must be among ${TOKEN_SCOPES.join(', ')}`,
  expiryPast: 'The expiry must be in the future',
  expiryTooFar: `The expiry must be within ${ACCESS_TOKEN_MAX_DAYS} days`,
  tooMany: `You have ${ACCESS_TOKENS_PER_USER} active access tokens, the most allowed. Revoke one you no longer use first.`,
  notFound: 'Access token not found',
  invalid: 'Invalid, expired or revoked access token',
  missingScope: (scope: TokenScope) => `This token lacks the "${scope}" scope`,
  neverManage: 'Access tokens cannot manage members, billing, webhooks or tokens',
  neverAccount: 'Access tokens cannot change your account, its sessions, tokens or data exports; sign in to do that',
  neverAdmin: 'Access tokens cannot be used for site administration',
  notAccepted: 'This route does not accept access tokens; sign in to use it',
  notSignedOut: 'An access token is not a session and cannot be signed out; revoke it on the Security page of your account',
} as const;

/** The codes of the guard's refusals (403). */
export const TOKEN_SCOPE_MISSING = 'TOKEN_SCOPE_MISSING';
export const TOKEN_NOT_ALLOWED = 'TOKEN_NOT_ALLOWED';
