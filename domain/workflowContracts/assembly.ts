/**
 * The assembly workflow's contract (id `assembly-<jobId>`): input, state query, admission update, progress signal.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import type { WorkspaceInput } from './workspaceInput';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AssemblyFormat, AssemblyJobStatus, AssemblyPlatform, AssemblyResultSummary, EditingConfig } from '../assembly';
import type { JunctionOverride } from '../assemblyTimeline';

/** `workspaceId`: the workspace the work is for and paid by (DESIGN.md "Teams (workspaces)"). */
export interface AssemblyInput extends WorkspaceInput {
  jobId: string;
  /**
   * The member who started it (assembly_jobs.created_by, the approval's created_by). Absent in histories from before
   * workspaces, whose account was the owner's personal workspace (its id is the owner's user id).
   */
  actorId?: string | null;
  projectId: string;
  platform: AssemblyPlatform;
  /** In the order they play. */
  clipIds: string[];
  /** The chat's editing config (or the default) when the job was started. */
  editing: EditingConfig;
  transitions?: JunctionOverride[];
  /**
   * The formats to render from the one edit, each its own video and approval item (issue 44 item 4). Absent (and in
   * histories from before formats): the platform's own.
   */
  formats?: AssemblyFormat[];
  queues: AssemblyQueues;
}

/** Where the ffmpeg work runs, and where the approval workflow runs (TASK_QUEUES unless a test routes them). */
export interface AssemblyQueues {
  media: string;
  approvals: string;
}

export interface AssemblyJobState {
  jobId: string;
  status: AssemblyJobStatus;
  progress: number;
  message: string;
  error: string | null;
  code: string | null;
  result: AssemblyResultSummary | null;
}

/** The start call's answer: admitted, or refused with the rule's text, code and HTTP status. */
export type AssemblyAdmission = { admitted: true } | { admitted: false; error: string; code: string; status: number };

export interface AssemblyProgressReport {
  progress: number;
  message: string;
}

export const assemblyJobStateQuery = defineQuery<AssemblyJobState>('assemblyJobState');
/** Answers once the job was admitted or refused; the API sends it with the start (update-with-start). */
export const assemblyAdmissionUpdate = defineUpdate<AssemblyAdmission>('assemblyAdmission');
export const assemblyProgressSignal = defineSignal<[AssemblyProgressReport]>('assemblyProgress');

export { assemblyWorkflowId } from '../assembly';
