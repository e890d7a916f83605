import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, StoredFileModel, schema, storageSchemaProperties } from './BaseModel';
import { Clip } from './Clip';
import { Project } from './Project';

export class Render extends StoredFileModel {
  static override tableName = 'renders';
  static override touchesUpdatedAt = true;
  static override numericAttributes = ['fileSize', 'storageSize'];

  id!: string;
  projectId!: string;
  workspaceId!: string;
  fileUrl!: string;
  fileName!: string;
  fileSize!: number;
  width!: number | null;
  height!: number | null;
  aspectRatio!: string;
  checksum!: string | null;
  thumbnailPath!: string | null;
  /** The 2048 px webp the item dialog shows (services/content/renderThumbnails.ts); null until made. */
  previewPath!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;
  clips?: Clip[];

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['projectId', 'workspaceId', 'fileUrl', 'fileName'],
    properties: {
      id: schema.uuid,
      projectId: schema.uuid,
      workspaceId: schema.uuid,
      fileUrl: schema.text,
      fileName: schema.nonBlank,
      fileSize: schema.nonNegativeInt,
      width: schema.nullableInt,
      height: schema.nullableInt,
      aspectRatio: schema.text,
      checksum: schema.nullableText,
      thumbnailPath: schema.nullableText,
      previewPath: schema.nullableText,
      ...storageSchemaProperties,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: { relation: BaseModel.BelongsToOneRelation, modelClass: Project, join: { from: 'renders.project_id', to: 'projects.id' } },
    clips: { relation: BaseModel.HasManyRelation, modelClass: Clip, join: { from: 'renders.id', to: 'clips.render_id' } },
  });
}
