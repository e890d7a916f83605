/**
 * The draft job workflow's contract (id `draft-job-<jobId>`): its state query (types live in domain/enhanceRenders.ts).
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery } from '@temporalio/workflow';
import type { DraftJobState } from '../enhanceRenders';

export const draftJobStateQuery = defineQuery<DraftJobState>('draftJobState');
