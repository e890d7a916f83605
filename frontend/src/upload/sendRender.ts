import { UPLOAD_TIMEOUT_MS } from '../../../domain/constants';
import type { RenderUploadAnswer } from '../api/projects';
import { UploadAttemptError } from './retryPolicy';

export interface RenderUploadRequest {
  file: File;
  projectId: string;
  userId: string;
}

function serverMessage(xhr: XMLHttpRequest): string {
  try {
    const body = JSON.parse(xhr.responseText) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // not the API's JSON
  }
  return `Upload failed with status ${xhr.status}`;
}

/**
 * One attempt of POST /api/upload/renders (multipart: projectId, userId, file), with upload progress and a 30 s
 * timeout. XMLHttpRequest rather than fetch: it reports upload progress over HTTP/1.1.
 */
export function sendRenderUpload(request: RenderUploadRequest, onFraction: (fraction: number) => void, signal?: AbortSignal): Promise<RenderUploadAnswer> {
  return new Promise<RenderUploadAnswer>((resolve, reject) => {
    const form = new FormData();
    // fields first: the server checks the project before it stores a byte
    form.append('projectId', request.projectId);
    form.append('userId', request.userId);
    form.append('file', request.file, request.file.name);

    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/upload/renders');
    xhr.withCredentials = true;
    xhr.timeout = UPLOAD_TIMEOUT_MS;
    xhr.responseType = 'text';
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onFraction(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText) as RenderUploadAnswer);
        } catch {
          reject(new UploadAttemptError({ kind: 'http', status: xhr.status, message: 'Upload failed. Please try again.' }));
        }
        return;
      }
      reject(new UploadAttemptError({ kind: 'http', status: xhr.status, message: serverMessage(xhr) }));
    };
    xhr.onerror = () => reject(new UploadAttemptError({ kind: 'network', message: 'Upload failed. Please try again.' }));
    xhr.ontimeout = () => reject(new UploadAttemptError({ kind: 'timeout', message: 'Upload timed out. Please try again.' }));
    xhr.onabort = () => reject(new UploadAttemptError({ kind: 'aborted', message: 'Upload cancelled' }));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}
