/**
 * The image edit workflow's contract (id `image-edit-<jobId>`): its state query (types live in domain/imageEdit.ts).
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery } from '@temporalio/workflow';
import type { ImageEditState } from '../imageEdit';

export const imageEditStateQuery = defineQuery<ImageEditState>('imageEditState');
