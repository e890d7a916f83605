import type { ReactElement } from 'react';
import { Dialog } from '../../components/Dialog';

/** The short quick-start dialog of a draft (001 section 2). */
export function QuickStartDialog({ onClose }: { onClose: () => void }): ReactElement {
  return (
    <Dialog title="Quick start" onClose={onClose}>
      <ol className="quick-start-list">
        <li>Upload up to 4 renders.</li>
        <li>Select the images to change.</li>
        <li>Pick a mode and model, describe the change and press Enter.</li>
        <li>Use Redo or View history to go back; download or move the draft to projects when done.</li>
      </ol>
      <div className="form-actions">
        <button type="button" className="button button-primary" onClick={onClose}>
          Got it
        </button>
      </div>
    </Dialog>
  );
}
