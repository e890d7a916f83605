import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, StoredFileModel, schema, storageSchemaProperties } from './BaseModel';
import { Project } from './Project';
import { Render } from './Render';

export const GENERATED_CONTENT_TYPES = ['video', 'render', 'clip', 'image'] as const;
export type GeneratedContentType = (typeof GENERATED_CONTENT_TYPES)[number];

export class GeneratedContent extends StoredFileModel {
  static override tableName = 'generated_content';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['generationData'];
  static override numericAttributes = ['storageSize'];

  id!: string;
  projectId!: string;
  workspaceId!: string;
  renderId!: string | null;
  contentType!: GeneratedContentType;
  fileUrl!: string;
  fileName!: string;
  promptStyle!: string | null;
  aiCaption!: string | null;
  creditsUsed!: number;
  generationData!: Record<string, unknown>;
  createdAt!: Date;
  updatedAt!: Date;

  project?: Project;
  render?: Render | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['projectId', 'workspaceId', 'contentType', 'fileUrl', 'fileName'],
    properties: {
      id: schema.uuid,
      projectId: schema.uuid,
      workspaceId: schema.uuid,
      renderId: schema.nullableUuid,
      contentType: { type: 'string', enum: [...GENERATED_CONTENT_TYPES] },
      fileUrl: schema.text,
      fileName: schema.nonBlank,
      promptStyle: schema.nullableText,
      aiCaption: schema.nullableText,
      creditsUsed: schema.nonNegativeInt,
      generationData: schema.jsonObject,
      ...storageSchemaProperties,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'generated_content.project_id', to: 'projects.id' },
    },
    render: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Render,
      join: { from: 'generated_content.render_id', to: 'renders.id' },
    },
  });
}
