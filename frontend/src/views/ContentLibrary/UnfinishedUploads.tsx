import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { cancelUnfinishedUpload, fetchUnfinishedUploads, type UnfinishedUpload } from '../../api/unfinishedUploads';
import { showToastAtom } from '../../atoms/toast';
import { ProgressBar } from '../../components/ProgressBar';
import { UNFINISHED_UPLOADS_ID } from '../../components/UploadReportPanel';
import { formatFileSize } from '../../tryIt/tryItText';


const started = (iso: string) => new Date(iso).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });

/**
 * Below the upload area: the workspace's uploads that stopped before their last byte (a closed tab, a reload), which
 * hold its unfinished-upload budget until they finish, are cancelled or expire. This project's can be resumed by
 * picking the same file again (the upload continues from the bytes the server holds); any can be cancelled. Read
 * again after each upload run (`version`).
 */
export function UnfinishedUploads({ projectId, version, canEdit, onPickFile }: { projectId: string; version: number; canEdit: boolean; onPickFile: () => void }): ReactElement | null {
  const toast = useSetAtom(showToastAtom);
  const [uploads, setUploads] = useState<UnfinishedUpload[] | null>(null);
  const [cancelling, setCancelling] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setUploads(await fetchUnfinishedUploads());
    } catch {
      // the library itself says when the server cannot be reached; this list stays as it was
    }
  }, []);
  useEffect(() => void load(), [load, projectId, version]);

  async function cancel(upload: UnfinishedUpload): Promise<void> {
    setCancelling(upload.id);
    try {
      await cancelUnfinishedUpload(upload.id);
      toast({ kind: 'success', message: `Cancelled the upload of ${upload.fileName}` });
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, `Could not cancel the upload of ${upload.fileName}`) });
    } finally {
      setCancelling(null);
      await load();
    }
  }

  if (!uploads || uploads.length === 0) return null;
  return (
    <section className="upload-report unfinished-uploads" id={UNFINISHED_UPLOADS_ID} aria-labelledby="unfinished-uploads-title" tabIndex={-1}>
      <header className="upload-report-head">
        <h2 id="unfinished-uploads-title">Unfinished uploads</h2>
      </header>
      <p className="muted">
        These stopped before their last byte. Pick the same file again to continue where it stopped, or cancel it. Each is removed a day after it started.
      </p>
      <ul className="upload-report-list" aria-label="Unfinished uploads">
        {uploads.map((u) => {
          const percent = u.size > 0 ? (u.received / u.size) * 100 : 0;
          const here = u.projectId === projectId;
          return (
            <li key={u.id} className="unfinished-upload">
              <div>
                <strong>{u.fileName}</strong> {!here && <span className="muted">in {u.projectName}</span>}
                <div className="muted">
                  {formatFileSize(u.received)} of {formatFileSize(u.size)} ({Math.floor(percent)} %), started {started(u.startedAt)}
                </div>
                <ProgressBar label={`${u.fileName} uploaded`} percent={percent} thin />
              </div>
              {canEdit && (
                <div className="unfinished-upload-actions">
                  {here && (
                    <button type="button" className="button button-secondary" onClick={onPickFile}>
                      Resume
                    </button>
                  )}
                  <button type="button" className="button button-secondary" disabled={cancelling === u.id} onClick={() => void cancel(u)}>
                    {cancelling === u.id ? 'Cancelling…' : 'Cancel upload'}
                  </button>
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
