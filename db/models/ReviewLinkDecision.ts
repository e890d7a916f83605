import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A guest's decision through a review link (services/review/guestDecisions.ts) and what it came to: counted under the
 * item's policy, the item's next version started, or the studio asked because its rules refused.
 */
export class ReviewLinkDecision extends BaseModel {
  static override tableName = 'review_link_decisions';

  id!: string;
  reviewLinkId!: string;
  approvalId!: string;
  decision!: 'approve' | 'request_changes';
  outcome!: 'approved' | 'approval_counted' | 'changes_requested' | 'studio_asked';
  guestName!: string;
  guestEmail!: string;
  request!: string | null;
  refusal!: string | null;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['reviewLinkId', 'approvalId', 'decision', 'outcome', 'guestName', 'guestEmail'],
    properties: {
      id: schema.uuid,
      reviewLinkId: schema.uuid,
      approvalId: schema.uuid,
      decision: { type: 'string', enum: ['approve', 'request_changes'] },
      outcome: { type: 'string', enum: ['approved', 'approval_counted', 'changes_requested', 'studio_asked'] },
      guestName: schema.nonBlank,
      guestEmail: schema.nonBlank,
      request: schema.nullableText,
      refusal: schema.nullableText,
    },
  };
}
