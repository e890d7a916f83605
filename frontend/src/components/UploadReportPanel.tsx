import type { ReactElement } from 'react';
import type { ContentItem } from '../api/projects';
import { countText } from './countText';
import { isUnfinishedUploadLimit } from '../../../domain/uploadLimits';
import { duplicateText, type UploadReport } from '../upload/uploadReport';
import { Icon } from './Icon';
import './UploadZone.css';

/** The id of the upload area's list of unfinished uploads (views/ContentLibrary/UnfinishedUploads.tsx). */
export const UNFINISHED_UPLOADS_ID = 'unfinished-uploads';

/** Brings that list into view. */
function showUnfinishedUploads(): void {
  const list = document.getElementById(UNFINISHED_UPLOADS_ID);
  list?.scrollIntoView({ block: 'start' });
  list?.focus();
}

interface UploadReportPanelProps {
  report: UploadReport;
  /** opens the project's existing item (its dialog) */
  onOpenItem: (item: ContentItem) => void;
  onDismiss: () => void;
}

/**
 * Below the upload area after a run that did not add every file: which files were already in the project (with the
 * way to the item that holds the same bytes) and which were refused, each with the server's reason. It stays until
 * dismissed or the next upload, unlike the toasts.
 */
export function UploadReportPanel({ report, onOpenItem, onDismiss }: UploadReportPanelProps): ReactElement {
  return (
    <section className="upload-report" aria-labelledby="upload-report-title">
      <header className="upload-report-head">
        <h2 id="upload-report-title">Upload results</h2>
        <button type="button" className="icon-button" aria-label="Dismiss upload results" onClick={onDismiss}>
          <Icon name="close" size={18} />
        </button>
      </header>
      {report.added.length > 0 && <p className="upload-report-added">{countText(report.added.length, 'file')} added to this project.</p>}
      {report.duplicates.length > 0 && (
        <div>
          <h3>Already in this project</h3>
          <ul className="upload-report-list" aria-label="Already in this project">
            {report.duplicates.map((d, i) => (
              <li key={`${d.name}:${i}`}>
                <span>{duplicateText(d)}.</span>{' '}
                <button type="button" className="link-button" onClick={() => onOpenItem(d.existing)}>
                  Open {d.existing.data.name || d.name}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {report.failed.length > 0 && (
        <div>
          <h3>Not uploaded</h3>
          <ul className="upload-report-list upload-report-failed" aria-label="Not uploaded">
            {report.failed.map((f, i) => (
              <li key={`${f.name}:${i}`}>
                <strong>{f.name}</strong>: {f.message}
                {isUnfinishedUploadLimit(f.message) && (
                  <>
                    {' '}
                    <button type="button" className="link-button" onClick={showUnfinishedUploads}>
                      Show unfinished uploads
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
