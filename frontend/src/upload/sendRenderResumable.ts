import { Upload, type DetailedError } from 'tus-js-client';
import type { RenderUploadAnswer } from '../api/projects';
import { UploadAttemptError } from './retryPolicy';
import type { RenderUploadRequest } from './sendRender';

/** Files from this size go up through the resumable (tus) route; smaller ones as one multipart request. */
export const RESUMABLE_FROM_BYTES = 1024 * 1024;
/** One PATCH per 8 MB (the server's S3 part size): a dropped connection costs at most that much again. */
export const RESUMABLE_CHUNK_BYTES = 8 * 1024 * 1024;
/** Waits before the tus client tries again after a dropped connection (then the upload queue's own retries). */
export const RESUMABLE_RETRY_DELAYS_MS = [1000, 3000, 5000, 10000, 20000];
export const RESUMING_NOTE = 'Resuming…';

function serverMessage(body: string | undefined, status: number | undefined): string {
  try {
    const parsed = JSON.parse(body ?? '') as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not the API's JSON
  }
  return status ? `Upload failed with status ${status}` : 'Upload failed. Please try again.';
}

/** Status codes worth another try: none from 4xx except a conflict (offset mismatch) or a locked upload. */
export function shouldRetryStatus(status: number | undefined): boolean {
  if (status === undefined || status === 0) return true;
  if (status === 409 || status === 423) return true;
  return status >= 500;
}

/** Same file (name, type, size, modification time) into the same project: the upload a reload can resume. */
export function resumeFingerprint(file: { name: string; type: string; size: number; lastModified?: number }, projectId: string): string {
  return ['rs-tus', projectId, file.name, file.type, file.size, file.lastModified ?? 0].join(':');
}

/**
 * One resumable upload over tus (/api/uploads/tus): the browser remembers the upload's address, so a dropped
 * connection or a reload continues from the last byte the server holds; `onNote` says when it is resuming.
 * Answers the same JSON as POST /api/upload/renders.
 */
export function sendRenderResumable(
  request: RenderUploadRequest,
  onFraction: (fraction: number) => void,
  onNote: (note: string | null) => void = () => undefined,
): Promise<RenderUploadAnswer> {
  const { file, projectId } = request;
  return new Promise<RenderUploadAnswer>((resolve, reject) => {
    const upload = new Upload(file, {
      endpoint: '/api/uploads/tus',
      chunkSize: RESUMABLE_CHUNK_BYTES,
      retryDelays: RESUMABLE_RETRY_DELAYS_MS,
      metadata: { projectId, filename: file.name, filetype: file.type },
      fingerprint: async () => resumeFingerprint(file, projectId),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onProgress: (sent, total) => {
        if (total > 0) onFraction(sent / total);
      },
      onChunkComplete: () => onNote(null),
      onShouldRetry: (err: DetailedError) => {
        const retry = shouldRetryStatus(err.originalResponse?.getStatus());
        if (retry) onNote(RESUMING_NOTE);
        return retry;
      },
      onSuccess: ({ lastResponse }) => {
        onNote(null);
        try {
          resolve(JSON.parse(lastResponse.getBody()) as RenderUploadAnswer);
        } catch {
          // the render was stored, but this response was lost (e.g. after a reload at the last byte): the library re-reads
          resolve({ success: true } as RenderUploadAnswer);
        }
      },
      onError: (err) => {
        onNote(null);
        const res = (err as DetailedError).originalResponse;
        const status = res?.getStatus();
        reject(
          new UploadAttemptError(
            status && status >= 400 ? { kind: 'http', status, message: serverMessage(res?.getBody(), status) } : { kind: 'network', message: 'Upload failed. Please try again.' },
          ),
        );
      },
    });
    void upload
      .findPreviousUploads()
      .then((previous) => {
        const latest = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
        if (latest) {
          onNote(RESUMING_NOTE);
          upload.resumeFromPreviousUpload(latest);
        }
      })
      .catch(() => undefined)
      .finally(() => upload.start());
  });
}
