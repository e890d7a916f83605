import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One step of the version chain (services/content/lineage.ts): `itemId` was made from `sourceId` by `workflowId`. */
export class ContentLineage extends BaseModel {
  static override tableName = 'content_lineage';

  id!: string;
  workspaceId!: string;
  itemKind!: string;
  itemId!: string;
  sourceKind!: string;
  sourceId!: string;
  position!: number;
  workflowId!: string | null;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'itemKind', 'itemId', 'sourceKind', 'sourceId'],
    properties: {
      workspaceId: schema.uuid,
      itemKind: schema.nonBlank,
      itemId: schema.uuid,
      sourceKind: schema.nonBlank,
      sourceId: schema.uuid,
      position: schema.nonNegativeInt,
      workflowId: schema.nullableText,
    },
  };
}
