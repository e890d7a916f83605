import { atom } from 'jotai';
import { settledAtom } from './settled';
import { fetchApprovalStats, fetchApprovals } from '../api/approvals';
import { sessionKeyAtom } from './session';

/** Triggers within this window give one stats read (001 section 9: approval badge refresh debounce 1 s). */
export const STATS_REFRESH_DEBOUNCE_MS = 1000;
/** The list is re-read at most this often unless a refresh is forced (001 section 4). */
export const LIST_REFRESH_MIN_INTERVAL_MS = 60_000;

const approvalStatsVersionAtom = atom<{ n: number; fresh: boolean }>({ n: 0, fresh: false });

/** Pending-approval stats, or null when signed out or when they cannot be read (no badge then). */
export const approvalStatsAtom = atom(async (get) => {
  const { fresh } = get(approvalStatsVersionAtom);
  if (!get(sessionKeyAtom)) return null;
  try {
    return await fetchApprovalStats({ fresh });
  } catch (error) {
    // the spec keeps a failed count load silent: logged only
    console.warn('approval stats unavailable', error);
    return null;
  }
});

export const approvalStatsStateAtom = settledAtom(approvalStatsAtom);

/** Re-reads the stats now (fresh by default: past the 5 s cache). */
export const refreshApprovalStatsAtom = atom(null, (_get, set, options: { fresh: boolean } = { fresh: true }) =>
  set(approvalStatsVersionAtom, (v) => ({ n: v.n + 1, fresh: options.fresh })),
);

let statsTimer: ReturnType<typeof setTimeout> | null = null;

/** Asks for a stats read in a second; more asks within that second are folded into the same read. */
export const requestApprovalStatsRefreshAtom = atom(null, (_get, set) => {
  if (statsTimer) clearTimeout(statsTimer);
  statsTimer = setTimeout(() => {
    statsTimer = null;
    set(refreshApprovalStatsAtom, { fresh: true });
  }, STATS_REFRESH_DEBOUNCE_MS);
});

const approvalsListVersionAtom = atom<{ n: number; fresh: boolean }>({ n: 0, fresh: false });

/** The pending items, newest first; empty when signed out. Rejects when the API cannot answer. */
export const approvalsListAtom = atom(async (get) => {
  const { fresh } = get(approvalsListVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchApprovals({ fresh });
});

export const approvalsListStateAtom = settledAtom(approvalsListAtom);

let lastListRefresh = 0;

/** Re-reads the list: at most once a minute, unless `force` (after a decision, a new item, a Retry). */
export const refreshApprovalsListAtom = atom(null, (_get, set, options: { force: boolean }) => {
  const now = Date.now();
  if (!options.force && now - lastListRefresh < LIST_REFRESH_MIN_INTERVAL_MS) return;
  lastListRefresh = now;
  set(approvalsListVersionAtom, (v) => ({ n: v.n + 1, fresh: options.force }));
});
