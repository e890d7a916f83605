/**
 * The current workspace lives in the address, `?workspace=<id>`; absent means the user's personal workspace
 * (TEAMS.md "Frontend contract"). Pure rules, shared by the HTTP client (which names the workspace on every call)
 * and the atoms (which follow it).
 */
export const WORKSPACE_ADDRESS_PARAM = 'workspace';

const ID = /^[0-9a-f-]{36}$/i;

/** The workspace the address names, or null for the personal one (also for a malformed id). */
export function workspaceFromSearch(search: string): string | null {
  const id = new URLSearchParams(search).get(WORKSPACE_ADDRESS_PARAM);
  return id && ID.test(id) ? id.toLowerCase() : null;
}

/** The invitation page: `?view=invite&token=<token>`, reachable signed out. */
export function inviteTokenFromSearch(search: string): string | null {
  const params = new URLSearchParams(search);
  if (params.get('view') !== 'invite') return null;
  const token = params.get('token');
  return token && /^[A-Za-z0-9_-]{16,200}$/.test(token) ? token : null;
}
