import { atom } from 'jotai';
import { unwrap } from 'jotai/utils';
import { fetchCurrentUser, signIn, signOut, signUp, type SignInInput, type SignUpInput, type User } from '../api/auth';
import { resetViewAtom } from './view';

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

/** undefined until the first answer; while a re-read is in flight it keeps the previous answer (no flashing). */
export const sessionAtom = unwrap(sessionRequestAtom, (previous) => previous);

/** The signed-in user: undefined while the first answer is pending, null when signed out. */
export const currentUserAtom = atom((get) => get(sessionAtom)?.user);

/**
 * The parameter of every user-scoped resource atom: it changes when a different session starts or ends,
 * not when the same user's details are re-read, so a name change does not reload credits.
 */
export const sessionKeyAtom = atom((get) => {
  const session = get(sessionAtom);
  return session?.user ? `${session.user.id}:${session.epoch}` : null;
});

export const reloadSessionAtom = atom(null, async (get, set) => {
  set(sessionReloadAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

/** Each auth action resolves once the new session has been read, so its button stays busy until the screen changes. */
export const signUpAtom = atom(null, async (get, set, input: SignUpInput) => {
  await signUp(input);
  set(authEpochAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

export const signInAtom = atom(null, async (get, set, input: SignInInput) => {
  await signIn(input);
  set(authEpochAtom, (v) => v + 1);
  await get(sessionRequestAtom);
});

export const signOutAtom = atom(null, async (get, set) => {
  try {
    await signOut();
  } finally {
    // re-read the session either way: if the server kept it, the dashboard stays, which is the truth
    set(resetViewAtom);
    set(authEpochAtom, (v) => v + 1);
    await get(sessionRequestAtom);
  }
});
