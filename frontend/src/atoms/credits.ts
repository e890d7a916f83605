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

/**
 * What the balance is now, as one value that changes when it does ('credits/reserved'), or null before the first
 * answer: a page that judges a paid action (the start rule) reads that again when this changes, so it follows a
 * purchase, a teammate's charge or a release as the sidebar does (the realtime `credits` event refreshes the summary).
 */
export const balanceKeyAtom = atom((get) => {
  const summary = get(creditSummaryStateAtom);
  return summary?.ok && summary.data ? `${summary.data.credits}/${summary.data.reservedCredits}` : null;
});
