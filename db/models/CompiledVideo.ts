import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, StoredFileModel, schema, storageSchemaProperties } from './BaseModel';
import { Project } from './Project';

/** An assembled social video; clip_ids is a PostgreSQL uuid[] (not jsonb). */
export class CompiledVideo extends StoredFileModel {
  static override tableName = 'compiled_videos';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['editingData'];
  static override numericAttributes = ['duration', 'storageSize'];

  id!: string;
  projectId!: string;
  workspaceId!: string;
  fileUrl!: string;
  fileName!: string;
  duration!: number | null;
  clipIds!: string[];
  editingData!: Record<string, unknown>;
  thumbnailPath!: string | null;
  /** The assembly workflow that made it (one row per run) and its job. */
  workflowId!: string | null;
  assemblyJobId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['projectId', 'workspaceId', 'fileUrl', 'fileName'],
    properties: {
      id: schema.uuid,
      projectId: schema.uuid,
      workspaceId: schema.uuid,
      fileUrl: schema.text,
      fileName: schema.nonBlank,
      duration: schema.nullableNonNegativeNumber,
      clipIds: schema.uuidArray,
      editingData: schema.jsonObject,
      thumbnailPath: schema.nullableText,
      workflowId: schema.nullableText,
      assemblyJobId: schema.nullableUuid,
      ...storageSchemaProperties,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'compiled_videos.project_id', to: 'projects.id' },
    },
  });
}
