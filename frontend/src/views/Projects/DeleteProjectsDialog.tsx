import { useState, type ReactElement } from 'react';
import { Dialog } from '../../components/Dialog';

/** The confirmation before a bulk delete in Edit Projects mode. */
export function DeleteProjectsDialog({ count, onCancel, onConfirm }: { count: number; onCancel: () => void; onConfirm: () => Promise<void> }): ReactElement {
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title={`Delete ${count} project(s)?`} onClose={onCancel}>
      <p>
        Are you sure you want to delete {count === 1 ? 'this project' : `these ${count} projects`}? All of their renders, images, clips and videos
        will be deleted. This action cannot be undone.
      </p>
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
            await onConfirm();
          }}
        >
          {busy ? 'Deleting...' : 'Delete'}
        </button>
      </div>
    </Dialog>
  );
}
