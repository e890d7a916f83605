import { atom } from 'jotai';
import { unwrap } from 'jotai/utils';
import { forgetApprovals } from '../api/approvals';
import { fetchCurrentUser, signIn, signOut, signUp, type SecondStepNeeded, type SignInInput, type SignUpInput, type User } from '../api/auth';
import { forgetProjects } from '../api/projects';
import { clearLandingStateAtom, resetViewAtom, workspaceParamAtom } from './view';

export interface Session {
  /** null when signed out */
  user: User | null;
  /** true when the session could not be read at all (network, server down) */
  failed: boolean;
  /** the auth epoch this answer belongs to: see sessionKeyAtom */
  epoch: number;
}

/** Bumped by sign-in, sign-up and sign-out. */
const authEpochAtom = atom(0);

/** A new session (or workspace) never sees what the short client caches kept for the previous one. */
export function forgetCachedReads(): void {
  forgetProjects();
  forgetApprovals();
}
/** Bumped to re-read the same session (after a name change, or a retry). */
const sessionReloadAtom = atom(0);

const sessionRequestAtom = atom(async (get): Promise<Session> => {
  const epoch = get(authEpochAtom);
  get(sessionReloadAtom);
  try {
    return { user: await fetchCurrentUser(), failed: false, epoch };
  } catch {
    return { user: null, failed: true, epoch };
  }
});

const settledSessionAtom = unwrap(sessionRequestAtom, (previous) => previous);

/**
 * undefined until the first answer. While the same session is re-read it keeps the previous answer (no flashing);
 * after a sign-in, sign-up or sign-out nobody is signed in until the server says who is, so the previous user's
 * screens (and their reads, which the server would now refuse) are gone at once.
 */
export const sessionAtom = atom((get): Session | undefined => {
  const session = get(settledSessionAtom);
  const epoch = get(authEpochAtom);
  if (session && session.epoch !== epoch) return { user: null, failed: false, epoch };
  return session;
});

/** The signed-in user: undefined while the first answer is pending, null when signed out. */
export const currentUserAtom = atom((get) => get(sessionAtom)?.user);

/**
 * The parameter of every user-scoped resource atom: it changes when a different session starts or ends, and when
 * the user switches workspace (every resource is the current workspace's), not when the same user's details are
 * re-read, so a name change does not reload credits. The personal workspace's id is the user's.
 */
export const sessionKeyAtom = atom((get) => {
  const session = get(sessionAtom);
  if (!session?.user) return null;
  const workspaceId = get(workspaceParamAtom) ?? session.user.id;
  return `${session.user.id}:${session.epoch}:${workspaceId}`;
});

export const reloadSessionAtom = atom(null, async (get, set) => {
  set(sessionReloadAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

/** Each auth action resolves once the new session has been read, so its button stays busy until the screen changes. */
export const signUpAtom = atom(null, async (get, set, input: SignUpInput) => {
  await signUp(input);
  // a new account starts on the default view: nothing of the address (#pricing, a shared ?project=) carries over
  set(resetViewAtom);
  forgetCachedReads();
  set(authEpochAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

/** Resolves with the second step when the account has two-factor sign-in (nothing changes until it is done). */
export const signInAtom = atom(null, async (_get, set, input: SignInInput): Promise<SecondStepNeeded | null> => {
  const answer = await signIn(input);
  if ('secondFactorRequired' in answer) return answer;
  await set(signedInAtom);
  return null;
});

/** A session began (after a password, its second step, or a passkey): the app starts from it. */
export const signedInAtom = atom(null, async (get, set) => {
  set(clearLandingStateAtom);
  forgetCachedReads();
  set(authEpochAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

/**
 * The session ended without this tab signing out (signed out in another tab or device, expired, revoked by a
 * password change, the account deleted; the event stream tells): the app forgets it exactly as after a sign-out
 * and shows whoever the server says is signed in now (nobody, or the account another tab signed in to).
 */
export const sessionEndedAtom = atom(null, async (get, set) => {
  set(resetViewAtom);
  forgetCachedReads();
  set(authEpochAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

export const signOutAtom = atom(null, async (_get, set) => {
  try {
    await signOut();
  } finally {
    // re-read the session either way: if the server kept it, the dashboard stays, which is the truth
    await set(sessionEndedAtom);
  }
});
