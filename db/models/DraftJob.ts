import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, JobStatus, schema } from './BaseModel';
import { Draft } from './Draft';
import { DraftImage } from './DraftImage';

/** One model run on one draft image (one per image per dispatch), driven by workflow `workflowId`. */
export class DraftJob extends BaseModel {
  static override tableName = 'draft_jobs';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['usage', 'request'];

  id!: string;
  draftId!: string;
  draftImageId!: string;
  /** the owning workspace (its account) */
  workspaceId!: string;
  /** the member who started it; null once their account is deleted */
  createdBy!: string | null;
  modelId!: string;
  mode!: string;
  prompt!: string | null;
  status!: JobStatus;
  error!: string | null;
  workflowId!: string;
  /** Credits the run cost: 0 during the Beta, recorded all the same. */
  creditsCharged!: number;
  providerModel!: string | null;
  resultUrl!: string | null;
  /** What the run used (mode, model, size, duration ...). */
  usage!: Record<string, unknown>;
  /** What the dispatch asked (prompt as typed, references, pinned image), so Retry asks it again; null before it was kept. */
  request!: Record<string, unknown> | null;
  /** When the user dismissed this failed run's notice on its card. */
  failureDismissedAt!: Date | null;
  completedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  draft?: Draft;
  draftImage?: DraftImage;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['draftId', 'draftImageId', 'workspaceId', 'modelId', 'mode', 'workflowId'],
    properties: {
      id: schema.uuid,
      draftId: schema.uuid,
      draftImageId: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      modelId: schema.nonBlank,
      mode: schema.nonBlank,
      prompt: schema.nullableText,
      status: schema.jobStatus,
      error: schema.nullableText,
      workflowId: schema.nonBlank,
      creditsCharged: schema.nonNegativeInt,
      providerModel: schema.nullableText,
      resultUrl: schema.nullableText,
      usage: schema.jsonObject,
      request: schema.nullableJsonObject,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    draft: { relation: BaseModel.BelongsToOneRelation, modelClass: Draft, join: { from: 'draft_jobs.draft_id', to: 'drafts.id' } },
    draftImage: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: DraftImage,
      join: { from: 'draft_jobs.draft_image_id', to: 'draft_images.id' },
    },
  });
}
