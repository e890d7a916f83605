/**
 * The clip generation workflow's contract (id `clip-<jobId>`): input, state query, admission update, progress signal.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import type { WorkspaceInput } from './workspaceInput';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ClipJobOptions, ClipJobStatus, ClipResultSummary, ClipSourceKind } from '../clipGeneration';
import type { StoredFile } from '../approvals';

export interface ClipSource {
  kind: ClipSourceKind;
  id: string;
  bucket: StoredFile['bucket'];
  path: string;
  fileName: string;
}

/** `workspaceId`: the workspace the work is for and paid by (DESIGN.md "Teams (workspaces)"). */
export interface ClipGenerationInput extends WorkspaceInput {
  jobId: string;
  /**
   * The member who started it: written as the job's, the reservation's and the pending item's `created_by`. Absent in
   * histories from before workspaces, whose account was their starter's personal workspace (actorOf() falls back).
   */
  actorId?: string | null;
  projectId: string;
  source: ClipSource;
  options: ClipJobOptions;
  queues: ClipQueues;
}

/** Where the provider wait and the ffmpeg work run, and where the approval workflow runs (TASK_QUEUES unless a test routes them). */
export interface ClipQueues {
  media: string;
  approvals: string;
}

export interface ClipJobState {
  jobId: string;
  status: ClipJobStatus;
  progress: number;
  message: string;
  error: string | null;
  code: string | null;
  warning: string | null;
  result: ClipResultSummary | null;
  providerJobId: string | null;
}

/** The start call's answer: admitted (maybe with the rejection-streak warning) or refused with the rule's code. */
export type ClipAdmission =
  | { admitted: true; warning: string | null; code: string | null }
  | { admitted: false; error: string; code: string; status: number };

export interface ClipProgressReport {
  progress: number;
  message: string;
}

export const clipJobStateQuery = defineQuery<ClipJobState>('clipJobState');
/** Answers once the job was admitted or refused; the API sends it with the start (update-with-start). */
export const clipAdmissionUpdate = defineUpdate<ClipAdmission>('clipAdmission');
export const clipProgressSignal = defineSignal<[ClipProgressReport]>('clipProgress');

/** The hosted provider called back (verified, for the job's own provider request): its job has ended. */
export interface ClipProviderCallback {
  /** The provider's request id the callback was for. */
  requestId: string;
}
export const clipProviderCallbackSignal = defineSignal<[ClipProviderCallback]>('clipProviderCallback');

/**
 * Version marker of the clip workflow: from it, a hosted clip submitted with a callback waits for
 * `clipProviderCallbackSignal` and looks at the provider only every `fallbackPollMs`; histories recorded before it
 * (a timer between looks every poll interval) replay along that path.
 */
export const CLIP_PROVIDER_CALLBACK_PATCH = 'clip-provider-callback';

/**
 * Version marker of the clip workflow: from it, the submit writes the row's preparing and submitted steps itself, a
 * hosted clip is fetched, stored and finished by one media activity (`collectClipVideo`, which writes the stored and
 * finished steps), and the pending item is stored and its approval workflow started by one local activity
 * (`submitForApproval`) instead of an activity and a child workflow. Histories recorded before it replay along the
 * steps they took.
 */
export const CLIP_FEWER_STEPS_PATCH = 'clip-fewer-steps';

export function clipWorkflowId(jobId: string): string {
  return `clip-${jobId}`;
}
