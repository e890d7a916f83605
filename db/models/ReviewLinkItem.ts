import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A pending item on a review link, in the link's order (its later versions are reached through the item). */
export class ReviewLinkItem extends BaseModel {
  static override tableName = 'review_link_items';
  static override idColumn = ['review_link_id', 'approval_id'];

  reviewLinkId!: string;
  approvalId!: string;
  position!: number;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['reviewLinkId', 'approvalId', 'position'],
    properties: { reviewLinkId: schema.uuid, approvalId: schema.uuid, position: schema.nonNegativeInt },
  };
}
