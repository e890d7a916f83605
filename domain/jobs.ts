/**
 * The Activity view's jobs: one shape for every kind of job a user runs (Enhance Renders' model runs are `draft`), read from the job tables and, while a job
 * runs, from its workflow's query (services/generation/jobs.ts). Shared by the API and the browser.
 */
export const JOB_KINDS = ['clip', 'image-edit', 'export', 'assembly', 'draft'] as const;
export type ActivityJobKind = (typeof JOB_KINDS)[number];

export type ActivityJobState = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

export const RUNNING_JOB_STATES: readonly ActivityJobState[] = ['pending', 'processing'];

/** The member who started a job (DESIGN.md "Teams (workspaces)"): name from their profile, e-mail from their account. */
export interface JobStarter {
  userId: string;
  name: string;
  email: string;
}

export interface ActivityJob {
  kind: ActivityJobKind;
  id: string;
  workflowId: string;
  /** The account the job belongs to: its workspace (a personal workspace's id is its owner's user id). */
  userId: string;
  /** Only in an admin's list of every account's jobs: the starter's e-mail, else the account owner's. */
  userEmail?: string;
  /** Who started the job; null when nobody is recorded (a system run) or the user was deleted. */
  startedBy: JobStarter | null;
  projectId: string | null;
  /** The project's name; for a draft job, the draft's. */
  projectName: string | null;
  /** What the job makes, in words: "Zoom In, YouTube 16:9 from harbour.jpg". */
  item: string;
  state: ActivityJobState;
  progress: number;
  message: string;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  /** Wall time so far (running) or in all (finished), ms; null when unknown. */
  durationMs: number | null;
  /** Credits the job reserves; charged only when its item is approved, given back when it fails or is cancelled. */
  cost: number;
  canCancel: boolean;
  canRetry: boolean;
  /** Admins only: the run in the Temporal Web UI. */
  temporalUrl?: string;
  /** Admins only, for a job started with tracing on: the id of its trace (OpenTelemetry). */
  traceId?: string;
  /** With traceId, when a trace viewer is configured (TRACE_VIEWER_URL): the trace in it. */
  traceUrl?: string;
}

export interface ActivityJobList {
  jobs: ActivityJob[];
  /** Whether this list holds every user's jobs (admins asking with ?all=1). */
  all: boolean;
}

export const JOB_MESSAGES = {
  notFound: 'Job not found',
  notCancellable: 'This job cannot be cancelled: only a running clip can be.',
  notRetryable: 'This job cannot be retried: only a failed or cancelled clip can be.',
} as const;

export const JOB_ERROR_CODES = {
  notFound: 'JOB_NOT_FOUND',
  notCancellable: 'JOB_NOT_CANCELLABLE',
  notRetryable: 'JOB_NOT_RETRYABLE',
} as const;

export function isRunningJobState(state: ActivityJobState): boolean {
  return RUNNING_JOB_STATES.includes(state);
}

/** `<base>/namespaces/<ns>/workflows/<workflowId>`: where an operator sees the run. */
export function temporalRunUrl(baseUrl: string, namespace: string, workflowId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** `<viewer><traceId>`: the trace viewer's address of a trace (TRACE_VIEWER_URL ends where the trace id goes). */
export function traceViewerLink(viewerUrl: string, traceId: string): string {
  return `${viewerUrl}${encodeURIComponent(traceId)}`;
}
