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

/**
 * The credit transactions pages walked so far, by the cursor each was asked with (null: the first page); the last is
 * on show. Next pushes the page's nextCursor, Previous pops: every page is read by keyset, however deep.
 */
const transactionsWalkAtom = atom<{ key: string | null; cursors: Array<string | null> }>({ key: null, cursors: [null] });
/** The walk of the signed-in user in the workspace on show: another session or workspace starts at the first page. */
export const transactionsCursorsAtom = atom(
  (get): Array<string | null> => {
    const walk = get(transactionsWalkAtom);
    return walk.key === get(sessionKeyAtom) ? walk.cursors : [null];
  },
  (get, set, cursors: Array<string | null>) => set(transactionsWalkAtom, { key: get(sessionKeyAtom), cursors }),
);

export const transactionsAtom = atom(async (get) => {
  get(billingVersionAtom);
  const cursors = get(transactionsCursorsAtom);
  if (!get(sessionKeyAtom)) return { transactions: [], page: cursors.length, pageSize: 50, total: 0, nextCursor: null };
  return fetchTransactions(cursors[cursors.length - 1] ?? null);
});
export const transactionsStateAtom = settledAtom(transactionsAtom);

/** After a balance change (a confirmed purchase): re-read the balance, purchases, usage and transactions. */
export const refreshBillingAtom = atom(null, (_get, set) => {
  set(billingVersionAtom, (v) => v + 1);
  set(refreshCreditsAtom);
});
