import type { AestheticChatState } from '../../../domain/assembly';
import type { MusicTrackView } from '../../../domain/music';
import { WORKSPACE_HEADER } from '../../../domain/workspaceRoles';
import { api } from './client';

export type { MusicTrackView };

const path = (workspaceId: string, ...rest: string[]) => ['workspaces', encodeURIComponent(workspaceId), 'music', ...rest].join('/');

/** The workspace's music tracks, newest first, each with a signed link to play it. */
export async function fetchMusicTracks(workspaceId: string): Promise<MusicTrackView[]> {
  return (await api.get(path(workspaceId)).json<{ success: true; tracks: MusicTrackView[] }>()).tracks;
}

export async function renameMusicTrack(workspaceId: string, trackId: string, name: string): Promise<MusicTrackView> {
  return (await api.patch(path(workspaceId, encodeURIComponent(trackId)), { json: { name } }).json<{ success: true; track: MusicTrackView }>()).track;
}

export async function deleteMusicTrack(workspaceId: string, trackId: string): Promise<void> {
  await api.delete(path(workspaceId, encodeURIComponent(trackId))).json();
}

/** A refused or failed upload, with the server's message. */
export class MusicUploadError extends Error {}

/**
 * Uploads `file` as a track (the raw body; the server probes it), reporting progress as a fraction. XMLHttpRequest
 * rather than fetch: it reports upload progress over HTTP/1.1.
 */
export function uploadMusicTrack(workspaceId: string, file: File, onFraction: (fraction: number) => void, signal?: AbortSignal): Promise<MusicTrackView> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/${path(workspaceId)}?name=${encodeURIComponent(file.name)}`);
    xhr.withCredentials = true;
    xhr.responseType = 'text';
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.setRequestHeader(WORKSPACE_HEADER, workspaceId);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onFraction(event.loaded / event.total);
    };
    xhr.onload = () => {
      let body: { track?: MusicTrackView; error?: unknown } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        // not the API's JSON
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.track) resolve(body.track);
      else reject(new MusicUploadError(typeof body.error === 'string' ? body.error : `Upload failed with status ${xhr.status}`));
    };
    xhr.onerror = () => reject(new MusicUploadError('Upload failed. Please try again.'));
    xhr.onabort = () => reject(new MusicUploadError('Upload cancelled'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

export interface ProjectMusicInput {
  trackId: string | null;
  offsetSeconds?: number;
  volume?: number;
  fadeInSeconds?: number;
  fadeOutSeconds?: number;
}

/** The music picker's choice for the project's assemblies; answers the chat's state with the new editing config. */
export async function setProjectMusic(projectId: string, input: ProjectMusicInput): Promise<AestheticChatState> {
  return api.put(`projects/${encodeURIComponent(projectId)}/aesthetic/music`, { json: input }).json<AestheticChatState>();
}
