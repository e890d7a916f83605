import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { Draft } from './Draft';
import { DraftJob } from './DraftJob';

/** An image in a draft; `metadata` carries its version history. */
export class DraftImage extends BaseModel {
  static override tableName = 'draft_images';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['metadata'];

  id!: string;
  draftId!: string;
  name!: string;
  sourceUrl!: string;
  resolvedUrl!: string | null;
  sourceType!: string;
  orderIndex!: number;
  metadata!: Record<string, unknown>;
  createdAt!: Date;
  updatedAt!: Date;

  draft?: Draft;
  jobs?: DraftJob[];

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['draftId', 'name', 'sourceUrl'],
    properties: {
      id: schema.uuid,
      draftId: schema.uuid,
      name: schema.nonBlank,
      sourceUrl: schema.nonBlank,
      resolvedUrl: schema.nullableText,
      sourceType: schema.nonBlank,
      orderIndex: schema.nonNegativeInt,
      metadata: schema.jsonObject,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    draft: { relation: BaseModel.BelongsToOneRelation, modelClass: Draft, join: { from: 'draft_images.draft_id', to: 'drafts.id' } },
    jobs: { relation: BaseModel.HasManyRelation, modelClass: DraftJob, join: { from: 'draft_images.id', to: 'draft_jobs.draft_image_id' } },
  });
}
