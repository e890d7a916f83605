import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { Clip } from './Clip';
import { CompiledVideo } from './CompiledVideo';
import { GeneratedContent } from './GeneratedContent';
import { Image } from './Image';
import { Render } from './Render';

export class Project extends BaseModel {
  static override tableName = 'projects';
  static override touchesUpdatedAt = true;

  id!: string;
  workspaceId!: string;
  name!: string;
  address!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  renders?: Render[];
  images?: Image[];
  clips?: Clip[];
  compiledVideos?: CompiledVideo[];
  generatedContent?: GeneratedContent[];

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'name'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      name: { ...schema.nonBlank, maxLength: 200 },
      address: schema.nullableText,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    renders: { relation: BaseModel.HasManyRelation, modelClass: Render, join: { from: 'projects.id', to: 'renders.project_id' } },
    images: { relation: BaseModel.HasManyRelation, modelClass: Image, join: { from: 'projects.id', to: 'images.project_id' } },
    clips: { relation: BaseModel.HasManyRelation, modelClass: Clip, join: { from: 'projects.id', to: 'clips.project_id' } },
    compiledVideos: {
      relation: BaseModel.HasManyRelation,
      modelClass: CompiledVideo,
      join: { from: 'projects.id', to: 'compiled_videos.project_id' },
    },
    generatedContent: {
      relation: BaseModel.HasManyRelation,
      modelClass: GeneratedContent,
      join: { from: 'projects.id', to: 'generated_content.project_id' },
    },
  });
}
