import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useRef } from 'react';
import { APPROVALS_CHANGED_EVENT } from '../../api/approvals';
import { refreshApprovalsListAtom, requestApprovalStatsRefreshAtom } from '../../atoms/approvals';
import { creditSummaryStateAtom } from '../../atoms/credits';
import { viewAtom } from '../../atoms/view';

/**
 * Keeps the approvals badge and list current (001 section 4): the count is re-read, debounced by a second, when
 * the credits change and when a job finished (APPROVALS_CHANGED_EVENT); the list follows on the Approvals view,
 * at most once a minute unless a change forces it. Realtime approval events and the polling while the stream is
 * down come through RealtimeSync. Renders nothing.
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
    return () => window.removeEventListener(APPROVALS_CHANGED_EVENT, onChanged);
  }, [view, requestStats, refreshList]);

  return null;
}
