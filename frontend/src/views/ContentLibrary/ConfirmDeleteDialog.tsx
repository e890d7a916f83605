import { useState, type ReactElement } from 'react';
import { Dialog } from '../../components/Dialog';

/** Asks before a delete, with the spec's confirmation text. */
export function ConfirmDeleteDialog({ text, onCancel, onConfirm }: { text: string; onCancel: () => void; onConfirm: () => Promise<void> }): ReactElement {
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title="Confirm delete" onClose={onCancel}>
      <p>{text}</p>
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
          {busy ? 'Deleting...' : 'Delete'}
        </button>
      </div>
    </Dialog>
  );
}
