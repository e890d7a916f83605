import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, JobStatus, schema } from './BaseModel';
import { Project } from './Project';

/** History of AI image edits (prompt, source and result), one row per image-edit workflow. */
export class AiImageEdit extends BaseModel {
  static override tableName = 'ai_image_edits';
  static override jsonAttributes = ['editData'];

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
  error!: string | null;
  createdAt!: Date;

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
      error: schema.nullableText,
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
