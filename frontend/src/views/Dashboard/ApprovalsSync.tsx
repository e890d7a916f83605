import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useRef } from 'react';
import { APPROVALS_CHANGED_EVENT } from '../../api/approvals';
import { refreshApprovalsListAtom, requestApprovalStatsRefreshAtom } from '../../atoms/approvals';
import { creditSummaryStateAtom } from '../../atoms/credits';
import { viewAtom } from '../../atoms/view';

/** Without a push channel the count is also re-read this often, so expiries reach the badge. */
const STATS_POLL_MS = 60_000;

/**
 * Keeps the approvals badge and list current (001 section 4): the count is re-read, debounced by a second, when
 * the credits change, when a job finished (APPROVALS_CHANGED_EVENT) and once a minute; the list follows on the
 * Approvals view, at most once a minute unless a change forces it. Renders nothing.
 */
export function ApprovalsSync(): null {
  const credits = useAtomValue(creditSummaryStateAtom);
  const view = useAtomValue(viewAtom);
  const requestStats = useSetAtom(requestApprovalStatsRefreshAtom);
  const refreshList = useSetAtom(refreshApprovalsListAtom);
  const lastCredits = useRef<string | null>(null);

  const creditKey = credits?.ok && credits.data ? `${credits.data.credits}:${credits.data.reservedCredits}` : null;
  useEffect(() => {
    if (creditKey === null) return;
    if (lastCredits.current !== null && lastCredits.current !== creditKey) requestStats();
    lastCredits.current = creditKey;
  }, [creditKey, requestStats]);

  useEffect(() => {
    const onChanged = () => {
      requestStats();
      if (view === 'approvals') refreshList({ force: true });
    };
    window.addEventListener(APPROVALS_CHANGED_EVENT, onChanged);
    const poll = setInterval(() => {
      if (document.visibilityState === 'visible') requestStats();
    }, STATS_POLL_MS);
    return () => {
      window.removeEventListener(APPROVALS_CHANGED_EVENT, onChanged);
      clearInterval(poll);
    };
  }, [view, requestStats, refreshList]);

  return null;
}
