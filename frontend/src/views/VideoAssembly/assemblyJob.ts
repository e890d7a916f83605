/** Pure rules for following an assembly job (spec 001 sections 4 and 9); the constants are the domain's. */
export {
  APPROVALS_REFRESH_AFTER_ASSEMBLY_MS,
  ASSEMBLY_MSG,
  ASSEMBLY_POLL_INTERVAL_MS,
  ASSEMBLY_POLL_MAX_ATTEMPTS,
  isFinalAssemblyStatus,
} from '../../../../domain/assembly';
import type { AssemblyJobView } from '../../../../domain/assembly';

export function clampProgress(progress: unknown): number {
  return typeof progress === 'number' && Number.isFinite(progress) ? Math.min(100, Math.max(0, Math.round(progress))) : 0;
}

/** The key under which the running job's id is kept, so a reload follows it again. */
export function jobKey(userId: string): string {
  return `rs:assembly:job:${userId}`;
}


/** The job panel's heading: the spec's words for one video, plural once the job made a video for each of several formats. */
export function assemblyJobHeading(job: Pick<AssemblyJobView, 'status' | 'result'>): string {
  if (job.status !== 'completed') return 'Assembling your video';
  return (job.result?.formats?.length ?? 0) > 1 ? 'Your videos are ready for approval' : 'Your video is ready for approval';
}
