import { atom } from 'jotai';
import { fetchPurchases, fetchPurchasing, fetchTransactions, fetchWeeklyUsage } from '../api/billing';
import { refreshCreditsAtom } from './credits';
import { sessionKeyAtom } from './session';
import { settledAtom } from './settled';

const billingVersionAtom = atom(0);

/**
 * How credits are bought here (live, test, unavailable), read once a session: the Buy buttons, the approval queue's
 * rejection note and the pending-cap notices offer only the ways forward this installation has.
 */
export const purchasingAtom = atom(async (get) => {
  if (!get(sessionKeyAtom)) return undefined;
  return fetchPurchasing();
});
export const purchasingStateAtom = settledAtom(purchasingAtom);

/** The user's credit purchases, newest first. */
export const purchasesAtom = atom(async (get) => {
  get(billingVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchPurchases();
});
export const purchasesStateAtom = settledAtom(purchasesAtom);

/** Credits added and spent per week (the Billing tab's chart). */
export const weeklyUsageAtom = atom(async (get) => {
  get(billingVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchWeeklyUsage();
});
export const weeklyUsageStateAtom = settledAtom(weeklyUsageAtom);

/** The page of the credit transactions list on show. */
export const transactionsPageAtom = atom(1);

export const transactionsAtom = atom(async (get) => {
  get(billingVersionAtom);
  const page = get(transactionsPageAtom);
  if (!get(sessionKeyAtom)) return { transactions: [], page, pageSize: 50, total: 0 };
  return fetchTransactions(page);
});
export const transactionsStateAtom = settledAtom(transactionsAtom);

/** After a balance change (a confirmed purchase): re-read the balance, purchases, usage and transactions. */
export const refreshBillingAtom = atom(null, (_get, set) => {
  set(billingVersionAtom, (v) => v + 1);
  set(refreshCreditsAtom);
});
