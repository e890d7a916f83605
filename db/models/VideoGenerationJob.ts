import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, JobStatus, schema } from './BaseModel';
import { Image } from './Image';
import { Project } from './Project';
import { Render } from './Render';

/** A clip-generation job; the status endpoint falls back to this row once workflow `workflowId` has closed. */
export class VideoGenerationJob extends BaseModel {
  static override tableName = 'video_generation_jobs';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['options', 'result'];

  id!: string;
  /** the owning workspace (its account) */
  workspaceId!: string;
  /** the member who started it; null once their account is deleted */
  createdBy!: string | null;
  projectId!: string;
  renderId!: string | null;
  imageId!: string | null;
  status!: JobStatus;
  progress!: number;
  message!: string | null;
  error!: string | null;
  options!: Record<string, unknown>;
  result!: Record<string, unknown> | null;
  workflowId!: string;
  providerJobId!: string | null;
  /** when the provider's first verified callback for providerJobId came (hosted jobs with callbacks) */
  providerCalledBackAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;
  render?: Render | null;
  image?: Image | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'projectId', 'workflowId'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      projectId: schema.uuid,
      renderId: schema.nullableUuid,
      imageId: schema.nullableUuid,
      status: schema.jobStatus,
      progress: schema.progress,
      message: schema.nullableText,
      error: schema.nullableText,
      options: schema.jsonObject,
      result: schema.nullableJsonObject,
      workflowId: schema.nonBlank,
      providerJobId: schema.nullableText,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'video_generation_jobs.project_id', to: 'projects.id' },
    },
    render: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Render,
      join: { from: 'video_generation_jobs.render_id', to: 'renders.id' },
    },
    image: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Image,
      join: { from: 'video_generation_jobs.image_id', to: 'images.id' },
    },
  });
}
