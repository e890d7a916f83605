import { api } from './client';

/** One unfinished resumable upload (GET /api/uploads/unfinished). */
export interface UnfinishedUpload {
  id: string;
  projectId: string;
  projectName: string;
  fileName: string;
  size: number;
  received: number;
  startedAt: string;
  expiresAt: string;
}

/** The workspace's unfinished uploads: the ones that count towards its limit, in any project. */
export async function fetchUnfinishedUploads(): Promise<UnfinishedUpload[]> {
  const body = await api.get('uploads/unfinished').json<{ success: true; uploads: UnfinishedUpload[] }>();
  return body.uploads;
}

/** Cancels one (the tus protocol's DELETE): its slot is free at once, and its bytes go. */
export async function cancelUnfinishedUpload(id: string): Promise<void> {
  await api.delete(`uploads/tus/${encodeURIComponent(id)}`, { headers: { 'Tus-Resumable': '1.0.0' }, retry: 0 });
}
