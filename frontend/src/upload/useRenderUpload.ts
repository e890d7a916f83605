import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useState } from 'react';
import { forgetProjectContent } from '../api/projects';
import { currentUserAtom } from '../atoms/session';
import { showToastAtom } from '../atoms/toast';
import { sendRenderUpload } from './sendRender';
import { RESUMABLE_FROM_BYTES, sendRenderResumable } from './sendRenderResumable';
import { uploadInBatches, type UploadProgress } from './uploadQueue';
import { reportNeedsAttention, uploadReport, uploadReportToasts, type UploadReport } from './uploadReport';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Uploads renders into a project: batches of 3, retries, progress, and the summary toasts. Each file goes up exactly as
 * it was picked (up to 150 MB, no compression: the server keeps the original and derives thumbnails and working
 * copies itself). `onUploaded` runs after any file went up (the library and the project list refresh).
 */
export interface RenderUpload {
  progress: UploadProgress | null;
  upload: (files: File[]) => Promise<void>;
  /** the last run's files that were not added (already in the project, or refused and why), until dismissed */
  report: UploadReport | null;
  dismissReport: () => void;
  /** counts the finished upload runs (what was unfinished may have finished, or stopped) */
  runs: number;
}

export function useRenderUpload(projectId: string, onUploaded: () => void): RenderUpload {
  const user = useAtomValue(currentUserAtom);
  const toast = useSetAtom(showToastAtom);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [report, setReport] = useState<UploadReport | null>(null);
  const [runs, setRuns] = useState(0);
  const dismissReport = useCallback(() => setReport(null), []);
  useEffect(() => setReport(null), [projectId]);

  const upload = useCallback(
    async (files: File[]) => {
      if (!user) {
        toast({ kind: 'error', message: 'Please login to upload files' });
        return;
      }
      if (files.length === 0) return;
      setReport(null);
      setProgress({ percent: 0, completed: 0, total: files.length, currentFile: null });
      try {
        const summary = await uploadInBatches(files, {
          // the original as it is: both routes stream up to 150 MB, so nothing is redrawn in the browser
          prepare: async (file) => file,
          // large files resumably (a dropped connection or a reload continues), small ones in one request
          send: (file, onFraction, onNote) =>
            file.size >= RESUMABLE_FROM_BYTES
              ? sendRenderResumable({ file, projectId, userId: user.id }, onFraction, onNote)
              : sendRenderUpload({ file, projectId, userId: user.id }, onFraction),
          sleep,
          onProgress: setProgress,
        });
        const outcome = uploadReport(summary);
        for (const t of uploadReportToasts(outcome)) toast(t);
        setReport(reportNeedsAttention(outcome) ? outcome : null);
        if (outcome.added.length) {
          forgetProjectContent(projectId);
          onUploaded();
        }
      } finally {
        setProgress(null);
        setRuns((n) => n + 1);
      }
    },
    [user, projectId, toast, onUploaded],
  );

  return { progress, upload, report, dismissReport, runs };
}
