import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, StoredFileModel, schema, storageSchemaProperties } from './BaseModel';
import { Image } from './Image';
import { Project } from './Project';
import { Render } from './Render';

/** A 5-second clip made from a render or from an image, never both (clips_single_source). */
export class Clip extends StoredFileModel {
  static override tableName = 'clips';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['analysisData'];
  static override numericAttributes = ['duration', 'fileSize', 'storageSize'];

  id!: string;
  projectId!: string;
  workspaceId!: string;
  renderId!: string | null;
  imageId!: string | null;
  fileUrl!: string;
  fileName!: string;
  duration!: number | null;
  promptUsed!: string | null;
  movement!: string | null;
  cameraMovement!: string | null;
  style!: string | null;
  creditsUsed!: number;
  thumbnailUrl!: string | null;
  thumbnailPath!: string | null;
  aiDescription!: string | null;
  fileSize!: number | null;
  analysisData!: Record<string, unknown>;
  customName!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;
  render?: Render | null;
  image?: Image | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['projectId', 'workspaceId', 'fileUrl', 'fileName'],
    properties: {
      id: schema.uuid,
      projectId: schema.uuid,
      workspaceId: schema.uuid,
      renderId: schema.nullableUuid,
      imageId: schema.nullableUuid,
      fileUrl: schema.text,
      fileName: schema.nonBlank,
      duration: schema.nullableNonNegativeNumber,
      promptUsed: schema.nullableText,
      movement: schema.nullableText,
      cameraMovement: schema.nullableText,
      style: schema.nullableText,
      creditsUsed: schema.nonNegativeInt,
      thumbnailUrl: schema.nullableText,
      thumbnailPath: schema.nullableText,
      aiDescription: schema.nullableText,
      fileSize: { type: ['integer', 'null'], minimum: 0 },
      analysisData: schema.jsonObject,
      customName: schema.nullableText,
      ...storageSchemaProperties,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: { relation: BaseModel.BelongsToOneRelation, modelClass: Project, join: { from: 'clips.project_id', to: 'projects.id' } },
    render: { relation: BaseModel.BelongsToOneRelation, modelClass: Render, join: { from: 'clips.render_id', to: 'renders.id' } },
    image: { relation: BaseModel.BelongsToOneRelation, modelClass: Image, join: { from: 'clips.image_id', to: 'images.id' } },
  });
}
