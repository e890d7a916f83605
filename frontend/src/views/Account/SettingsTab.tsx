import { useAtomValue } from 'jotai';
import { useState, type ReactElement } from 'react';
import { currentUserAtom } from '../../atoms/session';
import { Dialog } from '../../components/Dialog';

type Request = 'export' | 'delete';

/**
 * Data export and account deletion are handled by support (the specs give no server handler for either).
 * The buttons say so plainly; nothing here pretends that data was exported or an account deleted.
 */
export function SettingsTab(): ReactElement {
  const user = useAtomValue(currentUserAtom);
  const [open, setOpen] = useState<Request | null>(null);
  const email = user?.email ?? 'your account e-mail';

  return (
    <div className="stack">
      <div className="panel setting-row">
        <div>
          <h2>Export your data</h2>
          <p className="muted">Get a copy of your profile, projects and generated content.</p>
        </div>
        <button type="button" className="button button-secondary" onClick={() => setOpen('export')}>
          Request Data Export
        </button>
      </div>
      <div className="panel setting-row danger-zone">
        <div>
          <h2>Delete account</h2>
          <p className="muted">Permanently remove your account, projects and content.</p>
        </div>
        <button type="button" className="button button-danger" onClick={() => setOpen('delete')}>
          Delete Account
        </button>
      </div>

      {open === 'export' && (
        <Dialog title="Request Data Export" onClose={() => setOpen(null)}>
          <p>
            Data exports are prepared by our support team. Contact support from <strong>{email}</strong> and we will
            send you a copy of your data.
          </p>
          <div className="form-actions">
            <button type="button" className="button button-primary" onClick={() => setOpen(null)}>
              OK
            </button>
          </div>
        </Dialog>
      )}
      {open === 'delete' && (
        <Dialog title="Delete Account" onClose={() => setOpen(null)}>
          <p>
            Account deletion is handled by our support team, so nothing is removed by accident. Contact support from{' '}
            <strong>{email}</strong> to close your account.
          </p>
          <p className="muted">Your account has not been deleted.</p>
          <div className="form-actions">
            <button type="button" className="button button-primary" onClick={() => setOpen(null)}>
              OK
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
