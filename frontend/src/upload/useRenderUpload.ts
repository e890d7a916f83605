import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useState } from 'react';
import { forgetProjectContent } from '../api/projects';
import { currentUserAtom } from '../atoms/session';
import { showToastAtom } from '../atoms/toast';
import { compressForUpload } from './canvasCompression';
import { beyondApiRoute, strictImageError } from './fileChecks';
import { sendRenderUpload } from './sendRender';
import { RESUMABLE_FROM_BYTES, sendRenderResumable } from './sendRenderResumable';
import { uploadInBatches, uploadSummaryToasts, type UploadProgress } from './uploadQueue';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Uploads renders into a project: compress large images, batches of 3, retries, progress, and the summary toasts.
 * `onUploaded` runs after any file went up (the library and the project list refresh).
 */
export function useRenderUpload(projectId: string, onUploaded: () => void): { progress: UploadProgress | null; upload: (files: File[]) => Promise<void> } {
  const user = useAtomValue(currentUserAtom);
  const toast = useSetAtom(showToastAtom);
  const [progress, setProgress] = useState<UploadProgress | null>(null);

  const upload = useCallback(
    async (files: File[]) => {
      if (!user) {
        toast({ kind: 'error', message: 'Please login to upload files' });
        return;
      }
      if (files.length === 0) return;
      setProgress({ percent: 0, completed: 0, total: files.length, currentFile: null });
      try {
        const summary = await uploadInBatches(files, {
          prepare: async (file) => {
            const ready = await compressForUpload(file);
            // still too large for the API route after compression: only a JPG or PNG may go on (000 section 5)
            const problem = beyondApiRoute(ready) ? strictImageError(ready) : null;
            if (problem) {
              toast({ kind: 'error', message: problem });
              throw new Error(problem);
            }
            return ready;
          },
          // large files resumably (a dropped connection or a reload continues), small ones in one request
          send: (file, onFraction, onNote) =>
            file.size >= RESUMABLE_FROM_BYTES
              ? sendRenderResumable({ file, projectId, userId: user.id }, onFraction, onNote)
              : sendRenderUpload({ file, projectId, userId: user.id }, onFraction),
          sleep,
          onProgress: setProgress,
        });
        for (const t of uploadSummaryToasts(summary)) toast(t);
        if (summary.succeeded.length) {
          forgetProjectContent(projectId);
          onUploaded();
        }
      } finally {
        setProgress(null);
      }
    },
    [user, projectId, toast, onUploaded],
  );

  return { progress, upload };
}
