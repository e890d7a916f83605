import { atom } from 'jotai';
import { settledAtom } from './settled';
import { fetchCreditSummary } from '../api/credits';
import { sessionKeyAtom } from './session';

const creditsVersionAtom = atom(0);

/** The signed-in user's credit summary; null when signed out. Rejects when the API cannot answer. */
export const creditSummaryAtom = atom(async (get) => {
  get(creditsVersionAtom);
  if (!get(sessionKeyAtom)) return null;
  return fetchCreditSummary();
});

export const creditSummaryStateAtom = settledAtom(creditSummaryAtom);

export const refreshCreditsAtom = atom(null, (_get, set) => set(creditsVersionAtom, (v) => v + 1));
