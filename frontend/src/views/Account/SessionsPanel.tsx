import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { endOtherSessions, endSession, fetchSessions, type AccountSession } from '../../api/accountSecurity';
import { apiErrorMessage } from '../../api/client';
import { showToastAtom } from '../../atoms/toast';
import { LoadingState } from '../../components/Spinner';

const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Account → Security: the sessions the person has open; ends any other one, or all others. */
export function SessionsPanel(): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [sessions, setSessions] = useState<AccountSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setSessions(await fetchSessions());
      setError(null);
    } catch (err) {
      setError(apiErrorMessage(err, 'Could not load your sessions.'));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  async function end(session: AccountSession) {
    setBusy(session.id);
    try {
      await endSession(session.id);
      toast({ kind: 'success', message: `Signed out ${session.device}` });
      await load();
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'Could not end the session.') });
    } finally {
      setBusy(null);
    }
  }

  async function endOthers() {
    setBusy('others');
    try {
      const ended = await endOtherSessions();
      toast({ kind: 'success', message: ended === 1 ? 'Signed out 1 other session' : `Signed out ${ended} other sessions` });
      await load();
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'Could not end the sessions.') });
    } finally {
      setBusy(null);
    }
  }

  const others = sessions?.filter((s) => !s.current) ?? [];
  return (
    <section className="panel" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p>Where your account is signed in. Sign out any session you do not recognise.</p>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {!sessions && !error && <LoadingState label="Loading sessions..." />}
      {sessions && (
        <ul className="session-list" aria-label="Open sessions">
          {sessions.map((s) => (
            <li key={s.id} className="session-item">
              <div>
                <p>
                  <strong>{s.device}</strong> {s.current && <span className="pill">This session</span>}
                </p>
                <p className="muted">
                  {s.ipAddress ?? 'Unknown address'} · Started {WHEN.format(new Date(s.createdAt))} · Last seen {WHEN.format(new Date(s.lastSeenAt))}
                </p>
              </div>
              {!s.current && (
                <button type="button" className="button button-secondary" disabled={busy !== null} onClick={() => void end(s)} aria-label={`Sign out ${s.device}, started ${WHEN.format(new Date(s.createdAt))}`}>
                  {busy === s.id ? 'Signing out...' : 'Sign out'}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {others.length > 0 && (
        <button type="button" className="button button-secondary" disabled={busy !== null} onClick={() => void endOthers()}>
          {busy === 'others' ? 'Signing out...' : 'Sign out all other sessions'}
        </button>
      )}
    </section>
  );
}
