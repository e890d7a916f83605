import { useState, type ReactElement } from 'react';
import { Dialog } from '../../components/Dialog';
import type { WorkspaceImage } from './draftImages';
import { draftVersions } from './draftVersions';

interface HistoryDialogProps {
  image: WorkspaceImage;
  onClose: () => void;
  /** restores a version; resolves true once it is the current one */
  onRestore: (versionUrl: string) => Promise<boolean>;
}

/**
 * The image history (001 section 2): up to 8 versions labelled Current, Previous, Back N. A click on a thumbnail
 * previews that version; any other than the current one can be restored.
 */
export function HistoryDialog({ image, onClose, onRestore }: HistoryDialogProps): ReactElement {
  const versions = draftVersions(image.currentUrl, image.history);
  const displayUrls = new Map<string, string>([[image.currentUrl, image.displayUrl], ...image.history.map((h) => [h.url, h.displayUrl] as [string, string])]);
  const [previewIndex, setPreviewIndex] = useState(0);
  const [busy, setBusy] = useState(false);
  const preview = versions[Math.min(previewIndex, versions.length - 1)];

  async function restore(): Promise<void> {
    setBusy(true);
    const ok = await onRestore(preview.url);
    setBusy(false);
    if (ok) onClose();
  }

  return (
    <Dialog title={`History of ${image.name}`} onClose={onClose} className="history-dialog">
      <figure className="history-preview">
        <img src={displayUrls.get(preview.url) ?? preview.url} alt={`${preview.label} version of ${image.name}`} />
        <figcaption>{preview.label}</figcaption>
      </figure>
      <ol className="history-list" aria-label="Versions">
        {versions.map((version, index) => (
          <li key={version.url}>
            <button
              type="button"
              className={`history-thumb${index === previewIndex ? ' history-thumb-active' : ''}`}
              aria-pressed={index === previewIndex}
              aria-label={`Preview ${version.label}`}
              onClick={() => setPreviewIndex(index)}
            >
              <img src={displayUrls.get(version.url) ?? version.url} alt="" loading="lazy" />
              <span>{version.label}</span>
            </button>
          </li>
        ))}
      </ol>
      <div className="form-actions">
        <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
          Close
        </button>
        <button type="button" className="button button-primary" disabled={busy || preview.current} onClick={() => void restore()}>
          {busy ? 'Restoring...' : preview.current ? 'Current version' : `Restore ${preview.label}`}
        </button>
      </div>
    </Dialog>
  );
}
