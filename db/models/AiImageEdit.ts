import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, JobStatus, schema } from './BaseModel';
import { Project } from './Project';

/**
 * One row per image-edit workflow: its status while it runs (written pending at the start, kept current by the
 * workflow at each step) and its history once it ended (prompt, source, result or refusal).
 */
export class AiImageEdit extends BaseModel {
  static override tableName = 'ai_image_edits';
  static override jsonAttributes = ['editData', 'result'];
  static override touchesUpdatedAt = true;

  id!: string;
  /** the owning workspace (its account) */
  workspaceId!: string;
  /** the member who started it; null once their account is deleted */
  createdBy!: string | null;
  projectId!: string | null;
  workflowId!: string | null;
  originalImageUrl!: string;
  editedImageUrl!: string | null;
  editPrompt!: string;
  editData!: Record<string, unknown>;
  status!: JobStatus;
  /** 0-100 while it runs; 100 once it completed */
  progress!: number;
  /** the step it is at ('Generating image' ...), the approval notice, or the failure's words */
  message!: string | null;
  error!: string | null;
  /** the refusal's code when the start rule or a step said no (INSUFFICIENT_CREDITS ...) */
  errorCode!: string | null;
  /** the completed run's ImageEditResult (domain/imageEdit.ts) */
  result!: Record<string, unknown> | null;
  /** the hosted provider's job the run waits for now (the edit's, then the upscale's), with callbacks */
  providerJobId!: string | null;
  /** when the first verified callback for providerJobId came (or the fallback look found it done) */
  providerCalledBackAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'originalImageUrl', 'editPrompt'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      projectId: schema.nullableUuid,
      workflowId: schema.nullableText,
      originalImageUrl: schema.nonBlank,
      editedImageUrl: schema.nullableText,
      editPrompt: schema.nonBlank,
      editData: schema.jsonObject,
      status: schema.jobStatus,
      progress: { type: 'integer', minimum: 0, maximum: 100 },
      message: schema.nullableText,
      error: schema.nullableText,
      errorCode: schema.nullableText,
      result: { type: ['object', 'null'] },
      providerJobId: schema.nullableText,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'ai_image_edits.project_id', to: 'projects.id' },
    },
  });
}
