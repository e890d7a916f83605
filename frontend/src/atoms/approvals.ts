import { atom } from 'jotai';
import { settledAtom } from './settled';
import { fetchApprovalStats } from '../api/approvals';
import { sessionKeyAtom } from './session';

const approvalStatsVersionAtom = atom(0);

/** Pending-approval stats, or null when signed out or when they cannot be read (no badge then). */
export const approvalStatsAtom = atom(async (get) => {
  get(approvalStatsVersionAtom);
  if (!get(sessionKeyAtom)) return null;
  try {
    return await fetchApprovalStats();
  } catch (error) {
    // the spec keeps a failed count load silent: logged only
    console.warn('approval stats unavailable', error);
    return null;
  }
});

export const approvalStatsStateAtom = settledAtom(approvalStatsAtom);

export const refreshApprovalStatsAtom = atom(null, (_get, set) => set(approvalStatsVersionAtom, (v) => v + 1));
