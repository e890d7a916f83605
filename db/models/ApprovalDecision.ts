import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One member's approval of a pending item (activities/approvals.ts): one per person and item. */
export class ApprovalDecision extends BaseModel {
  static override tableName = 'approval_decisions';
  static override idColumn = ['approval_id', 'user_id'];

  approvalId!: string;
  userId!: string;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['approvalId', 'userId'],
    properties: { approvalId: schema.uuid, userId: schema.uuid },
  };
}
