import { useState, type ReactElement, type ReactNode } from 'react';
import { Dialog } from './Dialog';

interface ConfirmDeleteDialogProps {
  title: string;
  /** The confirmation text, shown as one paragraph. */
  children: ReactNode;
  onCancel: () => void;
  onConfirm: () => Promise<void>;
  /** the confirming button's text, 'Delete' unless given (e.g. 'Remove') */
  confirmLabel?: string;
  /** its text while the action runs, 'Deleting...' unless given */
  busyLabel?: string;
}

/** Asks before a delete; both buttons are disabled while the delete runs. */
export function ConfirmDeleteDialog({ title, children, onCancel, onConfirm, confirmLabel = 'Delete', busyLabel = 'Deleting...' }: ConfirmDeleteDialogProps): ReactElement {
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title={title} onClose={onCancel}>
      <p>{children}</p>
      <div className="form-actions">
        <button type="button" className="button button-ghost" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          className="button button-danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await onConfirm();
            } finally {
              setBusy(false);
            }
          }}
        >
          {busy ? busyLabel : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
