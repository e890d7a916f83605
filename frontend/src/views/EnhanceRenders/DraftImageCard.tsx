import type { ReactElement } from 'react';
import { Icon } from '../../components/Icon';
import type { WorkspaceImage } from './draftImages';

interface DraftImageCardProps {
  image: WorkspaceImage;
  selected: boolean;
  syncOn: boolean;
  pinned: boolean;
  processing: boolean;
  reverting: boolean;
  onToggleSelect: () => void;
  onPin: () => void;
  onHistory: () => void;
  onDownload: () => void;
  onRedo: () => void;
  onRemove: () => void;
  onRetry: () => void;
  onDismiss: () => void;
}

/**
 * One draft image (001 section 2): Select, Pin style (sync mode only), View history, Download, Redo (only with a
 * previous version) and Remove. A pinned style reference is never a target, so it cannot be selected. When the
 * image's latest job failed, the card says why with Retry and Dismiss, and keeps saying it until one is pressed.
 */
export function DraftImageCard(props: DraftImageCardProps): ReactElement {
  const { image, selected, syncOn, pinned, processing, reverting } = props;
  const busy = processing || reverting || image.uploading;
  const saved = !image.uploading;
  const failure = !busy && image.failure ? image.failure : null;
  const failureId = `draft-failure-${image.id}`;
  return (
    <li className={`draft-card${selected ? ' draft-card-selected' : ''}${pinned ? ' draft-card-pinned' : ''}${failure ? ' draft-card-failed' : ''}`} aria-label={image.name}>
      <div className="draft-card-media">
        <img src={image.displayUrl} alt={image.name} decoding="async" />
        {pinned && <span className="draft-card-tag">Style reference</span>}
        {busy && (
          <span className="draft-card-overlay" role="status">
            <span className="spinner" aria-hidden="true" />
            {reverting ? 'Reverting…' : processing ? 'Processing…' : 'Uploading…'}
          </span>
        )}
      </div>
      <div className="draft-card-body">
        {failure && (
          <div className="draft-card-failure" role="alert" aria-labelledby={failureId}>
            <p id={failureId}>
              <strong>Last run failed:</strong> {failure.reason}
            </p>
            <div className="draft-card-failure-actions">
              <button type="button" className="button button-secondary button-small" aria-label={`Retry ${image.name}`} onClick={props.onRetry}>
                <Icon name="undo" size={16} /> Retry
              </button>
              <button type="button" className="button button-ghost button-small" aria-label={`Dismiss the failure of ${image.name}`} onClick={props.onDismiss}>
                Dismiss
              </button>
            </div>
          </div>
        )}
        <label className={`draft-card-select${pinned || !saved ? ' draft-card-select-disabled' : ''}`}>
          <input type="checkbox" checked={selected && !pinned} disabled={pinned || !saved} onChange={props.onToggleSelect} aria-label={`Select ${image.name}`} />
          <span className="draft-card-name">{image.name}</span>
        </label>
        {saved && (
          <div className="draft-card-actions">
            {syncOn && (
              <button type="button" className={`button button-small ${pinned ? 'button-primary' : 'button-secondary'}`} aria-pressed={pinned} aria-label={`Pin style ${image.name}`} onClick={props.onPin}>
                <Icon name="paperclip" size={16} /> Pin style
              </button>
            )}
            <button type="button" className="button button-ghost button-small" aria-label={`View history of ${image.name}`} onClick={props.onHistory}>
              <Icon name="history" size={16} /> View history
            </button>
            <button type="button" className="button button-ghost button-small" aria-label={`Download ${image.name}`} onClick={props.onDownload}>
              <Icon name="download" size={16} /> Download
            </button>
            {image.previousUrl && (
              <button type="button" className="button button-ghost button-small" aria-label={`Redo ${image.name}`} disabled={busy} onClick={props.onRedo}>
                <Icon name="undo" size={16} /> Redo
              </button>
            )}
            <button type="button" className="button button-ghost button-small draft-card-remove" aria-label={`Remove ${image.name}`} disabled={busy} onClick={props.onRemove}>
              <Icon name="trash" size={16} /> Remove
            </button>
          </div>
        )}
      </div>
    </li>
  );
}
