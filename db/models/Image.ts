import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, StoredFileModel, schema, storageSchemaProperties } from './BaseModel';
import { Clip } from './Clip';
import { Project } from './Project';

export class Image extends StoredFileModel {
  static override tableName = 'images';
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
  originalPrompt!: string | null;
  refinedPrompt!: string | null;
  baseImageUrl!: string | null;
  format!: string;
  aspectRatio!: string | null;
  upscaled!: boolean;
  thumbnailPath!: string | null;
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
      originalPrompt: schema.nullableText,
      refinedPrompt: schema.nullableText,
      baseImageUrl: schema.nullableText,
      format: schema.text,
      aspectRatio: schema.nullableText,
      upscaled: { type: 'boolean' },
      thumbnailPath: schema.nullableText,
      ...storageSchemaProperties,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: { relation: BaseModel.BelongsToOneRelation, modelClass: Project, join: { from: 'images.project_id', to: 'projects.id' } },
    clips: { relation: BaseModel.HasManyRelation, modelClass: Clip, join: { from: 'images.id', to: 'clips.image_id' } },
  });
}
