import { useAtomValue } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { realtimePausedAtom, realtimeRetryAtom } from '../../atoms/realtime';
import '../../components/PendingCostNotice.css';
import './LiveUpdatesNotice.css';

/** A stream that comes back within this long (a restart, a leader tab handing over) shows no notice. */
export const PAUSED_NOTICE_DELAY_MS = 2000;

export const LIVE_UPDATES_PAUSED = 'Live updates paused';
export const LIVE_UPDATES_PAUSED_DETAIL = 'The balance and approvals are checked every minute until they resume.';

/**
 * Says so when the event stream is down or refused (e.g. the account's stream limit is reached from other
 * browsers), so a page that stops following changes does not look live; the stream keeps retrying with backoff and
 * "Reconnect now" tries at once.
 */
export function LiveUpdatesNotice(): ReactElement | null {
  const paused = useAtomValue(realtimePausedAtom);
  const retry = useAtomValue(realtimeRetryAtom);
  const [shown, setShown] = useState(false);

  useEffect(() => {
    if (!paused) {
      setShown(false);
      return;
    }
    const timer = window.setTimeout(() => setShown(true), PAUSED_NOTICE_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [paused]);

  if (!shown) return null;
  return (
    <div className="notice notice-amber live-updates-notice" role="status">
      <p>
        <strong>{LIVE_UPDATES_PAUSED}.</strong> {LIVE_UPDATES_PAUSED_DETAIL}
      </p>
      {retry && (
        <div className="notice-actions">
          <button type="button" className="button button-secondary" onClick={() => retry.run()}>
            Reconnect now
          </button>
        </div>
      )}
    </div>
  );
}
