import { atom } from 'jotai';
import { deleteAccount, fetchLatestDataExport, requestDataExport } from '../api/accountData';
import { sessionKeyAtom, signOutAtom } from './session';
import { settledAtom } from './settled';

const exportVersionAtom = atom(0);

/** The user's latest data export (status, progress, link), re-read on refresh. */
export const latestExportAtom = atom(async (get) => {
  get(exportVersionAtom);
  if (!get(sessionKeyAtom)) return null;
  return fetchLatestDataExport();
});

export const latestExportStateAtom = settledAtom(latestExportAtom);

export const refreshExportAtom = atom(null, (_get, set) => set(exportVersionAtom, (v) => v + 1));

export const requestExportAtom = atom(null, async (_get, set) => {
  const started = await requestDataExport();
  set(exportVersionAtom, (v) => v + 1);
  return started;
});

/** Set once this tab deleted its account: the landing page that follows says so until dismissed or a new sign-in. */
export const accountDeletedNoticeAtom = atom(false);

/** Deletes the account, then signs out here too (the server already ended every session). */
export const deleteAccountAtom = atom(null, async (_get, set, confirmEmail: string) => {
  await deleteAccount(confirmEmail);
  set(accountDeletedNoticeAtom, true);
  await set(signOutAtom);
});
