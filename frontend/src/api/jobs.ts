import type { ActivityJob, ActivityJobKind, ActivityJobList } from '../../../domain/jobs';
import { api } from './client';

export type { ActivityJob, ActivityJobKind, ActivityJobList, ActivityJobState } from '../../../domain/jobs';

/** The signed-in user's running and recent jobs; with `all` (admins) every user's. */
export async function fetchJobs(all: boolean): Promise<ActivityJobList> {
  const body = await api.get('jobs', { searchParams: all ? { all: '1' } : {} }).json<{ success: true } & ActivityJobList>();
  return { jobs: body.jobs, all: body.all };
}

export async function cancelJob(kind: ActivityJobKind, id: string): Promise<ActivityJob> {
  const body = await api.post(`jobs/${encodeURIComponent(kind)}/${encodeURIComponent(id)}/cancel`).json<{ success: true; job: ActivityJob }>();
  return body.job;
}

/** Starts the job again with the same inputs; answers the new job's id. */
export async function retryJob(kind: ActivityJobKind, id: string): Promise<{ id: string; warning?: string }> {
  const body = await api.post(`jobs/${encodeURIComponent(kind)}/${encodeURIComponent(id)}/retry`).json<{ success: true; job: { id: string; warning?: string } }>();
  return body.job;
}
