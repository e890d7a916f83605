import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, JobStatus, schema } from './BaseModel';
import { Project } from './Project';

/** Assembly of 1-5 clips into a platform video; clip_ids is a PostgreSQL uuid[] (not jsonb). */
export class AssemblyJob extends BaseModel {
  static override tableName = 'assembly_jobs';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['result', 'options'];

  id!: string;
  /** the owning workspace (its account) */
  workspaceId!: string;
  /** the member who started it; null once their account is deleted */
  createdBy!: string | null;
  projectId!: string;
  platform!: string;
  clipIds!: string[];
  status!: JobStatus;
  progress!: number;
  message!: string | null;
  error!: string | null;
  result!: Record<string, unknown> | null;
  /** The editing config and the timeline the job renders (domain/assemblyTimeline.ts). */
  options!: Record<string, unknown>;
  workflowId!: string;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'projectId', 'platform', 'clipIds', 'workflowId'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      projectId: schema.uuid,
      platform: schema.nonBlank,
      clipIds: { ...schema.uuidArray, minItems: 1, maxItems: 5 },
      status: schema.jobStatus,
      progress: schema.progress,
      message: schema.nullableText,
      error: schema.nullableText,
      result: schema.nullableJsonObject,
      options: schema.jsonObject,
      workflowId: schema.nonBlank,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'assembly_jobs.project_id', to: 'projects.id' },
    },
  });
}
