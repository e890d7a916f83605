import { atom } from 'jotai';
import { settledAtom } from './settled';
import { changePassword, fetchProfile, updateProfileName, type ChangePasswordInput } from '../api/profile';
import { reloadSessionAtom, sessionKeyAtom } from './session';

const profileVersionAtom = atom(0);

export const profileAtom = atom(async (get) => {
  get(profileVersionAtom);
  if (!get(sessionKeyAtom)) return null;
  return fetchProfile();
});

export const profileStateAtom = settledAtom(profileAtom);

export const reloadProfileAtom = atom(null, (_get, set) => set(profileVersionAtom, (v) => v + 1));

/** Saves the name, then re-reads the profile and the session (the sidebar shows the name too). */
export const saveProfileNameAtom = atom(null, async (_get, set, name: string) => {
  await updateProfileName(name);
  set(profileVersionAtom, (v) => v + 1);
  await set(reloadSessionAtom);
});

export const changePasswordAtom = atom(null, async (_get, _set, input: ChangePasswordInput) => {
  await changePassword(input);
});
