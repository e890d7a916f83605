import { atom } from 'jotai';
import { roleAllows, type WorkspaceAction, type WorkspaceRole } from '../../../domain/workspaceRoles';
import { createWorkspace, fetchWorkspaces, type Workspace } from '../api/workspaces';
import { hrefForWorkspace } from './viewUrl';
import { currentUserAtom, forgetCachedReads, sessionKeyAtom } from './session';
import { settledAtom } from './settled';
import { followAddressAtom, viewAtom, workspaceParamAtom } from './view';

const workspacesVersionAtom = atom(0);

/** The user's workspaces with their role in each: personal first, then the others by name (GET /api/workspaces). */
export const workspacesAtom = atom(async (get): Promise<Workspace[]> => {
  get(workspacesVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchWorkspaces();
});
export const workspacesStateAtom = settledAtom(workspacesAtom);

/** After creating, renaming, leaving or deleting a workspace, or a role change: the list (and roles) are read again. */
export const refreshWorkspacesAtom = atom(null, (_get, set) => set(workspacesVersionAtom, (v) => v + 1));

/**
 * Bumped by the event stream's `workspace` events (members or invitations changed, renamed: any member or admin
 * did it, in any tab): the Members page reads its lists again, and the workspace list too.
 */
export const workspaceChangesAtom = atom(0);
export const workspaceChangedAtom = atom(null, (_get, set) => {
  set(workspaceChangesAtom, (v) => v + 1);
  set(workspacesVersionAtom, (v) => v + 1);
});

export interface CurrentWorkspace {
  id: string;
  personal: boolean;
  /** undefined while the list loads (a team workspace only: the personal one is known at once) */
  name: string | undefined;
  role: WorkspaceRole | undefined;
  /** undefined while the list loads */
  memberCount: number | undefined;
}

/**
 * The workspace every view shows: the address's, or the personal one (id = the user's id, the user its owner, so a
 * person working alone never waits for the list). null once the list shows the user is no member of the address's.
 */
export const currentWorkspaceAtom = atom((get): CurrentWorkspace | null | undefined => {
  const user = get(currentUserAtom);
  if (!user) return undefined;
  const id = get(workspaceParamAtom) ?? user.id;
  const listed = get(workspacesStateAtom);
  const entry = listed?.ok ? listed.data.find((w) => w.id === id) : undefined;
  if (id === user.id) return { id, personal: true, name: entry?.name ?? 'Personal', role: 'owner', memberCount: entry?.memberCount };
  if (entry) return { id, personal: entry.personal, name: entry.name, role: entry.role, memberCount: entry.memberCount };
  if (listed?.ok) return null;
  return { id, personal: false, name: undefined, role: undefined, memberCount: undefined };
});

/**
 * The app left a workspace the address named because the user is no member of it (removed while working there, or a
 * link to one they never joined): what the notice says until it is dismissed. Kept here, not in the shell's state,
 * because the switch to the personal workspace suspends and remounts the views; `userId` keeps it to that account.
 */
export const workspaceEndedNoticeAtom = atom<{ userId: string; workspaceName: string | null } | null>(null);

/** Whether the user's role in the current workspace allows `action`; false while it is not known yet. */
export const workspaceAllowsAtom = atom((get) => {
  const role = get(currentWorkspaceAtom)?.role;
  return (action: WorkspaceAction) => role !== undefined && roleAllows(role, action);
});

/**
 * Switches to a workspace (null: the personal one): the address names it, a history entry is pushed so Back
 * returns, the previous workspace's screens (open project, selections) are dropped and every resource re-reads.
 */
export const switchWorkspaceAtom = atom(null, (get, set, workspaceId: string | null, options: { replace?: boolean } = {}) => {
  const user = get(currentUserAtom);
  const target = workspaceId && workspaceId !== user?.id ? workspaceId : null;
  if (target === get(workspaceParamAtom)) return;
  const href = hrefForWorkspace(window.location.href, target, get(viewAtom));
  if (options.replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  forgetCachedReads();
  set(followAddressAtom);
});

/** "New workspace": creates it (the user its owner, 0 credits) and switches to it. */
export const createWorkspaceAtom = atom(null, async (_get, set, name: string) => {
  const workspace = await createWorkspace(name);
  set(refreshWorkspacesAtom);
  set(switchWorkspaceAtom, workspace.id);
  return workspace;
});
