import { atom } from 'jotai';

/** Admins only: the Activity view lists every user's jobs. */
export const jobsAllUsersAtom = atom(false);

/** Bumped to make the Activity view read its list again (after an action, or when a realtime event says a job changed). */
export const jobsVersionAtom = atom(0);
export const refreshJobsAtom = atom(null, (_get, set) => set(jobsVersionAtom, (v) => v + 1));
