import { atom } from 'jotai';
import { inviteTokenFromSearch } from '../api/workspaceAddress';
import { forgetCachedReads } from './session';
import { followAddressAtom } from './view';

/**
 * The invitation being answered (`?view=invite&token=...`, read once at start). Kept here rather than only in the
 * address: a sign-up or sign-in on the invitation page resets the address, and the page must stay until the user
 * accepts or leaves it.
 */
export const inviteTokenAtom = atom<string | null>(inviteTokenFromSearch(window.location.search));

/** Leaves the invitation page for the dashboard (null: the workspace the address names, usually the personal one). */
export const leaveInvitationAtom = atom(null, (_get, set, joinedWorkspaceId: string | null) => {
  set(inviteTokenAtom, null);
  const url = new URL(window.location.href);
  url.searchParams.delete('token');
  url.searchParams.delete('view');
  if (joinedWorkspaceId) url.searchParams.set('workspace', joinedWorkspaceId);
  window.history.replaceState(null, '', `${url.pathname}${url.search}`);
  forgetCachedReads();
  set(followAddressAtom);
});
