import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import type { DataExportView } from '../../api/accountData';
import { apiErrorMessage } from '../../api/client';
import { deleteAccountAtom, latestExportStateAtom, refreshExportAtom, requestExportAtom } from '../../atoms/accountData';
import { currentUserAtom } from '../../atoms/session';
import { Dialog } from '../../components/Dialog';
import { ProgressBar } from '../../components/ProgressBar';
import { TextField } from '../../components/TextField';
import { confirmsEmail } from '../../../../domain/accountData';
import { NotificationEmailPanel } from './NotificationEmailPanel';
import './settings.css';

const POLL_MS = 1000;

function isRunning(view: DataExportView | null | undefined): boolean {
  return view?.status === 'pending' || view?.status === 'processing';
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function ExportStatus({ view }: { view: DataExportView }): ReactElement {
  if (isRunning(view)) {
    return (
      <div className="export-status" aria-live="polite">
        <ProgressBar label="Data export progress" percent={view.progress} />
        <p className="muted">
          {view.message || 'Preparing your export'} · {view.progress}%
        </p>
      </div>
    );
  }
  if (view.status === 'completed' && view.downloadUrl) {
    const details = [view.sizeBytes !== null ? formatBytes(view.sizeBytes) : null, view.fileCount !== null ? `${view.fileCount} file${view.fileCount === 1 ? '' : 's'}` : null].filter(Boolean).join(', ');
    return (
      <div className="export-status" aria-live="polite">
        <p>
          Your export is ready:{' '}
          <a className="export-link" href={view.downloadUrl} download={view.fileName ?? undefined}>
            Download your data
          </a>
          {details && <span className="muted"> ({details})</span>}
        </p>
        {view.expiresAt && <p className="muted">Link valid until {new Date(view.expiresAt).toLocaleString()}</p>}
      </div>
    );
  }
  if (view.status === 'failed') {
    return (
      <div className="export-status">
        <p className="form-error" role="alert">
          {view.error ?? 'The export failed. Please try again.'}
        </p>
      </div>
    );
  }
  return (
    <div className="export-status">
      <p className="muted">{view.message || 'This download link has expired. Request a new export.'}</p>
    </div>
  );
}

function DeleteAccountDialog({ email, onClose }: { email: string; onClose: () => void }): ReactElement {
  const deleteAccount = useSetAtom(deleteAccountAtom);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const matches = confirmsEmail(typed, email);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!matches || busy) return;
    setBusy(true);
    setError(null);
    try {
      // on success the session ends and the landing page replaces this view
      await deleteAccount(typed);
    } catch (err) {
      setError(apiErrorMessage(err, 'Could not delete your account. Please check your connection and try again.'));
      setBusy(false);
    }
  }

  return (
    <Dialog title="Delete Account" onClose={busy ? () => undefined : onClose}>
      <form className="delete-account-form" onSubmit={(e) => void submit(e)}>
        <p>
          This permanently deletes your account and your personal workspace: its projects, renders, images, clips and
          videos, items waiting for approval, data exports and credit history. Generations you started that are still
          running are stopped. What you made in workspaces you share with others stays there. This cannot be undone.
        </p>
        <TextField
          label="Type your e-mail address to confirm"
          type="email"
          name="confirmEmail"
          autoComplete="off"
          placeholder={email}
          value={typed}
          hint={<>Your e-mail: {email}</>}
          onChange={(e) => setTyped(e.target.value)}
        />
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-danger" disabled={!matches || busy}>
            {busy ? 'Deleting...' : 'Permanently delete account'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Settings: Request Data Export (progress, then a download link valid 24 hours) and Delete Account (confirmed by typing the e-mail). */
export function SettingsTab(): ReactElement {
  const user = useAtomValue(currentUserAtom);
  const latest = useAtomValue(latestExportStateAtom);
  const refresh = useSetAtom(refreshExportAtom);
  const requestExport = useSetAtom(requestExportAtom);
  const [requested, setRequested] = useState<DataExportView | null>(null);
  const [requesting, setRequesting] = useState(false);
  const [exportError, setExportError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);

  const stored = latest?.ok ? latest.data : null;
  // the request's own answer until the status read has caught up with it
  const shown = requested && (!stored || stored.number < requested.number) ? requested : stored;
  const running = isRunning(shown);

  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(refresh, POLL_MS);
    return () => clearInterval(timer);
  }, [running, refresh]);

  async function startExport() {
    setRequesting(true);
    setExportError(null);
    try {
      setRequested(await requestExport());
    } catch (err) {
      setExportError(apiErrorMessage(err, 'Could not start the data export. Please try again.'));
    } finally {
      setRequesting(false);
    }
  }

  return (
    <div className="stack">
      <NotificationEmailPanel />
      <section className="panel setting-row" aria-labelledby="export-heading">
        <div className="setting-text">
          <h2 id="export-heading">Export your data</h2>
          <p className="muted">A zip of your profile, projects, every item&apos;s details, your credit history and all your files.</p>
        </div>
        <button type="button" className="button button-secondary" onClick={() => void startExport()} disabled={requesting || running}>
          Request Data Export
        </button>
        {exportError && (
          <div className="export-status">
            <p className="form-error" role="alert">
              {exportError}
            </p>
          </div>
        )}
        {latest && !latest.ok && !shown && (
          <div className="export-status">
            <p className="form-error" role="alert">
              {apiErrorMessage(latest.error, 'Could not load your data export. Please try again.')}
            </p>
          </div>
        )}
        {shown && <ExportStatus view={shown} />}
      </section>
      <section className="panel setting-row danger-zone" aria-labelledby="delete-heading">
        <div className="setting-text">
          <h2 id="delete-heading">Delete account</h2>
          <p className="muted">Permanently remove your account, projects and content.</p>
        </div>
        <button type="button" className="button button-danger" onClick={() => setDeleting(true)} disabled={!user}>
          Delete Account
        </button>
      </section>
      {deleting && user && <DeleteAccountDialog email={user.email} onClose={() => setDeleting(false)} />}
    </div>
  );
}
